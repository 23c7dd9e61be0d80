"""Questions in blocks (issue #59): which runs get them, how a block's time is shared out, and a
whole run with `question_batch` giving the rows, the hash and the resume of the one-question loop."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.question_blocks import (
    QUESTION_BATCH,
    answer_block,
    batches,
    question_batch_counts,
    run_blocks,
)
from hopbench.harness.run_store import RunStore
from hopbench.harness.runner import execute
from hopbench.retrieve.base import Retrieval, Retriever
from hopbench.retrieve.baselines.dense import DenseRetriever


class _Looping(Retriever):
    def retrieve(self, question, k):
        return Retrieval([question.id], [1.0])


class _Blocked(_Looping):
    exact_batches = True

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds, self.blocks = seconds, []

    def retrieve_batch(self, questions, k):
        self.blocks.append([q.id for q in questions])
        time.sleep(self.seconds)
        return [self.retrieve(q, k) for q in questions]


def _question(i: int):
    return SimpleNamespace(
        id=f"q{i}",
        text=f"question {i}",
        answers=[],
        gold_passage_ids=[f"q{i}"],
        gold_complete=True,
        kind="qa",
        label=None,
        meta={},
    )


def test_blocks_only_for_a_proven_batched_path_without_an_llm():
    cfg = {"question_batch": 8}
    assert batches(cfg, None, None, _Blocked()) == 8
    assert batches(cfg, object(), None, _Blocked()) == 1  # an LLM: the one-question loop
    assert batches(cfg, None, object(), _Blocked()) == 1  # a reader
    assert batches(cfg, None, None, _Looping()) == 1  # the base class's loop: nothing shared
    unproven = type("Unproven", (_Blocked,), {"exact_batches": False})
    assert batches(cfg, None, None, unproven()) == 1
    inherited = type("Inherited", (_Blocked,), {})  # a subclass is not covered by its parent
    assert batches(cfg, None, None, inherited()) == 1
    assert batches({"question_batch": 1}, None, None, _Blocked()) == 1
    assert batches({}, None, None, _Blocked()) == 1  # the default


def test_the_base_class_loops_over_retrieve():
    qs = [_question(i) for i in range(3)]
    assert [r.passage_ids for r in _Looping().retrieve_batch(qs, 10)] == [["q0"], ["q1"], ["q2"]]


def test_a_block_shares_its_time_and_records_its_size():
    qs = [_question(i) for i in range(4)]
    start = time.perf_counter()
    rows = answer_block(qs, retriever=_Blocked(seconds=0.2), top_k=10)
    wall_ms = 1000 * (time.perf_counter() - start)
    assert [r.id for r in rows] == ["q0", "q1", "q2", "q3"]
    assert len({r.latency_ms for r in rows}) == 1  # one share each
    # 200 ms over 4 rows: 50 ms each, and the shares add up to no more than the block's wall time
    assert 50.0 <= rows[0].latency_ms <= wall_ms / 4 + 1e-9
    assert all(r.trace[QUESTION_BATCH] == 4 for r in rows)
    assert rows[0].metrics["recall@1"] == 1.0  # scored as the one-question loop scores


def test_blocks_are_consecutive_and_rows_come_in_question_order():
    r = _Blocked()
    seen: list[str] = []
    run_blocks(
        [_question(i) for i in range(10)],
        lambda block: answer_block(block, retriever=r, top_k=10),
        lambda row: seen.append(row.id),
        block=4,
        show=False,
    )
    assert r.blocks == [["q0", "q1", "q2", "q3"], ["q4", "q5", "q6", "q7"], ["q8", "q9"]]
    assert seen == [f"q{i}" for i in range(10)]


def test_question_batch_counts_rows_per_block_size():
    rows = [{"trace": {QUESTION_BATCH: 4}}] * 8 + [{"trace": {QUESTION_BATCH: 2}}] * 2
    assert question_batch_counts(rows) == {"question_batch_counts": {"2": 2, "4": 8}}
    assert question_batch_counts([{"trace": {}}, {}]) == {}


@pytest.mark.parametrize("bad", [0, -1, 5000, "8", True])
def test_a_bad_question_batch_is_one_line(bad, tmp_path, data_dir, cache_dir):
    cfg = _cfg(tmp_path, data_dir, cache_dir, "dataset=musique_sub")
    cfg.question_batch = bad
    with pytest.raises(HopbenchError, match="question_batch must be a whole number"):
        execute(cfg)
    assert not (tmp_path / "runs").exists()


# ---- whole runs ---------------------------------------------------------------------------
def _cfg(tmp_path, data_dir, cache_dir, *overrides):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique",
            "dataset.limit=10",
            *overrides,
        ]
    )


def _rows(run_dir):
    return [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]


def _only_run(tmp_path):
    (run,) = list((tmp_path / "runs").glob("*/*/*/"))
    return run


def test_a_batched_run_writes_the_rows_of_the_one_question_run(tmp_path, data_dir, cache_dir):
    one = execute(_cfg(tmp_path / "one", data_dir, cache_dir))
    blocked = execute(_cfg(tmp_path / "blocked", data_dir, cache_dir, "question_batch=4"))
    a, b = _rows(_only_run(tmp_path / "one")), _rows(_only_run(tmp_path / "blocked"))
    assert _only_run(tmp_path / "one").name == _only_run(tmp_path / "blocked").name  # same hash
    assert [r["id"] for r in a] == [r["id"] for r in b]
    assert [r["ranked_passage_ids"] for r in a] == [r["ranked_passage_ids"] for r in b]
    assert [r["scores"] for r in a] == [r["scores"] for r in b]
    assert [r["metrics"] for r in a] == [r["metrics"] for r in b]
    assert blocked["question_batch"] == 4 and one["question_batch"] == 1
    assert blocked["question_batch_counts"] == {"2": 2, "4": 8}
    assert "question_batch_counts" not in one
    assert blocked["recall@5"] == one["recall@5"]


def test_a_run_killed_inside_a_block_resumes_at_its_first_unwritten_question(
    tmp_path, data_dir, cache_dir, monkeypatch
):
    reference = execute(_cfg(tmp_path / "ref", data_dir, cache_dir))
    cfg = _cfg(tmp_path, data_dir, cache_dir, "question_batch=4")
    real_append, real_batch = RunStore.append, DenseRetriever.retrieve_batch
    written: list[str] = []

    def dies_at_the_sixth_row(self, row):
        if len(written) == 5:  # the second block's first row is written, then the process dies
            raise KeyboardInterrupt
        written.append(row.id)
        real_append(self, row)

    monkeypatch.setattr(RunStore, "append", dies_at_the_sixth_row)
    with pytest.raises(KeyboardInterrupt):
        execute(cfg)
    run = _only_run(tmp_path)
    assert not (run / "metrics.json").exists() and len(_rows(run)) == 5
    with open(run / "predictions.jsonl", "a") as fh:  # torn mid-write, as a kill -9 leaves it
        fh.write('{"id": "torn", "quest')

    blocks: list[list[str]] = []

    def recording(self, questions, k):
        blocks.append([q.id for q in questions])
        return real_batch(self, questions, k)

    monkeypatch.setattr(RunStore, "append", real_append)
    monkeypatch.setattr(DenseRetriever, "retrieve_batch", recording)
    metrics = execute(cfg)
    ref_rows = _rows(_only_run(tmp_path / "ref"))
    assert blocks[0][0] == ref_rows[5]["id"] and [len(b) for b in blocks] == [4, 1]
    rows = _rows(run)
    assert [r["id"] for r in rows] == [r["id"] for r in ref_rows]
    assert [r["ranked_passage_ids"] for r in rows] == [r["ranked_passage_ids"] for r in ref_rows]
    assert [r["scores"] for r in rows] == [r["scores"] for r in ref_rows]
    assert metrics["question_batch_counts"] == {"1": 1, "4": 9}
    for key in ("recall@2", "recall@5", "fcr@5", "n_questions"):
        assert metrics[key] == reference[key]
