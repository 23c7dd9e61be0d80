"""Text that is not valid Unicode (a lone surrogate, which JSON may write as "\\ud83d") is
refused where it is read: one line naming file, record and field, exit 2 (issue #28, item 11).
Before, it loaded and crashed later (writing a row, a cache key, a prompt) with a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hopbench.core.errors import DataError
from hopbench.data import load_dataset


def _musique(qid="q1", **over):
    rec = {
        "id": qid,
        "question": "Who?",
        "answer": "A",
        "answer_aliases": [],
        "question_decomposition": [{"paragraph_support_idx": 0}],
        "paragraphs": [
            {"idx": 0, "title": "T0", "paragraph_text": "text 0", "is_supporting": True},
            {"idx": 1, "title": "T1", "paragraph_text": "text 1", "is_supporting": False},
        ],
    }
    rec.update(over)
    return rec


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda r: r.update(question="Who \ud83d?"), "question"),
        (lambda r: r.update(answer="\udc80"), "answer"),
        (lambda r: r.update(answer_aliases=["ok", "bad \ud83d"]), "answer_aliases[1]"),
        (
            lambda r: r["paragraphs"][1].update(paragraph_text="text \ud800 1"),
            "paragraphs[1].paragraph_text",
        ),
        (lambda r: r["paragraphs"][0].update(title="T\udfff"), "paragraphs[0].title"),
    ],
)
def test_a_lone_surrogate_names_file_record_field(tmp_path, mutate, field):
    recs = [_musique("ok"), _musique("bad")]
    mutate(recs[1])
    path = tmp_path / "q.json"
    path.write_text(json.dumps(recs))  # json.dumps escapes the surrogate: the file is valid UTF-8
    with pytest.raises(DataError) as err:
        load_dataset("m", "musique", path)
    msg = str(err.value)
    assert str(path) in msg and "record #1 (id=bad)" in msg and f"'{field}'" in msg
    assert "lone surrogate" in msg and "\n" not in msg


def test_a_run_on_such_a_file_exits_2_with_one_line(tmp_path, data_dir, child_env):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_musique("ok"), _musique("bad", question="Who \ud83d?")]))
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
            "dataset=musique_sub",
            f"dataset.questions_path={path}",
            "dataset.corpus_path=null",
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2, res.stderr[-2000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert len(errors) == 1 and "record #1 (id=bad), field 'question'" in errors[0], res.stderr[
        -2000:
    ]
    assert "Traceback" not in res.stderr
