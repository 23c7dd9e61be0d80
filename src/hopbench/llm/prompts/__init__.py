"""Prompt templates: each module holds the messages and the JSON schema of one LLM task."""

from __future__ import annotations


def chat(system: str, *turns: str) -> list[dict]:
    """[system, user, assistant, ..., user]: the worked examples as alternating user and
    assistant turns, then the task's own user turn. One shape for every few-shot prompt, so
    the fixed prefix (system + examples) is byte-identical across calls and stays in the
    server's KV cache."""
    if len(turns) % 2 != 1:
        raise ValueError(f"a chat ends with the task's user turn: got {len(turns)} turns")
    roles = ("user", "assistant")
    return [
        {"role": "system", "content": system},
        *({"role": roles[i % 2], "content": t} for i, t in enumerate(turns)),
    ]
