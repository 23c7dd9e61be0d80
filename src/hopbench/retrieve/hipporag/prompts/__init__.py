"""The prompts only HippoRAG uses (hopbench.llm.prompts holds the shared ones)."""
