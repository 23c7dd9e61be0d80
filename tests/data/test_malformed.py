"""Malformed input fails with one message naming the file, the record and the field."""

import json

import pytest

from hopbench.data import load_dataset
from hopbench.errors import DataError


def _musique_record(qid="q1", **over):
    rec = {
        "id": qid, "question": "Who?", "answer": "A", "answer_aliases": [],
        "question_decomposition": [{"paragraph_support_idx": 0}],
        "paragraphs": [{"idx": 0, "title": "T0", "paragraph_text": "text 0", "is_supporting": True},
                       {"idx": 1, "title": "T1", "paragraph_text": "text 1", "is_supporting": False}],
    }
    rec.update(over)
    return rec


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def _load_musique(path, corpus=None):
    return load_dataset("m", "musique", path, corpus)


def test_valid_minimal_record_loads(tmp_path):
    ds = _load_musique(_write(tmp_path, "q.json", [_musique_record()]))
    assert ds.questions[0].answers == ["A"] and len(ds.corpus) == 2


@pytest.mark.parametrize("mutate, field, problem", [
    (lambda r: r.pop("question"), "question", "missing field"),
    (lambda r: r.update(question="   "), "question", "is empty"),
    (lambda r: r.update(question=42), "question", "expected str"),
    (lambda r: r.update(answer=None), "answer", "expected str"),
    (lambda r: r.update(paragraphs="nope"), "paragraphs", "expected list"),
    (lambda r: r.update(answer_aliases="x"), "answer_aliases", "list of strings"),
    (lambda r: r["question_decomposition"][0].update(paragraph_support_idx=7),
     "question_decomposition[0].paragraph_support_idx", "idx 7"),
])
def test_bad_field_names_file_record_field(tmp_path, mutate, field, problem):
    recs = [_musique_record("ok"), _musique_record("bad")]
    mutate(recs[1])
    path = _write(tmp_path, "q.json", recs)
    with pytest.raises(DataError) as err:
        _load_musique(path)
    msg = str(err.value)
    assert str(path) in msg and "record #1 (id=bad)" in msg and f"'{field}'" in msg and problem in msg


def test_invalid_json_names_file_and_line(tmp_path):
    path = _write(tmp_path, "q.json", '[{"id": "a",\n "question": }]')
    with pytest.raises(DataError, match=r"q\.json: record -: invalid JSON at line 2"):
        _load_musique(path)


def test_non_utf8_file(tmp_path):
    path = tmp_path / "q.json"
    path.write_bytes(b'[{"id": "\xff"}]')
    with pytest.raises(DataError, match="not valid UTF-8"):
        _load_musique(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        _load_musique(tmp_path / "nope.json")


def test_duplicate_ids(tmp_path):
    path = _write(tmp_path, "q.json", [_musique_record("x"), _musique_record("y"), _musique_record("x")])
    with pytest.raises(DataError, match=r"record #2 \(id=x\), field 'id': duplicate id 'x' \(first seen at record #0"):
        _load_musique(path)


def test_gold_paragraph_absent_from_corpus(tmp_path):
    q = _write(tmp_path, "q.json", [_musique_record("q1")])
    c = _write(tmp_path, "c.json", [{"title": "T1", "text": "text 1"}])
    with pytest.raises(DataError, match=r"record #0 \(id=q1\), field 'paragraphs.is_supporting': gold paragraph 'T0' is absent"):
        _load_musique(q, c)


def test_corpus_record_missing_text(tmp_path):
    q = _write(tmp_path, "q.json", [_musique_record("q1")])
    c = _write(tmp_path, "c.json", [{"title": "T0", "text": "text 0"}, {"title": "T1"}])
    with pytest.raises(DataError, match=r"c\.json: record #1, field 'text': missing field"):
        _load_musique(q, c)


def test_hotpot_gold_title_absent(tmp_path):
    rec = {"_id": "h1", "question": "Q?", "answer": "a", "context": [["A", ["x."]]],
           "supporting_facts": [["A", 0], ["B", 0]]}
    path = _write(tmp_path, "h.json", [rec])
    with pytest.raises(DataError, match=r"record #0 \(id=h1\), field 'supporting_facts': gold title 'B' is absent"):
        load_dataset("h", "hotpotqa", path)


def test_hotpot_bad_context_item(tmp_path):
    rec = {"_id": "h1", "question": "Q?", "answer": "a", "context": [["A", "not a list"]],
           "supporting_facts": [["A", 0]]}
    path = _write(tmp_path, "h.json", [rec])
    with pytest.raises(DataError, match=r"field 'context\[0\]': expected \[title, \[sentence"):
        load_dataset("h", "hotpotqa", path)


def test_hover_needs_a_corpus_and_valid_labels(tmp_path):
    claims = [{"uid": "c1", "claim": "X is Y.", "supporting_facts": [["X", 0]], "label": "MAYBE"}]
    q = _write(tmp_path, "hover.json", claims)
    with pytest.raises(DataError, match="corpus_path"):
        load_dataset("hover", "hover", q, None)
    c = _write(tmp_path, "c.json", [{"title": "X", "text": "X is Y."}])
    with pytest.raises(DataError, match=r"record #0 \(id=c1\), field 'label': expected one of"):
        load_dataset("hover", "hover", q, c)


def test_2wiki_bad_evidence_triple(tmp_path):
    q = _write(tmp_path, "w.json", [{"id": "w1", "question": "Q?", "answer": "a", "evidence": [["X", "r"]]}])
    c = _write(tmp_path, "c.json", [{"title": "X", "text": "x"}])
    with pytest.raises(DataError, match=r"field 'evidence\[0\]': expected \[subject, relation, object\]"):
        load_dataset("w", "2wiki_linearrag", q, c)


def test_top_level_not_a_list(tmp_path):
    path = _write(tmp_path, "q.json", {"id": "x"})
    with pytest.raises(DataError, match="expected a JSON list of questions, got dict"):
        _load_musique(path)
