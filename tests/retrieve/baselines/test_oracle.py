"""Oracle retriever: gold passages first in hop order, then dense results, no duplicates, k respected."""

from __future__ import annotations

from hopbench.data import load_dataset
from hopbench.retrieve.base import Services
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.baselines.oracle import OracleRetriever


def test_gold_first_then_dense_fill(data_dir, encoder):
    ds = load_dataset(
        "musique_sub",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )
    services = Services(dataset=ds, encoder=encoder)
    oracle, dense = OracleRetriever(), DenseRetriever()
    oracle.prepare(None, services)
    dense.prepare(None, services)
    for q in ds.questions:
        gold = q.gold_passage_ids
        assert 2 <= len(gold) <= 4
        r = oracle.retrieve(q, 5)
        assert r.passage_ids[: len(gold)] == gold
        assert len(r.passage_ids) == len(set(r.passage_ids)) == 5
        expected_fill = [p for p in dense.retrieve(q, 10).passage_ids if p not in gold][
            : 5 - len(gold)
        ]
        assert r.passage_ids[len(gold) :] == expected_fill
        assert r.trace == {"n_gold_first": len(gold)}
        assert oracle.retrieve(q, 1).passage_ids == gold[:1]
