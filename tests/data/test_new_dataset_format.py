"""Adding a dataset format takes a loader, its registration and a dataset config (CONTRIBUTING.md,
"Adding a dataset format"). The guide's own code blocks, taken from CONTRIBUTING.md as they are,
run a toy format end to end through the launcher the guide describes, and a malformed record
stops the run with exit code 2 and one line naming the file, the record and the field."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.data.registry import FORMATS, register_format
from hopbench.data.schema import passage_id

GUIDE = Path(CONFIG_DIR).parent / "CONTRIBUTING.md"

CORPUS = [
    {"title": "Lyon", "text": "Lyon is a city in France where the Rhone and the Saone meet."},
    {
        "title": "Rhone",
        "text": "The Rhone rises in the Swiss Alps and flows into the Mediterranean Sea.",
    },
    {"title": "Bern", "text": "Bern is the capital of Switzerland, on the river Aare."},
    {"title": "Aare", "text": "The Aare is the longest river flowing entirely within Switzerland."},
]
QUESTIONS = [
    {
        "qid": "t1",
        "question": "Where does the river through Lyon rise?",
        "answers": ["the Swiss Alps", "Alps"],
        "support": ["Lyon", "Rhone"],
    },
    {
        "qid": "t2",
        "question": "Which river flows through the Swiss capital?",
        "answers": ["Aare"],
        "support": ["Bern", "Aare"],
    },
]


def _guide_block(first_line: str) -> str:
    """The code block of the guide's dataset-format section that starts with `first_line`."""
    section = GUIDE.read_text().split("## Adding a dataset format", 1)[1]
    for block in re.findall(r"```\w*\n(.*?)```", section, flags=re.S):
        if block.startswith(first_line + "\n"):
            return block
    raise AssertionError(
        f"CONTRIBUTING.md, 'Adding a dataset format', has no block starting {first_line!r}"
    )


def _write_jsonl(path: Path, records: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@pytest.fixture
def user_folders(tmp_path):
    """The user's code (loader + launcher), config folder and data folder, as the guide lays them out."""
    code, conf, data = tmp_path / "my-code", tmp_path / "my-configs", tmp_path / "data"
    code.mkdir()
    (conf / "dataset").mkdir(parents=True)
    (data / "toy").mkdir(parents=True)
    (code / "toy_format.py").write_text(_guide_block("# toy_format.py"))
    (code / "run_hopbench.py").write_text(_guide_block("# run_hopbench.py"))
    (conf / "dataset" / "toy.yaml").write_text(_guide_block("# dataset/toy.yaml"))
    (data / "toy" / "corpus.json").write_text(json.dumps(CORPUS))
    _write_jsonl(data / "toy" / "questions.jsonl", QUESTIONS)
    return code, conf, data


def _launch(tmp_path, code, conf, data, cache_dir, child_env):
    """`python run_hopbench.py hydra.searchpath=[file://...] dataset=toy retriever=dense`, as the guide runs it."""
    return subprocess.run(
        [
            sys.executable,
            str(code / "run_hopbench.py"),
            f"hydra.searchpath=[file://{conf}]",
            "dataset=toy",
            "retriever=dense",
            f"paths.data_dir={data}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_toy_format_from_the_guide_runs_end_to_end(tmp_path, user_folders, cache_dir, child_env):
    code, conf, data = user_folders
    res = _launch(tmp_path, code, conf, data, cache_dir, child_env)
    assert res.returncode == 0, res.stderr[-3000:]
    [metrics_file] = (tmp_path / "runs" / "toy" / "dense").glob("*/metrics.json")
    metrics = json.loads(metrics_file.read_text())
    assert metrics["dataset"] == "toy" and metrics["retriever"] == "dense"
    assert metrics["n_questions"] == 2 and metrics["n_retrieval_scored"] == 2
    # each question's two gold passages are the two closest of the four (cosine 0.5-0.7 against < 0.3)
    assert metrics["recall@2"] == 1.0 and metrics["mrr@10"] == 1.0 and metrics["recall@1"] == 0.5
    rows = {
        r["id"]: r
        for r in map(
            json.loads, (metrics_file.parent / "predictions.jsonl").read_text().splitlines()
        )
    }
    assert rows["t1"]["gold_passage_ids"] == [passage_id(p["title"], p["text"]) for p in CORPUS[:2]]
    assert rows["t2"]["gold_answers"] == ["Aare"] and len(rows["t2"]["ranked_passage_ids"]) == 4


def test_a_malformed_record_is_one_line_and_exit_2(tmp_path, user_folders, cache_dir, child_env):
    code, conf, data = user_folders
    questions = data / "toy" / "questions.jsonl"
    _write_jsonl(questions, [QUESTIONS[0], {**QUESTIONS[1], "question": 42}])
    res = _launch(tmp_path, code, conf, data, cache_dir, child_env)
    assert res.returncode == 2, res.stderr[-3000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert errors == [
        f"hopbench: error: {questions}: record #1 (line 2, id=t2), field 'question': "
        "expected str, got int 42"
    ], res.stderr[-3000:]
    assert "Traceback" not in res.stderr
    assert not list((tmp_path / "runs").glob("**/metrics.json"))


def test_register_format_refuses_a_taken_name():
    with pytest.raises(HopbenchError, match="already registered"):
        register_format("musique", lambda questions_path, corpus_path: ([], []))
    assert FORMATS["musique"].__name__ == "load_musique"
