"""benchmarks/parity/linearrag/worker.py's steps (#58) on a stand-in for their LinearRAG: the
worker runs only in the authors' venv, so these check what it reads from their objects."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from benchmarks.parity.linearrag.worker import per_question_rows, their_orders, vertex_texts


class _Graph:
    def __init__(self, names):
        self.vs = {"name": names}

    def personalized_pagerank(self, reset):
        return list(np.asarray(reset) / 2)


class _Rag:
    """Two entities (e1, e2) and two passages; question "dense" skips the graph search."""

    def __init__(self):
        self.entity_embedding_store = SimpleNamespace(
            texts=["beta", "alpha"], hash_id_to_text={"e1": "alpha", "e2": "beta"}
        )
        self.sentence_embedding_store = SimpleNamespace(texts=["s."], hash_id_to_text={"s1": "s."})
        self.passage_embedding_store = SimpleNamespace(hash_id_to_text={"p1": "P1", "p2": "P2"})
        self.sentence_hash_id_to_entity_hash_ids = {"s1": ["e2", "e1"]}
        self.entity_hash_id_to_sentence_hash_ids = {"e1": ["s1"], "e2": ["s1"]}
        self.graph = _Graph(["e1", "e2", "p1", "p2"])

    def calculate_entity_scores(self, q):
        return np.array([0.5, 0.0, 0.0, 0.0]), {"e1": ("alpha", 0.5, 1)}

    calculate_entity_scores_vectorized = calculate_entity_scores  # their other activation

    def calculate_passage_scores(self, q):
        return np.array([0.0, 0.0, 0.25, 0.0])

    def retrieve(self, questions):
        out = []
        for q in questions:
            if q != "dense":
                w = self.calculate_entity_scores(q)[0] + self.calculate_passage_scores(q)
                self.graph.personalized_pagerank(w)
            out.append({"sorted_passage": ["P2", "P1"], "sorted_passage_scores": [0.75, 0.5]})
        return out


def test_orders_are_their_set_orders_as_texts():
    o = their_orders(_Rag())
    assert o["entities"] == ["beta", "alpha"] and o["sentences"] == ["s."]
    assert o["sentence_entities"] == {"s.": ["beta", "alpha"]}
    assert o["entity_sentences"] == {"alpha": ["s."], "beta": ["s."]}


def test_a_row_per_question_with_the_graph_internals_only_when_it_searched():
    rag = _Rag()
    ent_text = rag.entity_embedding_store.hash_id_to_text
    graph, dense = per_question_rows(rag, ["q", "dense"], ent_text, {"P1": 0, "P2": 1})
    assert dense == {"top": [1, 0], "scores": [0.75, 0.5]}
    assert graph["top"] == [1, 0] and graph["activated"] == {"alpha": [0.5, 1]}
    assert graph["ppr"] == {"e1": 0.25, "e2": 0.0, "p1": 0.125, "p2": 0.0}
    assert graph["reset"] == {"e1": 0.5, "p1": 0.25}


def test_vertex_names_map_to_entity_texts_and_passage_indices():
    rag = _Rag()
    names = vertex_texts(rag, rag.entity_embedding_store.hash_id_to_text, {"P1": 0, "P2": 1})
    assert names == {
        "e1": ("entity", "alpha"),
        "e2": ("entity", "beta"),
        "p1": ("passage", 0),
        "p2": ("passage", 1),
    }
