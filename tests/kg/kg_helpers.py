"""Test helpers: graph equality, an extractor that dies half-way, a scripted LLM client."""

from __future__ import annotations

import json

import numpy as np


def assert_same_graph(a, b) -> None:
    assert a.entity_names == b.entity_names
    assert a.entity_labels == b.entity_labels
    assert a.entity_descriptions == b.entity_descriptions
    assert a.passage_ids == b.passage_ids
    assert a.fact_relation == b.fact_relation
    for name in ("fact_subject", "fact_object", "fact_passage", "passage_title_entity"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    for name in (
        "entity_embeddings",
        "description_embeddings",
        "passage_embeddings",
        "fact_embeddings",
    ):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=1e-6)
    for name in ("relation", "synonym", "context"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape
        assert (x != y).nnz == 0, name
    assert a.failed_passages == b.failed_passages


class Killed(RuntimeError):
    """Stands in for a process killed in the middle of extraction."""


class DiesAfter:
    """Wraps an extractor; raises after `n` passages, as a kill would."""

    def __init__(self, inner, n: int):
        self.inner, self.n = inner, n
        self.name = inner.name

    def identity(self) -> dict:
        return self.inner.identity()

    def extract(self, passages):
        for i, rec in enumerate(self.inner.extract(passages)):
            if i == self.n:
                raise Killed(f"killed after {self.n} passages")
            yield rec


class Counting:
    """Wraps an extractor and records how many passages it was asked for."""

    def __init__(self, inner):
        self.inner, self.name, self.asked = inner, inner.name, []

    def identity(self) -> dict:
        return self.inner.identity()

    def extract(self, passages):
        passages = list(passages)
        self.asked.append(len(passages))
        return self.inner.extract(passages)


class ScriptedLLM:
    """Plays back raw answers like a real client: parse JSON, retry a bounded number of times, then raise.

    `answers(schema_name, user_text) -> list[str]` gives the raw text of successive attempts.
    """

    identity = "scripted-llm-v1"

    def __init__(self, answers, max_attempts: int = 3):
        self.answers = answers
        self.max_attempts = max_attempts
        self.calls = []

    def chat_json(self, messages, schema, *, schema_name, max_tokens=512):
        user = messages[-1]["content"]
        self.calls.append((schema_name, user))
        attempts = self.answers(schema_name, user)
        last = None
        for raw in attempts[: self.max_attempts]:
            try:
                out = json.loads(raw)
            except json.JSONDecodeError as exc:
                last = exc
                continue
            if all(k in out for k in schema.get("required", [])):
                return out
            last = ValueError(f"missing {schema.get('required')}")
        raise LLMFormatError(f"no valid JSON after {self.max_attempts} attempts: {last}")


class LLMFormatError(RuntimeError):
    """Same name as the project client's error for an answer that stays invalid after retries."""


class LLMUnavailableError(RuntimeError):
    """Same name as the project client's error for an unreachable server."""
