"""Does a run's predictions.jsonl still say what its metrics.json says? (issue #54.3)

The report computes every table from the rows, so a row added, dropped or edited after the run
finished would change its numbers without a word. Before a run is used, its rows are checked:
one row per question of the set the run recorded (`question_set_digest`, ids and gold), every
per-question score recomputed from the row's ranking, answer and gold (R@Nt also from the
token counts of the run's corpus: when its files are not at hand, the R@Nt values the run wrote
are not rechecked, `report.run_corpus`), and the counts, means
and latencies recomputed from the rows equal to metrics.json's. A run that fails is refused
(`DataError`: one line naming the file, the record and the field; exit code 2), not skipped:
a table without it would look complete. Runs written before the question set was recorded are
checked on the rest, with a warning.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.core.question_set import QUESTION_SET_DIGEST, question_set_digest, row_gold
from hopbench.evaluate.metric_registry import TOKENS, Outcome, get, names, score
from hopbench.evaluate.score import aggregate

log = logging.getLogger(__name__)

# A per-question score recomputed from its row: the same function on the same inputs, so any
# difference beyond float noise is an edit (scores lie in [0, 1]; absolute).
ROW_TOLERANCE = 1e-9
# metrics.json's means against the rows' (math.isclose, relative and absolute): the run averaged
# the rows in id order, the file may hold them in another, so the last bits may differ.
MEAN_TOLERANCE = 1e-9
COUNTS = ("n_questions", "n_retrieval_scored", "n_answer_scored")
LATENCIES = ("latency_ms_mean", "latency_ms_p50", "latency_ms_p95")

_WARNED: set[Path] = set()  # runs whose missing question set was reported


def check_run(run_dir: Path, metrics: dict, rows: list[dict]) -> None:
    """Raise `DataError` where the rows (as the report read them) disagree with metrics.json."""
    pred = run_dir / "predictions.jsonl"
    n = metrics.get("n_questions")
    if n is not None and n != len(rows):
        raise DataError(
            pred,
            "file",
            None,
            f"{len(rows)} rows, but the run's metrics.json has n_questions {n}: rows were added "
            "or dropped after the run finished; the run is refused",
        )
    check_question_set(run_dir, metrics, rows)
    for row in rows:
        check_row_scores(pred, row)
    check_means(run_dir / "metrics.json", metrics, rows)


def check_question_set(run_dir: Path, metrics: dict, rows: list[dict]) -> None:
    """The rows' ids and gold are the question set the run recorded."""
    recorded = metrics.get(QUESTION_SET_DIGEST)
    if recorded is None:
        if run_dir not in _WARNED:
            _WARNED.add(run_dir)
            log.warning(
                "%s: written before runs recorded their question set (%s); its rows are "
                "checked against its counts, means and scores only",
                run_dir,
                QUESTION_SET_DIGEST,
            )
        return
    if question_set_digest(row_gold(r) for r in rows) != recorded:
        raise DataError(
            run_dir / "predictions.jsonl",
            "file",
            None,
            f"its question ids or gold answers/passages are not the question set the run "
            f"recorded (metrics.json's {QUESTION_SET_DIGEST}): the rows were edited after the "
            "run finished; the run is refused",
        )


def check_row_scores(pred: Path, row: dict) -> None:
    """Each declared metric a row records equals its value recomputed from the row."""
    outcome = Outcome.from_row(row)
    expected = score(outcome)
    declared = set(names())
    for name, value in row["metrics"].items():
        if name not in declared:
            continue  # a metric no longer declared: the report does not read it
        if name not in expected:
            if TOKENS in get(name).needs and outcome.passage_tokens is None:
                continue  # exempt: the run's corpus is not at hand (report.run_corpus)
            raise DataError(
                pred,
                f"id {row['id']}",
                f"metrics.{name}",
                f"recorded {value}, but the metric does not apply to this question (no answer, "
                "or gold passages incomplete); the run is refused",
            )
        if abs(float(value) - expected[name]) > ROW_TOLERANCE:
            raise DataError(
                pred,
                f"id {row['id']}",
                f"metrics.{name}",
                f"recorded {value}, but its ranking, answer and gold give {expected[name]}; "
                "the run is refused",
            )


def check_means(path: Path, metrics: dict, rows: list[dict]) -> None:
    """metrics.json's counts, metric means and latencies equal the ones of the rows."""
    again = aggregate([{**r, "latency_ms": r.get("latency_ms")} for r in rows])
    for key in (*COUNTS, *names(), *LATENCIES):
        if key in metrics and not _agree(metrics[key], again.get(key)):
            raise DataError(
                path,
                "file",
                key,
                f"{metrics[key]!r}, but the run's predictions.jsonl rows give {again.get(key)!r}: "
                "rows and metrics disagree; the run is refused",
            )


def _agree(recorded, computed) -> bool:
    if recorded is None or computed is None:
        return recorded is None and computed is None
    if isinstance(recorded, bool) or not isinstance(recorded, (int, float)):
        return False
    if isinstance(computed, int):
        return recorded == computed
    return math.isclose(recorded, computed, rel_tol=MEAN_TOLERANCE, abs_tol=MEAN_TOLERANCE)
