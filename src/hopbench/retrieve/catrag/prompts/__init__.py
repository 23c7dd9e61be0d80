"""The prompts only CatRAG uses (hopbench.llm.prompts holds the shared ones)."""
