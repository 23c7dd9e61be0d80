"""The shared QASA mention step (hopbench.retrieve.qasa.mentions): settings are checked once for
both retrievers, spaCy mentions are plain strings, LLM pairs become `Mention`s with normalised
names (first of each name kept)."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa.mentions import QasaMentions
from hopbench.retrieve.question import question_mentions


def test_settings_are_checked():
    with pytest.raises(HopbenchError, match="mentions must be spacy or llm"):
        QasaMentions("keywords")
    with pytest.raises(HopbenchError, match="prompts"):
        QasaMentions("spacy", prompts="theirs")
    with pytest.raises(HopbenchError, match="needs an LLM"):
        QasaMentions("llm", llm_name=None, retriever="spreading_activation_neo4j")
    with pytest.raises(HopbenchError, match="official_src"):
        QasaMentions("llm", llm_name="server", prompts="official")
    assert not QasaMentions().needs_llm and QasaMentions("llm", llm_name="server").needs_llm


def test_spacy_mentions_are_plain_strings(musique_sub):
    q = musique_sub.questions[0]
    assert QasaMentions()(q, None, {}) == question_mentions(q.text)


def test_llm_pairs_become_mentions(musique_sub, scripted_llm):
    llm = scripted_llm(
        {
            "entities": [
                {"name": "President", "search_hint": "president of the society"},
                {"name": "president", "search_hint": "again"},
            ]
        }
    )
    trace: dict = {}
    got = QasaMentions("llm", llm_name="server")(musique_sub.questions[0], llm, trace)
    assert got == [rules.Mention("president", "president of the society")]
    assert trace["mention_source"] == "llm" and len(trace["llm_calls"]) == 1
