"""CatRAG: its retriever, its edge-weighting kernels and the prompts only it uses."""
