"""QASA's question-entity prompt: reply parsing, and `prompts: official` reading a checkout."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.qasa.prompts import qasa_entities as qe


def test_pairs_collapse_whitespace_keep_first_name_and_default_the_hint():
    reply = {
        "entities": [
            {"name": " UHF ", "search_hint": "uhf  film"},
            {"name": "uhf", "search_hint": "x"},
            {"name": "Titanic", "search_hint": " "},
            {"name": "", "search_hint": "y"},
        ]
    }
    assert qe.pairs(reply) == [("UHF", "uhf film"), ("Titanic", "Titanic")]


def test_official_template_is_read_from_the_users_checkout(tmp_path):
    src = tmp_path / qe.OFFICIAL_FILE
    src.parent.mkdir(parents=True)
    src.write_text('X = 1\nQUERY_ENTITY_PROMPT = """Find them.\n\nQuestion: {question}"""\n')
    t = qe.official_template(tmp_path)
    assert qe.official_messages(t, "Who?") == [
        {"role": "user", "content": "Find them.\n\nQuestion: Who?"}
    ]


def test_official_template_missing_or_malformed_is_one_clear_error(tmp_path):
    with pytest.raises(HopbenchError, match="cannot read"):
        qe.official_template(tmp_path)
    src = tmp_path / qe.OFFICIAL_FILE
    src.parent.mkdir(parents=True)
    src.write_text('QUERY_ENTITY_PROMPT = """no field"""\n')
    with pytest.raises(HopbenchError, match="no QUERY_ENTITY_PROMPT"):
        qe.official_template(tmp_path)
