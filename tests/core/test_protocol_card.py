"""The protocol card's fields: flat columns, the id over the shared fields, which differences
flag a pair and which are the method's own, and what a complete card needs."""

from __future__ import annotations

import math

import numpy as np

from hopbench.core.protocol_card import (
    CARD_ID,
    COLUMN_PREFIX,
    FIELDS,
    NONE,
    card_columns,
    card_id,
    coverage,
    differences,
    flat_card,
    from_columns,
    missing_fields,
)
from tests.helpers.protocol_cards import nested_card as card


def test_flat_card_names_every_field_and_the_columns_carry_them_with_an_id():
    flat = flat_card(card())
    assert set(flat) == set(FIELDS)
    assert flat["llm_roles"] == "retrieval+reader" and flat["graph_synonym_edges"] == 2
    cols = card_columns(card())
    assert cols[COLUMN_PREFIX + "embedder_digest"] == "sha256:" + "e" * 64
    assert from_columns(cols) == flat and len(cols[CARD_ID]) == 12


def test_a_run_without_a_card_has_no_columns_but_the_empty_id():
    assert flat_card(None) == {} and card_columns(None) == {CARD_ID: None}
    assert from_columns({"dataset": "x"}) == {}
    assert missing_fields({}) == ["(no card)"]


def test_the_id_is_the_protocol_not_the_method():
    base = flat_card(card())
    other_graph = flat_card(card(graph={"label": "openie", "entities": 99}))
    other_roles = flat_card(card(llm={**card()["llm"], "roles": ["reader"]}))
    assert card_id(base) == card_id(other_graph) == card_id(other_roles)
    assert card_id(base) != card_id(flat_card(card(retrieval_depth=5)))


def test_differences_name_the_shared_fields_and_skip_the_methods_own():
    base = flat_card(card())
    assert differences(base, base) == []
    mine = flat_card(
        card(
            corpus_digest="sha256:other",
            embedder={"name": "bge", "digest": "sha256:b"},
            graph=None,
            reader_context="1024 tokens",
        )
    )
    assert differences(mine, base) == [
        "corpus_digest",
        "embedder",
        "embedder_digest",
        "reader_context",
    ]


def test_an_llm_or_reader_on_one_side_only_is_the_method():
    dense = flat_card(card(llm=None, reader_context=None, graph=None))
    assert dense["llm"] == NONE and dense["reader_context"] == NONE
    assert differences(flat_card(card()), dense) == []
    other_model = flat_card(card(llm={"name": "gpt", "digest": "identity:x", "roles": ["reader"]}))
    assert differences(other_model, flat_card(card())) == ["llm", "llm_digest"]


def test_table_cells_compare_as_values():
    """A parquet round trip turns counts into floats or numpy scalars and gaps into NaN."""
    flat = flat_card(card())
    read_back = {**flat, "n_questions": 1000.0, "retrieval_depth": np.int64(10)}
    assert differences(read_back, flat) == [] and card_id(read_back) == card_id(flat)
    no_llm = {**flat_card(card(llm=None)), "llm_digest": math.nan}
    assert differences(no_llm, flat) == []


def test_a_complete_card_has_every_shared_field_and_the_digests_of_what_it_used():
    assert missing_fields(flat_card(card())) == []
    assert missing_fields(flat_card(card(embedder={"name": "m", "digest": None}))) == [
        "embedder_digest"
    ]
    assert missing_fields(
        flat_card(card(llm={"name": "m", "digest": None, "roles": ["reader"]}))
    ) == ["llm_digest"]
    half_graph = card(graph={"label": "spacy", "entities": 3})
    assert "graph_facts" in missing_fields(flat_card(half_graph))
    assert missing_fields(flat_card(card(llm=None, graph=None))) == []


def test_coverage_reads_scored_of_asked():
    assert coverage(flat_card(card())) == "863/1000"
    assert coverage({"n_questions": 5.0, "n_retrieval_scored": 4.0}) == "4/5"
    assert coverage({"n_questions": 5}) is None


def test_a_pair_on_a_subset_of_the_questions_is_not_flagged_for_it():
    """100 questions against a 1000-question baseline: paired on the shared 100 (n_paired), marked
    † in the paper tables; the same count on other questions or gold is a protocol difference."""
    base = flat_card(card())
    subset = flat_card(card(n_questions=100, n_retrieval_scored=86, question_set_digest="sha256:s"))
    assert differences(subset, base) == []
    other_gold = flat_card(card(question_set_digest="sha256:other"))
    assert differences(other_gold, base) == ["question_set_digest"]
