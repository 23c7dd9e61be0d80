"""LinearRAG's NER rules and graph (their src/ner.py and LinearRAG.index, 4ecfa25)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from hopbench.retrieve.linearrag.graph import adjacent_pairs, build_graph, prefixed_texts
from hopbench.retrieve.linearrag.ner import CorpusEntities, corpus_entities, question_entities


def ent(text, label, sent):
    return SimpleNamespace(text=text, label_=label, sent=SimpleNamespace(text=sent))


def test_ner_skips_numbers_and_merges_sentences_of_equal_text():
    s1, s2 = "Paris is in France.", "It has 2 million people."
    docs = [
        SimpleNamespace(
            ents=[
                ent("Paris", "GPE", s1),
                ent("France", "GPE", s1),
                ent("2 million", "CARDINAL", s2),
            ]
        ),
        SimpleNamespace(ents=[ent("France", "GPE", s1), ent("first", "ORDINAL", s1)]),
    ]
    out = corpus_entities(docs)
    assert out.passage_entities == [["Paris", "France"], ["France"]]
    assert out.sentence_entities == {s1: ["Paris", "France"]}


def test_question_entities_are_lower_cased_once_in_order():
    doc = SimpleNamespace(
        ents=[
            ent("Lyon", "GPE", ""),
            ent("Apple", "ORG", ""),
            ent("LYON", "GPE", ""),
            ent("3", "CARDINAL", ""),
        ]
    )
    assert question_entities(doc) == ["lyon", "apple"]


def test_adjacent_edges_follow_the_numeric_prefix_not_the_list_order():
    texts = ["10:c", "2:b", "x no prefix", "1:a"]
    assert adjacent_pairs(texts) == [(3, 1), (1, 0)]
    assert prefixed_texts(["a", "b"]) == ["0:a", "1:b"]


def test_entity_passage_weights_are_case_sensitive_shares_of_counts():
    texts = prefixed_texts(["Ann met Bob. Ann left.", "bob and Bob met Cy"])
    ner = CorpusEntities(
        [["Ann", "Bob"], ["Bob", "Cy"]],
        {"Ann met Bob.": ["Ann", "Bob"], "Ann left.": ["Ann"], "bob and Bob met Cy": ["Bob", "Cy"]},
    )
    g = build_graph(texts, ner, adjacent_edges=True)
    assert g.entities == ["Ann", "Bob", "Cy"]
    a = g.adjacency.toarray()
    e, p = 3, 2
    assert a.shape == (e + p, e + p)
    np.testing.assert_allclose(a[e + 0, 0], 2 / 3, rtol=0, atol=1e-15)  # Ann: 2 of 3 mentions
    np.testing.assert_allclose(a[e + 0, 1], 1 / 3, rtol=0, atol=1e-15)
    np.testing.assert_allclose(a[e + 1, 1], 0.5, rtol=0, atol=1e-15)  # "bob" is not "Bob"
    assert a[e + 0, e + 1] == 1.0 and a[e + 1, e + 0] == 1.0  # passage 0 - passage 1
    np.testing.assert_array_equal(a, a.T)
    assert g.sentence_entities == [[0, 1], [0], [1, 2]]
    assert g.entity_sentences == [[0, 1], [0, 2], [2]]
    assert build_graph(texts, ner, adjacent_edges=False).adjacency[e, e + 1] == 0


def test_given_orders_only_renumber():
    texts = prefixed_texts(["Ann met Bob."])
    ner = CorpusEntities([["Ann", "Bob"]], {"Ann met Bob.": ["Bob", "Ann"]})
    g = build_graph(texts, ner, entity_order=["Bob", "Ann"])
    assert g.entities == ["Bob", "Ann"]
    assert g.sentence_entities == [[0, 1]]
