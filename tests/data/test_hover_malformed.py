"""A bad HoVer claims or evidence record fails with one message naming file, record and field."""

from __future__ import annotations

import json
import re

import pytest

from hopbench.core.errors import DataError
from hopbench.data import load_dataset

CLAIMS = "hover/hover_dev_release_v1.1.json"
EVIDENCE = "hover/programfc_hover_dev_gold_evidence.jsonl"


def _real_evidence_with(data_dir, tmp_path, line_no: int, edit) -> tuple:
    """A copy of the real evidence file (in tmp_path, never in the repo) with one line edited."""
    lines = (data_dir / EVIDENCE).read_text(encoding="utf-8").splitlines()
    lines[line_no - 1] = edit(lines[line_no - 1])
    path = tmp_path / "evidence.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data_dir / CLAIMS, path


def _fails(qpath, epath, record: str, field: str | None, problem: str):
    where = f"{re.escape(str(epath))}: record {re.escape(record)}"
    if field:
        where += f", field '{re.escape(field)}'"
    with pytest.raises(DataError, match=f"^{where}: {problem}"):
        load_dataset("hover", "hover", qpath, epath)


def _set(key, value):
    def edit(line):
        rec = json.loads(line)
        rec[key] = value
        return json.dumps(rec)

    return edit


def test_real_file_with_a_non_string_gold_evidence(data_dir, tmp_path):
    q, e = _real_evidence_with(data_dir, tmp_path, 7, _set("gold_evidence", 5))
    _fails(q, e, "line 7", "gold_evidence", "expected str, got int")


def test_real_file_with_a_missing_original(data_dir, tmp_path):
    def drop(line):
        rec = json.loads(line)
        del rec["original"]
        return json.dumps(rec)

    q, e = _real_evidence_with(data_dir, tmp_path, 1200, drop)
    _fails(q, e, "line 1200", "original", "missing field")


def test_real_file_with_a_paragraph_missing(data_dir, tmp_path):
    def cut(line):
        rec = json.loads(line)
        rec["gold_evidence"] = rec["gold_evidence"].split("\n", 1)[1]
        return json.dumps(rec)

    q, e = _real_evidence_with(data_dir, tmp_path, 3, cut)
    _fails(
        q,
        e,
        "line 3",
        "gold_evidence",
        r"\d paragraphs, but claim .* has \d distinct supporting titles",
    )


def test_real_file_with_a_broken_json_line(data_dir, tmp_path):
    q, e = _real_evidence_with(data_dir, tmp_path, 42, lambda line: line[:-5])
    _fails(q, e, "line 42", None, "invalid JSON at column")


def test_empty_and_repeated_paragraphs(tmp_path):
    q = tmp_path / "claims.json"
    q.write_text(
        json.dumps(
            [
                {
                    "uid": "a",
                    "claim": "A and B.",
                    "label": "SUPPORTED",
                    "supporting_facts": [["A", 0], ["B", 0]],
                }
            ]
        )
    )
    e = tmp_path / "ev.jsonl"
    e.write_text(json.dumps({"original": "A and B.", "gold_evidence": "A is.\n  "}) + "\n")
    _fails(q, e, "line 1", "gold_evidence", "paragraph 2 of 2 is empty")
    e.write_text(
        "\n" + json.dumps({"original": "A and B.", "gold_evidence": "A is.\nA is."}) + "\n"
    )
    _fails(q, e, "line 2", "gold_evidence", "paragraph 2 repeats paragraph 1")
    e.write_text(
        json.dumps({"original": "A and B.", "gold_evidence": "A is.\nB is."})
        + "\n"
        + json.dumps({"original": "A and B.", "gold_evidence": "A is.\nB was."})
        + "\n"
    )
    _fails(q, e, "line 2", "original", "the same claim as line 1 with different gold_evidence")
    e.write_text(json.dumps(["A and B.", "A is.\nB is."]) + "\n")
    _fails(q, e, "line 1", None, "expected an object, got list")


def test_bad_claim_records(tmp_path):
    e = tmp_path / "ev.jsonl"
    e.write_text(json.dumps({"original": "A.", "gold_evidence": "A is."}) + "\n")
    q = tmp_path / "claims.json"
    for rec, field, problem in [
        (
            {"uid": "a", "claim": "A.", "supporting_facts": [["A"]]},
            r"supporting_facts\[0\]",
            r"expected \[title, sentence_index\]",
        ),
        (
            {"uid": "a", "claim": "A.", "supporting_facts": [["A", "0"]]},
            r"supporting_facts\[0\]",
            r"expected \[title, sentence_index\]",
        ),
        (
            {"uid": "a", "claim": "A.", "num_hops": "2", "supporting_facts": [["A", 0]]},
            "num_hops",
            "expected a positive integer",
        ),
        (
            {"uid": "a", "claim": "A.", "supporting_facts": {"A": 0}},
            "supporting_facts",
            "expected a list",
        ),
    ]:
        q.write_text(json.dumps([rec]))
        with pytest.raises(
            DataError, match=rf"claims.json: record #0 \(id=a\), field '{field}': {problem}"
        ):
            load_dataset("hover", "hover", q, e)


def test_no_corpus_names_the_evidence_file(tmp_path):
    q = tmp_path / "claims.json"
    q.write_text(json.dumps([{"uid": "a", "claim": "A.", "supporting_facts": [["A", 0]]}]))
    with pytest.raises(
        DataError, match="field 'corpus_path'.*programfc_hover_dev_gold_evidence.jsonl"
    ):
        load_dataset("hover", "hover", q, None)


def test_user_corpus_matches_entity_encoded_titles(tmp_path):
    q = tmp_path / "claims.json"
    q.write_text(
        json.dumps(
            [
                {
                    "uid": "a",
                    "claim": "T.",
                    "label": "SUPPORTED",
                    "num_hops": 1,
                    "supporting_facts": [["Thomas &amp; Mack Center", 0]],
                }
            ]
        )
    )
    c = tmp_path / "corpus.json"
    c.write_text(json.dumps([{"title": "Thomas & Mack Center", "text": "An arena."}]))
    ds = load_dataset("hover", "hover", q, c)
    assert ds.passage(ds.questions[0].gold_passage_ids[0]).title == "Thomas & Mack Center"
