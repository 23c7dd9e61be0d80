"""A row's R@Nt is rechecked against its ranking and the corpus's token counts when the corpus is
at hand, and exempt (not refused) when it is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopbench.core.errors import DataError
from hopbench.data.schema import Passage
from hopbench.evaluate import token_budget
from hopbench.report.run_check import check_row_scores

PRED = Path("runs/d/r/h/predictions.jsonl")


def _row(ids, value):
    return {
        "id": "q1",
        "ranked_passage_ids": ids,
        "gold_passage_ids": ids[1:],
        "gold_complete": True,
        "answer": None,
        "gold_answers": ["x"],
        "kind": "qa",
        "metrics": {"recall@512t": value},
    }


def test_a_token_metric_is_exempt_without_the_corpus_and_rechecked_with_it():
    ids = ["rc-unregistered-1", "rc-unregistered-2"]
    check_row_scores(PRED, _row(ids, 0.25))  # no counts for these ids: not rechecked
    corpus = [Passage("rc-p1", "A", "short text"), Passage("rc-p2", "B", "another one")]
    token_budget.register(corpus)
    row = _row(["rc-p1", "rc-p2"], 1.0)
    check_row_scores(PRED, row)  # both fit in 512 tokens: gold rc-p2 is in
    with pytest.raises(DataError, match="metrics.recall@512t"):
        check_row_scores(PRED, {**row, "metrics": {"recall@512t": 0.0}})
