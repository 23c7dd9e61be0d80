"""The prompts only QASA uses (hopbench.llm.prompts holds the shared ones)."""
