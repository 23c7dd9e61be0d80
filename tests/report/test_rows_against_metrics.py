"""`hopbench report` does not trust predictions.jsonl (issue #54.3): rows added, edited or
dropped after the run finished are refused with one line naming the run, exit code 2."""

from __future__ import annotations

import json
import logging

import pytest

from hopbench.commands.report import main as cli
from hopbench.core.question_set import QUESTION_SET_DIGEST, question_set_digest, row_gold
from hopbench.evaluate.score import aggregate
from hopbench.report.run_reader import load_runs

DENSE = ("musique_toy", "dense", "d0000000000a")


def _rows(run):
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _write_rows(run, rows):
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _metrics(run):
    return json.loads((run / "metrics.json").read_text())


def _write_metrics(run, metrics):
    (run / "metrics.json").write_text(json.dumps(metrics))


def _report(runs, tmp_path, capsys) -> tuple[int, list[str]]:
    args = ["--runs-dir", str(runs), "--results-dir", str(tmp_path / "r"), "--no-figures"]
    code = cli([*args, "--resamples", "50"])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("hopbench report")]
    return code, err


def _record_digest(run):
    """What the runner records today (old fixture runs lack it)."""
    m = _metrics(run)
    m[QUESTION_SET_DIGEST] = question_set_digest(row_gold(r) for r in _rows(run))
    _write_metrics(run, m)


def test_injected_rows_are_refused(toy_runs, tmp_path, capsys):
    """The issue's case: rows appended to a finished run raised its n and EM, without a word."""
    run = toy_runs.joinpath(*DENSE)
    rows = _rows(run)
    fake = []
    for i in range(5):
        row = json.loads(json.dumps(rows[0]))  # q1: right answer, EM 1
        row["id"] = f"fake{i}"
        fake.append(row)
    _write_rows(run, rows + fake)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2
    assert len(err) == 1 and str(run) in err[0]
    assert "11 rows" in err[0] and "n_questions" in err[0] and "6" in err[0]


def test_rows_swapped_for_other_questions_are_refused_by_the_question_set(
    toy_runs, tmp_path, capsys
):
    """Same count, same means, another question: only the recorded question set tells."""
    run = toy_runs.joinpath(*DENSE)
    _record_digest(run)
    rows = _rows(run)
    rows[1]["id"] = "q2_elsewhere"  # n unchanged, scores unchanged
    _write_rows(run, rows)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1
    assert str(run) in err[0] and QUESTION_SET_DIGEST in err[0]


def test_edited_gold_is_refused_by_the_question_set(toy_runs, tmp_path, capsys):
    """Gold answers edited to match the answer, the row's and the run's scores made to agree:
    the rows are consistent with themselves, but not with the questions the run recorded."""
    run = toy_runs.joinpath(*DENSE)
    _record_digest(run)
    rows = _rows(run)
    q2 = rows[1]
    q2["gold_answers"] = [q2["answer"]]
    q2["metrics"].update({"em": 1.0, "f1": 1.0})
    _write_rows(run, rows)
    m = _metrics(run)
    m.update({k: v for k, v in aggregate(rows).items() if k in ("em", "f1")})
    _write_metrics(run, m)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and str(run) in err[0]


def test_an_edited_row_score_is_recomputed_and_refused(toy_runs, tmp_path, capsys):
    """A row's EM edited from 0 to 1, metrics.json's mean edited to match: the score recomputed
    from the row's answer and gold answers disagrees, and the line says which row and metric."""
    run = toy_runs.joinpath(*DENSE)
    rows = _rows(run)
    assert rows[1]["id"] == "q2" and rows[1]["metrics"]["em"] == 0.0
    rows[1]["metrics"]["em"] = 1.0
    _write_rows(run, rows)
    m = _metrics(run)
    m["em"] = aggregate(rows)["em"]
    _write_metrics(run, m)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1
    assert str(run / "predictions.jsonl") in err[0] and "q2" in err[0] and "metrics.em" in err[0]


def test_an_edited_retrieval_score_is_recomputed_and_refused(toy_runs, tmp_path, capsys):
    run = toy_runs.joinpath(*DENSE)
    rows = _rows(run)
    rows[3]["metrics"]["recall@5"] = 1.0  # q4 ranked no gold passage
    _write_rows(run, rows)
    m = _metrics(run)
    m["recall@5"] = aggregate(rows)["recall@5"]
    _write_metrics(run, m)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and "q4" in err[0] and "metrics.recall@5" in err[0]


def test_a_score_on_a_question_it_does_not_apply_to_is_refused(toy_runs, tmp_path, capsys):
    run = toy_runs.joinpath(*DENSE)
    rows = _rows(run)
    rows[0]["answer"] = None  # as if no reader had answered: EM and F1 do not apply
    _write_rows(run, rows)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and "q1" in err[0] and "does not apply" in err[0]


@pytest.mark.parametrize(
    "key, value",
    [("em", 0.9), ("recall@5", 0.1), ("n_answer_scored", 5), ("latency_ms_mean", 1.0)],
)
def test_metrics_that_disagree_with_the_rows_are_refused(toy_runs, tmp_path, capsys, key, value):
    run = toy_runs.joinpath(*DENSE)
    m = _metrics(run)
    m[key] = value
    _write_metrics(run, m)
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1
    assert str(run / "metrics.json") in err[0] and f"'{key}'" in err[0]


def test_a_dropped_row_is_refused(toy_runs, tmp_path, capsys):
    run = toy_runs.joinpath(*DENSE)
    _write_rows(run, _rows(run)[1:])  # q1, a right answer, gone: EM would fall
    code, err = _report(toy_runs, tmp_path, capsys)
    assert code == 2 and len(err) == 1 and "5 rows" in err[0]


def test_means_agree_within_the_tolerance_whatever_the_row_order(toy_runs):
    """metrics.json averages the rows in id order; the file may hold them in another order
    (concurrent questions): sums that differ in the last bits are not a disagreement."""
    run = toy_runs.joinpath(*DENSE)
    rows = _rows(run)
    _write_rows(run, rows[::-1])
    m = _metrics(run)
    m["f1"] = m["f1"] * (1 + 1e-12)  # a rounding, far below the tolerance
    _write_metrics(run, m)
    assert len(load_runs(toy_runs)) == 2


def test_a_run_that_recorded_its_question_set_is_read_without_a_warning(toy_runs, caplog):
    for run in toy_runs.glob("*/*/*/metrics.json"):
        if "killed" not in str(run):
            _record_digest(run.parent)
    with caplog.at_level(logging.WARNING):
        assert len(load_runs(toy_runs)) == 2
    assert QUESTION_SET_DIGEST not in caplog.text


def test_an_older_run_without_its_question_set_is_read_with_a_warning(toy_runs, caplog):
    """Runs written before the question set was recorded are still read (their counts, means
    and per-question scores are checked); the report says what it could not check."""
    for path in toy_runs.glob("*/*/*/metrics.json"):
        m = json.loads(path.read_text())
        m.pop(QUESTION_SET_DIGEST, None)
        path.write_text(json.dumps(m))
    with caplog.at_level(logging.WARNING):
        runs = load_runs(toy_runs)
    assert [r.config_hash for r in runs] == ["d0000000000a", "5a0000000001"]
    assert caplog.text.count(QUESTION_SET_DIGEST) == 2
