"""hopbench's LinearRAG against what the authors' code returned (issue #56).

fixtures/official_musique_bfs.json holds, for the 100 MuSiQue subset questions, the top-10 and
PPR scores that DEEP-PolyU/LinearRAG at 4ecfa25 returned with retriever=linearrag_musique's
settings (BFS activation) on hopbench's inputs: the same passages ("idx:" prefix), spaCy NER
and all-MiniLM-L6-v2 vectors (benchmarks/parity/linearrag/compare.py --fixture). Their code
orders entities and sentences by Python set iteration (PYTHONHASHSEED); the fixture records
that run's orders as indices of hopbench's own (entities and sentences in order of first
appearance, as run_corpus_ner gives them; the fixture was remapped from the sorted sentence order
a warm NER cache used to give), and the test rebuilds the graph with them.
The top-10 must be identical, except for passages swapped inside an exact tie of their
scores; scores agree to 1e-9 (igraph's prpack against hopbench's PPR kernel).

The questions' and question entities' vectors are made as compare.py made them
(benchmarks/parity/linearrag/question_vectors.py: each alone, uncached, at the fixture's
thread count): a text encoded alone changes in its last bits with torch's thread count, and
the shared embedding cache may hold a vector made at another one (#56: the fixture then
failed on a fresh cache, where pytest's default threads made them).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from benchmarks.parity.linearrag.question_vectors import question_side_vectors

from hopbench.retrieve.base import Services
from hopbench.retrieve.linearrag.graph import build_graph
from hopbench.retrieve.linearrag.ner import CorpusEntities
from hopbench.retrieve.linearrag.retriever import LinearRAGRetriever

FIXTURE = Path(__file__).parent / "fixtures" / "official_musique_bfs.json"
CONFIG = Path(__file__).parents[3] / "configs" / "retriever" / "linearrag_musique.yaml"
SCORE_TOL = 1e-9  # PPR scores: theirs (prpack) against hopbench's kernel
TIE_TOL = 1e-12  # scores closer than this are one tie


def musique_settings() -> dict:
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(CONFIG))
    keys = ("max_iterations", "iteration_threshold", "passage_ratio", "top_k_sentence")
    return {k: cfg[k] for k in keys}


def vector_table(r: LinearRAGRetriever) -> dict:
    """compare.py's table: one vector per text, the graph's first (passages, entities,
    sentences), so a question entity equal to a graph entity gets the graph's vector."""
    table: dict = {}
    g = r.own_graph
    for texts, vecs in (
        (g.passage_texts, r.passage_emb),
        (g.entities, r.entity_emb),
        (g.sentences, r.sentence_emb),
    ):
        for t, v in zip(texts, vecs):
            table.setdefault(t, v)
    return table


def with_their_orders(r: LinearRAGRetriever, fixture: dict, table: dict) -> None:
    own = r.own_graph
    ents = [own.entities[i] for i in fixture["entity_order"]]
    sents = [own.sentences[i] for i in fixture["sentence_order"]]
    sentence_entities = dict(r.corpus_ner_output.sentence_entities)
    for s, order in fixture["sentence_entities"].items():
        sentence_entities[own.sentences[int(s)]] = [own.entities[e] for e in order]
    ner = CorpusEntities(r.corpus_ner_output.passage_entities, sentence_entities)
    entity_sentences = {
        own.entities[int(e)]: [own.sentences[s] for s in order]
        for e, order in fixture["entity_sentences"].items()
    }
    graph = build_graph(
        own.passage_texts,
        ner,
        adjacent_edges=True,
        entity_order=ents,
        sentence_order=sents,
        entity_sentence_order=entity_sentences,
    )
    stack = lambda texts: np.stack([table[t] for t in texts])  # noqa: E731
    r.use_index(
        graph,
        passage_embeddings=stack(graph.passage_texts),
        entity_embeddings=stack(graph.entities),
        sentence_embeddings=stack(graph.sentences),
        passage_ids=r.passage_ids,
    )


def same_up_to_ties(ours: list, theirs: list, their_scores: list, our_scores: list) -> bool:
    np.testing.assert_allclose(our_scores, their_scores, rtol=0, atol=SCORE_TOL)
    s = np.asarray(their_scores)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a == b:
            continue
        tied = (i > 0 and abs(s[i] - s[i - 1]) <= TIE_TOL) or (
            i + 1 < len(s) and abs(s[i] - s[i + 1]) <= TIE_TOL
        )
        if not tied:
            return False
    return True


@pytest.mark.slow
def test_top10_and_scores_equal_the_authors(musique_dataset, encoder):
    fixture = json.loads(FIXTURE.read_text())
    assert fixture["commit"].startswith("4ecfa25") and len(fixture["questions"]) == 100
    threads = fixture["question_vector_threads"]
    r = LinearRAGRetriever(**musique_settings(), ner_model=fixture["ner_model"])
    services = Services(dataset=musique_dataset, encoder=encoder)
    r.prepare(None, services)
    table = vector_table(r)
    with_their_orders(r, fixture, table)
    by_id = {q.id: q for q in musique_dataset.questions}
    differing = []
    for row in fixture["questions"]:
        q = by_id[row["id"]]
        mentions = r.question_entities(q.text)
        alone = question_side_vectors(encoder, mentions, threads)
        vecs = np.stack([table.get(m, v) for m, v in zip(mentions, alone)]) if mentions else None
        q_vec = table.get(q.text, question_side_vectors(encoder, [q.text], threads)[0])
        res = r.rank(np.asarray(q_vec, dtype=np.float32), mentions, vecs, 10)
        if not same_up_to_ties(res.passage_ids, row["top"], row["scores"], res.scores):
            differing.append(row["id"])
    assert differing == []
