"""Hybrid: reciprocal rank fusion by hand, composed of the project's dense and BM25 retrievers,
and one retriever, so one row of the report."""

from __future__ import annotations

import csv
import json
from importlib.metadata import version

import pytest

from hopbench.cli import main as cli_main
from hopbench.harness.compose import build_retriever, load_config
from hopbench.harness.runner import execute
from hopbench.retrieve.base import Services
from hopbench.retrieve.baselines.bm25 import BM25Retriever
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.baselines.hybrid import HybridRetriever, reciprocal_rank_fusion


def test_fusion_equals_a_hand_computation():
    """a: 1/61 + 1/63 = 0.0322664585, c: 1/63 + 1/61 (the same sum: a first, its dense rank is
    better), b: 1/62 = 0.0161290323, d: 1/62 (b first: d is not in the first list)."""
    got = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d", "a"]], 60)
    assert [pid for pid, _ in got] == ["a", "c", "b", "d"]
    assert [s for _, s in got] == pytest.approx(
        [0.0322664585, 0.0322664585, 0.0161290323, 0.0161290323], abs=1e-10
    )
    # k = 0 and a list the other lacks: e 1/1 = 1.0, f 1/2 + 1/1 = 1.5, g 1/3 = 0.333...
    got = reciprocal_rank_fusion([["e", "f", "g"], ["f"]], 0)
    assert got == [("f", 1.5), ("e", 1.0), ("g", pytest.approx(1 / 3, abs=1e-12))]
    assert reciprocal_rank_fusion([[], []], 60) == []


def test_hybrid_fuses_the_projects_dense_and_bm25_rankings(musique_sub, encoder):
    """Depth 6 of 18 passages: each list is cut, so some passages are in one list only."""
    services = Services(dataset=musique_sub, encoder=encoder)
    hybrid = HybridRetriever(depth=6, k1=1.2)
    assert isinstance(hybrid.dense, DenseRetriever) and hybrid.bm25.k1 == 1.2
    hybrid.prepare(None, services)
    dense, bm25 = DenseRetriever(), BM25Retriever(k1=1.2)
    dense.prepare(None, services)
    bm25.prepare(None, services)
    one_list_only = 0
    for q in musique_sub.questions:
        d, b = dense.retrieve(q, 6).passage_ids, bm25.retrieve(q, 6).passage_ids
        got = hybrid.retrieve(q, 5)
        expected = reciprocal_rank_fusion([d, b], 60)[:5]
        assert got.passage_ids == [pid for pid, _ in expected]
        assert got.scores == [s for _, s in expected]
        assert got.trace["dense_rank"] == [
            d.index(p) + 1 if p in d else None for p in got.passage_ids
        ]
        assert got.trace["bm25_rank"] == [
            b.index(p) + 1 if p in b else None for p in got.passage_ids
        ]
        one_list_only += len(set(d) ^ set(b))
    assert one_list_only > 0
    assert len(hybrid.retrieve(musique_sub.questions[0], 12).passage_ids) == 12  # k above depth


def test_the_config_holds_the_fusion_and_bm25_settings():
    cfg = load_config(["retriever=hybrid", "retriever.rrf_k=10", "retriever.stemmer=none"])
    assert (cfg.retriever.rrf_k, cfg.retriever.depth, cfg.retriever.k1) == (10, 1000, 1.5)
    r = build_retriever(cfg)
    assert isinstance(r, HybridRetriever) and r.rrf_k == 10
    assert r.bm25.terms.terms("running") == ["running"]  # the BM25 setting reached BM25


def test_hybrid_is_one_retriever_and_one_row(tmp_path, data_dir, cache_dir):
    runs, results = tmp_path / "runs", tmp_path / "results"
    base = [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={runs}",
        f"paths.cache_dir={cache_dir}",
        "dataset=musique_sub",
        "progress=false",
    ]
    metrics = execute(load_config([*base, "retriever=hybrid"]))
    assert metrics["retriever"] == "hybrid" and metrics["n_questions"] == 3
    method = metrics["method"]
    assert method["family"] == "hybrid" and method["params_diff"] == {}
    assert {"rrf_k": 60, "depth": 1000, "k1": 1.5, "b": 0.75, "stemmer": "english"}.items() <= (
        method["defaults"].items()
    )
    packages = metrics["software"]["packages"]  # the versions that compute its numbers
    assert packages["bm25s"] == version("bm25s") and packages["PyStemmer"] == version("PyStemmer")
    assert [p.name for p in (runs / "musique_sub").iterdir()] == ["hybrid"]
    assert [p for p in (runs / "musique_sub" / "hybrid").iterdir() if p.is_dir()] == [
        runs / "musique_sub" / "hybrid" / metrics["config_hash"]
    ]
    assert (
        cli_main(
            ["report", "--runs-dir", str(runs), "--results-dir", str(results), "--no-reference"]
        )
        == 0
    )
    rows = list(csv.DictReader((results / "leaderboard.csv").open()))
    assert [(r["dataset"], r["retriever"]) for r in rows] == [("musique_sub", "hybrid")]
    assert json.loads(rows[0]["method"])["family"] == "hybrid"
