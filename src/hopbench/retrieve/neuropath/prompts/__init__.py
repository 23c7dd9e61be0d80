"""The prompts only NeuroPath uses (hopbench.llm.prompts holds the shared ones)."""
