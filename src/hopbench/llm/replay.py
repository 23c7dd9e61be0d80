"""An LLM client that answers from recorded reply texts, in order (parity checks, CI fixtures).

A parity benchmark feeds the same LLM replies to hopbench and to an authors' implementation;
replaying them through this client reruns hopbench's side without a server. It implements
`chat` (raw text) and `chat_json` (parsed); a request beyond the recording raises.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from hopbench.core.errors import HopbenchError


class ReplayLLM:
    def __init__(self, texts: list[str | None] | None = None) -> None:
        self.texts = list(texts or [])
        self.requests: list[list[dict]] = []

    def load(self, texts: list[str | None]) -> None:
        """The replies of the next question, in the order they were requested."""
        self.texts = list(texts)

    def chat(
        self, messages, *, schema=None, schema_name="response", max_tokens=None, temperature=None
    ):
        self.requests.append(messages)
        if not self.texts:
            raise HopbenchError(f"replay: no recorded reply left for a '{schema_name}' request")
        text = self.texts.pop(0)
        return SimpleNamespace(
            text=text or "",
            cached=True,
            latency_s=0.0,
            error=None,
            usage={"prompt_tokens": 0, "completion_tokens": 0},
        )

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        return json.loads(self.chat(messages, schema_name=schema_name).text)
