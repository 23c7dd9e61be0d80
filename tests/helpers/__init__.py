"""Helpers shared by several test folders, not tests themselves: fake servers on 127.0.0.1.

    scripted_llm_server     an OpenAI-compatible /v1/chat/completions server answering from a script
    misbehaving_llm_server  a raw TCP server that answers HTTP badly (trickled, oversized bodies)
    embedding_server        an OpenAI-compatible /v1/embeddings server computing local MiniLM vectors

Helpers used by one folder only stay beside its tests (tests/kg/kg_helpers.py,
tests/retrieve/qasa/sa_oracle.py, tests/graphdb/concurrent_export.py: a child-process script).
"""
