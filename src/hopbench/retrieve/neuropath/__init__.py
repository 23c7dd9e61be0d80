"""NeuroPath: its retriever, the reference reply rules, its coreference kernel and the
prompts only it uses."""
