"""The real 18-passage MuSiQue sub-corpus, its spaCy graph and the run services (built once)."""

from __future__ import annotations

import json

import pytest

from hopbench.retrieve.base import Services
from tests.helpers.synthetic_graphs import title_mention_graph


@pytest.fixture
def services(musique_sub, encoder):
    s = Services(dataset=musique_sub, encoder=encoder)
    s.encode_questions(musique_sub.questions)
    return s


@pytest.fixture(scope="module")
def musique_services(musique_dataset, encoder):
    """Services over the 100-question MuSiQue subset, its questions encoded once per module."""
    s = Services(dataset=musique_dataset, encoder=encoder)
    s.encode_questions(musique_dataset.questions)
    return s


class ScriptedLLM:
    """Replies with the given JSON objects in turn and records the prompts (tests only)."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.prompts: list = []

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        self.prompts.append(messages)
        reply = self.replies.pop(0)
        if trace is not None:
            trace.append({"schema": schema_name, "scripted": True})
        return reply

    def chat(
        self, messages, *, schema=None, schema_name="response", max_tokens=None, temperature=None
    ):
        """Raw-text replies: a dict is sent as its JSON text, a string as is."""
        import json
        from types import SimpleNamespace

        self.prompts.append(messages)
        reply = self.replies.pop(0)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return SimpleNamespace(
            text=text,
            cached=False,
            latency_s=0.0,
            error=None,
            usage={"prompt_tokens": 0, "completion_tokens": 0},
        )


@pytest.fixture
def scripted_llm():
    """The ScriptedLLM class (for test modules that would rather not import conftest)."""
    return ScriptedLLM


@pytest.fixture(scope="session")
def musique_mention_graph(data_dir):
    """Title-mention graph of the 1,890-passage MuSiQue subset corpus (about 3.5k nodes): the
    real graph the kernel tests of every method folder share (tests/conftest.py's
    `musique_graph` is the knowledge graph, which the other retrieve tests read)."""
    corpus = json.loads((data_dir / "musique" / "musique_train_corpus.json").read_text())
    return title_mention_graph([p["title"] for p in corpus], [p["text"] for p in corpus])
