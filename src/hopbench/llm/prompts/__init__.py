"""Prompt templates: each module holds the messages and the JSON schema of one LLM task."""
