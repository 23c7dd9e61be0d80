"""The prompts only QAFD uses (hopbench.llm.prompts holds the shared ones)."""
