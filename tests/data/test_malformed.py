"""Malformed input fails with one message naming the file, the record and the field."""

import json

import pytest

from hopbench.core.errors import DataError
from hopbench.data import load_dataset


def _musique_record(qid="q1", **over):
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


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def _load_musique(path, corpus=None):
    return load_dataset("m", "musique", path, corpus)


def test_valid_minimal_record_loads(tmp_path):
    ds = _load_musique(_write(tmp_path, "q.json", [_musique_record()]))
    assert ds.questions[0].answers == ["A"] and len(ds.corpus) == 2


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (lambda r: r.pop("question"), "question", "missing field"),
        (lambda r: r.update(question="   "), "question", "is empty"),
        (lambda r: r.update(question=42), "question", "expected str"),
        (lambda r: r.update(answer=None), "answer", "expected str"),
        (lambda r: r.update(paragraphs="nope"), "paragraphs", "expected list"),
        (lambda r: r.update(answer_aliases="x"), "answer_aliases", "list of strings"),
        (
            lambda r: r["question_decomposition"][0].update(paragraph_support_idx=7),
            "question_decomposition[0].paragraph_support_idx",
            "idx 7",
        ),
    ],
)
def test_bad_field_names_file_record_field(tmp_path, mutate, field, problem):
    recs = [_musique_record("ok"), _musique_record("bad")]
    mutate(recs[1])
    path = _write(tmp_path, "q.json", recs)
    with pytest.raises(DataError) as err:
        _load_musique(path)
    msg = str(err.value)
    assert (
        str(path) in msg and "record #1 (id=bad)" in msg and f"'{field}'" in msg and problem in msg
    )


def test_invalid_json_names_file_and_line(tmp_path):
    path = _write(tmp_path, "q.json", '[{"id": "a",\n "question": }]')
    with pytest.raises(DataError, match=r"q\.json: invalid JSON at line 2"):
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
    path = _write(
        tmp_path, "q.json", [_musique_record("x"), _musique_record("y"), _musique_record("x")]
    )
    with pytest.raises(
        DataError,
        match=r"record #2 \(id=x\), field 'id': duplicate id 'x' \(first seen at record #0",
    ):
        _load_musique(path)


def test_gold_paragraph_absent_from_corpus(tmp_path):
    q = _write(tmp_path, "q.json", [_musique_record("q1")])
    c = _write(tmp_path, "c.json", [{"title": "T1", "text": "text 1"}])
    with pytest.raises(
        DataError,
        match=r"record #0 \(id=q1\), field 'paragraphs.is_supporting': gold paragraph 'T0' is absent",
    ):
        _load_musique(q, c)


def test_corpus_record_missing_text(tmp_path):
    q = _write(tmp_path, "q.json", [_musique_record("q1")])
    c = _write(tmp_path, "c.json", [{"title": "T0", "text": "text 0"}, {"title": "T1"}])
    with pytest.raises(DataError, match=r"c\.json: record #1, field 'text': missing field"):
        _load_musique(q, c)


def test_hotpot_gold_title_absent(tmp_path):
    rec = {
        "_id": "h1",
        "question": "Q?",
        "answer": "a",
        "context": [["A", ["x."]]],
        "supporting_facts": [["A", 0], ["B", 0]],
    }
    path = _write(tmp_path, "h.json", [rec])
    with pytest.raises(
        DataError, match=r"record #0 \(id=h1\), field 'supporting_facts': gold title 'B' is absent"
    ):
        load_dataset("h", "hotpotqa", path)


def test_hotpot_bad_context_item(tmp_path):
    rec = {
        "_id": "h1",
        "question": "Q?",
        "answer": "a",
        "context": [["A", "not a list"]],
        "supporting_facts": [["A", 0]],
    }
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
    q = _write(
        tmp_path,
        "w.json",
        [{"id": "w1", "question": "Q?", "answer": "a", "evidence": [["X", "r"]]}],
    )
    c = _write(tmp_path, "c.json", [{"title": "X", "text": "x"}])
    with pytest.raises(
        DataError, match=r"field 'evidence\[0\]': expected \[subject, relation, object\]"
    ):
        load_dataset("w", "2wiki_linearrag", q, c)


def test_top_level_not_a_list(tmp_path):
    path = _write(tmp_path, "q.json", {"id": "x"})
    with pytest.raises(DataError, match="expected a JSON list of questions, got dict"):
        _load_musique(path)


# --- strict types on real records (issue #14 item 7) ---------------------------------------------
# Each case takes a real record of a subset file, breaks one field, and expects one DataError
# naming the file, the record and the field. Nothing is coerced: "false" is not a boolean,
# "0" is not an integer, true is not an integer.


def _real(data_dir, rel):
    return json.loads((data_dir / rel).read_text(encoding="utf-8"))


def _expect_data_error(load, path, record, field, problem):
    with pytest.raises(DataError) as err:
        load()
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: record {record}"), msg
    assert f"field '{field}'" in msg, msg
    assert problem in msg, msg
    return msg


def _string_booleans(rec):
    for p in rec["paragraphs"]:
        p["is_supporting"] = "true" if p["is_supporting"] else "false"


MUSIQUE_CASES = [
    (
        _string_booleans,
        "paragraphs[0].is_supporting",
        "expected boolean (true/false), got str 'false'",
    ),
    (
        lambda r: r["paragraphs"][6].update(is_supporting=1),
        "paragraphs[6].is_supporting",
        "got int 1",
    ),
    (
        lambda r: r["paragraphs"][6].update(is_supporting=None),
        "paragraphs[6].is_supporting",
        "got null",
    ),
    (
        lambda r: r["paragraphs"][6].pop("is_supporting"),
        "paragraphs[6].is_supporting",
        "missing field",
    ),
    (lambda r: r.update(paragraphs=[1, 2, 3]), "paragraphs[0]", "expected an object, got int 1"),
    (
        lambda r: r["paragraphs"][2].update(idx="2"),
        "paragraphs[2].idx",
        "expected int, got str '2'",
    ),
    (
        lambda r: r["paragraphs"][1].update(idx=True),
        "paragraphs[1].idx",
        "expected int, got bool True",
    ),
    (lambda r: r["paragraphs"][3].update(idx=2), "paragraphs[3].idx", "duplicate paragraph idx 2"),
    (
        lambda r: r["paragraphs"][4].update(title=7),
        "paragraphs[4].title",
        "expected str, got int 7",
    ),
    (
        lambda r: r["paragraphs"][4].update(paragraph_text=["a"]),
        "paragraphs[4].paragraph_text",
        "got list",
    ),
    (
        lambda r: r.update(answer_aliases=["ok", 35]),
        "answer_aliases[1]",
        "expected str, got int 35",
    ),
    (
        lambda r: r.update(answer_aliases="35"),
        "answer_aliases",
        "expected a list of strings, got str",
    ),
    (
        lambda r: r.update(answer_aliases=True),
        "answer_aliases",
        "expected a list of strings, got bool True",
    ),
    (
        lambda r: r.update(question_decomposition="x"),
        "question_decomposition",
        "expected list, got str",
    ),
    (
        lambda r: r["question_decomposition"].__setitem__(1, 14),
        "question_decomposition[1]",
        "expected an object, got int 14",
    ),
    # true == 1 in Python: without the check this silently named paragraph 1 as the first hop
    (
        lambda r: r["question_decomposition"][0].update(paragraph_support_idx=True),
        "question_decomposition[0].paragraph_support_idx",
        "expected int, got bool True",
    ),
    (
        lambda r: r["question_decomposition"][0].update(paragraph_support_idx="15"),
        "question_decomposition[0].paragraph_support_idx",
        "expected int, got str '15'",
    ),
    (lambda r: r.update(id=1.5), "id", "expected str or int, got float 1.5"),
    (lambda r: r.update(id=""), "id", "is empty"),
    (lambda r: r.update(answer=35), "answer", "expected str, got int 35"),
]


@pytest.mark.parametrize("mutate, field, problem", MUSIQUE_CASES)
def test_musique_strict_types_on_a_real_record(data_dir, tmp_path, mutate, field, problem):
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    bad = recs[1]
    label = "#1" if field == "id" else f"#1 (id={bad['id']})"
    mutate(bad)
    path = _write(tmp_path, "q.json", recs)
    _expect_data_error(lambda: _load_musique(path), path, label, field, problem)


def test_string_false_no_longer_makes_every_paragraph_gold(data_dir, tmp_path):
    """The reported bug: "false" read as true gave 20 gold passages instead of 4."""
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    good = _load_musique(_write(tmp_path, "good.json", recs))
    assert len(good.questions[1].gold_passage_ids) == 4
    _string_booleans(recs[1])
    with pytest.raises(DataError, match=r"paragraphs\[0\]\.is_supporting'"):
        _load_musique(_write(tmp_path, "bad.json", recs))


def _hotpot_first(data_dir):
    return _real(data_dir, "hotpotqa/hotpotqa_train.json")[:3]


@pytest.mark.parametrize(
    "mutate, field, problem",
    [
        (
            lambda r: r.update(supporting_facts=[["Alû", "3"], ["Lilu (mythology)", 0]]),
            "supporting_facts[0]",
            "a string and an integer",
        ),
        (
            lambda r: r.update(supporting_facts=[["Alû", True], ["Lilu (mythology)", 0]]),
            "supporting_facts[0]",
            "a string and an integer",
        ),
        (
            lambda r: r.update(supporting_facts=[["Alû"], ["Lilu (mythology)", 0]]),
            "supporting_facts[0]",
            "expected [title, sentence_index]",
        ),
        (lambda r: r.update(supporting_facts="Alû"), "supporting_facts", "expected list, got str"),
        (
            lambda r: r["context"].__setitem__(2, ["Maha Sona", [" A.", 5]]),
            "context[2]",
            "expected [title, [sentence",
        ),
        (lambda r: r.update(type=["bridge"]), "type", "expected str, got list"),
        (lambda r: r.update(level=3), "level", "expected str, got int 3"),
        (lambda r: r.update(question=None), "question", "expected str, got null"),
    ],
)
def test_hotpotqa_strict_types_on_a_real_record(data_dir, tmp_path, mutate, field, problem):
    recs = _hotpot_first(data_dir)
    label = f"#0 (id={recs[0]['_id']})"
    mutate(recs[0])
    path = _write(tmp_path, "h.json", recs)
    _expect_data_error(lambda: load_dataset("h", "hotpotqa", path), path, label, field, problem)


def test_hotpotqa_id_must_be_str_or_int(data_dir, tmp_path):
    recs = _hotpot_first(data_dir)
    recs[2]["_id"] = False
    path = _write(tmp_path, "h.json", recs)
    _expect_data_error(
        lambda: load_dataset("h", "hotpotqa", path),
        path,
        "#2",
        "_id",
        "expected str or int, got bool False",
    )


def test_2wiki_original_format_strict_types(data_dir, tmp_path):
    recs = _real(data_dir, "2wikimultihopqa/2wikimultihopqa_qa_sub.json")
    recs[0]["level"] = None  # null stays allowed for the optional meta fields
    assert (
        load_dataset("w", "2wiki", _write(tmp_path, "ok.json", recs)).questions[0].meta["level"]
        is None
    )
    recs[1]["supporting_facts"][0][1] = "0"
    path = _write(tmp_path, "w.json", recs)
    _expect_data_error(
        lambda: load_dataset("w", "2wiki", path),
        path,
        f"#1 (id={recs[1]['_id']})",
        "supporting_facts[0]",
        "a string and an integer",
    )


def _linearrag(data_dir, tmp_path, mutate):
    recs = _real(data_dir, "2wikimultihopqa/2wikimultihopqa_questions.json")[:3]
    mutate(recs)
    corpus = _write(
        tmp_path, "c.json", _real(data_dir, "2wikimultihopqa/2wikimultihopqa_sub_corpus.json")
    )
    path = _write(tmp_path, "w.json", recs)
    return path, lambda: load_dataset("w", "2wiki_linearrag", path, corpus)


@pytest.mark.parametrize(
    "mutate, record, field, problem",
    [
        (lambda rs: rs[0].update(question_type=1), 0, "question_type", "expected str, got int 1"),
        (
            lambda rs: rs[1]["evidence"][0].__setitem__(2, 851),
            1,
            "evidence[0]",
            "expected [subject, relation, object] strings",
        ),
        (lambda rs: rs[2].update(id=None), 2, "id", "expected str or int, got null"),
        (lambda rs: rs[2].update(answer=True), 2, "answer", "expected str, got bool True"),
    ],
)
def test_2wiki_linearrag_strict_types(data_dir, tmp_path, mutate, record, field, problem):
    path, load = _linearrag(data_dir, tmp_path, mutate)
    recs = json.loads(path.read_text())
    rid = recs[record]["id"]
    label = f"#{record} (id={rid})" if isinstance(rid, str) else f"#{record}"
    _expect_data_error(load, path, label, field, problem)


def test_corpus_strict_types(data_dir, tmp_path):
    q = data_dir / "musique/musique_qa_sub.json"
    corpus = _real(data_dir, "musique/musique_sub_corpus.json")
    corpus[5]["text"] = None
    c = _write(tmp_path, "c.json", corpus)
    _expect_data_error(lambda: _load_musique(q, c), c, "#5", "text", "expected str, got null")
    corpus[5]["text"], corpus[7]["title"] = "x", 1939
    c = _write(tmp_path, "c.json", corpus)
    _expect_data_error(lambda: _load_musique(q, c), c, "#7", "title", "expected str, got int 1939")
    c = _write(tmp_path, "c.json", [1, 2])
    with pytest.raises(DataError) as err:
        _load_musique(q, c)
    assert str(err.value) == f"{c}: record #0: expected an object, got int 1"


def test_title_to_sentences_corpus_strict(data_dir, tmp_path):
    corpus = _real(data_dir, "hotpotqa/hotpotqa_train_corpus.json")
    corpus["Alû"] = corpus["Alû"] + [3]
    c = _write(tmp_path, "c.json", corpus)
    with pytest.raises(
        DataError,
        match=r"c\.json: record title='Alû', field 'sentences': expected a list of strings",
    ):
        load_dataset("h", "hotpotqa", data_dir / "hotpotqa/hotpotqa_train.json", c)


def test_empty_corpus_is_an_error(data_dir, tmp_path):
    """Before: the LinearRAG loader took an empty corpus and marked every question's gold unmapped."""
    path, _ = _linearrag(data_dir, tmp_path, lambda rs: None)
    c = _write(tmp_path, "empty.json", [])
    with pytest.raises(DataError, match=r"empty\.json: holds no passages"):
        load_dataset("w", "2wiki_linearrag", path, c)


@pytest.mark.parametrize(
    "fmt, name",
    [
        ("musique", "q.json"),
        ("hotpotqa", "h.json"),
        ("2wiki", "w.json"),
        ("2wiki_linearrag", "l.json"),
    ],
)
def test_empty_question_list_is_an_error(data_dir, tmp_path, fmt, name):
    path = _write(tmp_path, name, [])
    corpus = (
        data_dir / "2wikimultihopqa/2wikimultihopqa_sub_corpus.json"
        if fmt == "2wiki_linearrag"
        else None
    )
    with pytest.raises(DataError, match=rf"{name}: holds no questions"):
        load_dataset("x", fmt, path, corpus)


@pytest.mark.parametrize("limit", ["abc", "2", True, 2.0, 0, -1, [2]])
def test_limit_must_be_null_or_a_positive_integer(data_dir, limit):
    from hopbench.core.errors import HopbenchError

    with pytest.raises(HopbenchError) as err:
        load_dataset(
            "m",
            "musique",
            data_dir / "musique/musique_qa_sub.json",
            data_dir / "musique/musique_sub_corpus.json",
            limit=limit,
        )
    msg = str(err.value)
    assert (
        msg.startswith("dataset.limit must be null or a positive integer, got ") and "\n" not in msg
    )
    assert f"({type(limit).__name__})" in msg


def test_limit_positive_integer_still_cuts(data_dir):
    ds = load_dataset(
        "m",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
        limit=2,
    )
    assert len(ds.questions) == 2 and len(ds.corpus) == 18


@pytest.mark.parametrize(
    "key, value, problem",
    [
        ("format", 3, "dataset.format must be a non-empty string, got 3 (int)"),
        ("name", None, "dataset.name must be a non-empty string, got None (null)"),
        (
            "questions_path",
            12,
            "dataset.questions_path must be a file path (a string), got 12 (int)",
        ),
        (
            "corpus_path",
            ["a"],
            "dataset.corpus_path must be a file path (a string), got ['a'] (list)",
        ),
        ("source", False, "dataset.source must be a non-empty string, got False (bool)"),
    ],
)
def test_dataset_config_types(data_dir, key, value, problem):
    from hopbench.core.errors import HopbenchError

    args = {
        "name": "m",
        "format": "musique",
        "questions_path": str(data_dir / "musique/musique_qa_sub.json"),
        "corpus_path": str(data_dir / "musique/musique_sub_corpus.json"),
        key: value,
    }
    with pytest.raises(HopbenchError) as err:
        load_dataset(**args)
    assert str(err.value) == problem


# --- JSON Lines (issue #16 item 5) -----------------------------------------------------------------


def _jsonl(tmp_path, name, records, *, blank_after=None):
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    if blank_after is not None:
        lines.insert(blank_after, "")
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _same_dataset(a, b):
    assert [(q.id, q.text, q.answers, q.gold_passage_ids, q.meta) for q in a.questions] == [
        (q.id, q.text, q.answers, q.gold_passage_ids, q.meta) for q in b.questions
    ]
    assert a.questions == b.questions
    assert [(p.id, p.title, p.text) for p in a.corpus] == [
        (p.id, p.title, p.text) for p in b.corpus
    ]


def test_musique_jsonl_equals_json(data_dir, tmp_path):
    qj, cj = data_dir / "musique/musique_qa_sub.json", data_dir / "musique/musique_sub_corpus.json"
    as_json = _load_musique(qj, cj)
    ql = _jsonl(tmp_path, "musique.jsonl", _real(data_dir, "musique/musique_qa_sub.json"))
    cl = _jsonl(
        tmp_path, "corpus.jsonl", _real(data_dir, "musique/musique_sub_corpus.json"), blank_after=4
    )
    assert len(ql.read_text().splitlines()) == 3
    _same_dataset(as_json, _load_musique(ql, cl))
    _same_dataset(as_json, _load_musique(ql, cj))
    # without a corpus file (corpus derived from the paragraphs) JSON and JSONL agree too
    _same_dataset(_load_musique(qj), _load_musique(ql))


def test_jsonl_is_detected_from_content_not_name(data_dir, tmp_path):
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    as_json = _load_musique(data_dir / "musique/musique_qa_sub.json")
    _same_dataset(as_json, _load_musique(_jsonl(tmp_path, "musique.json", recs)))


def test_hotpotqa_and_linearrag_jsonl(data_dir, tmp_path):
    hq, hc = (
        data_dir / "hotpotqa/hotpotqa_train.json",
        data_dir / "hotpotqa/hotpotqa_train_corpus.json",
    )
    _same_dataset(
        load_dataset("h", "hotpotqa", hq, hc),
        load_dataset("h", "hotpotqa", _jsonl(tmp_path, "h.jsonl", _real(data_dir, hq)), hc),
    )
    wq = data_dir / "2wikimultihopqa/2wikimultihopqa_questions.json"
    wc = data_dir / "2wikimultihopqa/2wikimultihopqa_sub_corpus.json"
    recs = _real(data_dir, wq)[:5]
    _same_dataset(
        load_dataset("w", "2wiki_linearrag", _write(tmp_path, "w.json", recs), wc),
        load_dataset(
            "w",
            "2wiki_linearrag",
            _jsonl(tmp_path, "w.jsonl", recs),
            _jsonl(tmp_path, "wc.jsonl", _real(data_dir, wc)),
        ),
    )


def test_single_record_jsonl_file(data_dir, tmp_path):
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    ds = _load_musique(_jsonl(tmp_path, "one.jsonl", recs[:1]))
    assert [q.id for q in ds.questions] == [recs[0]["id"]]


def test_malformed_jsonl_line_names_file_record_and_line(data_dir, tmp_path):
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    path = _jsonl(tmp_path, "m.jsonl", recs, blank_after=1)
    lines = path.read_text().split("\n")
    assert json.loads(lines[3])["id"] == recs[2]["id"]  # line 4 holds record #2 (line 2 is blank)
    lines[3] = '{"id": "x", "question": }'
    path.write_text("\n".join(lines))
    with pytest.raises(DataError) as err:
        _load_musique(path)
    assert (
        str(err.value)
        == f"{path}: record #2 (line 4): invalid JSON Lines record: Expecting value (column 25)"
    )


def test_jsonl_field_errors_carry_the_line(data_dir, tmp_path):
    recs = _real(data_dir, "musique/musique_qa_sub.json")
    recs[2]["paragraphs"][0]["is_supporting"] = "false"
    path = _jsonl(tmp_path, "m.jsonl", recs, blank_after=0)
    _expect_data_error(
        lambda: _load_musique(path),
        path,
        f"#2 (line 4, id={recs[2]['id']})",
        "paragraphs[0].is_supporting",
        "expected boolean",
    )
    corpus = _real(data_dir, "musique/musique_sub_corpus.json")
    corpus[9]["text"] = 0
    c = _jsonl(tmp_path, "c.jsonl", corpus)
    _expect_data_error(
        lambda: _load_musique(data_dir / "musique/musique_qa_sub.json", c),
        c,
        "#9 (line 10)",
        "text",
        "expected str, got int 0",
    )


def test_invalid_json_that_is_not_jsonl_keeps_the_json_error(tmp_path):
    path = _write(tmp_path, "q.json", '[{"id": "a"},\n {"id": }]')
    with pytest.raises(
        DataError, match=r"q\.json: invalid JSON at line 2 column 9: Expecting value"
    ):
        _load_musique(path)


# --- through the command line --------------------------------------------------------------------


def test_cli_bad_questions_file_exits_2_with_one_line_and_writes_no_run(data_dir, tmp_path):
    import os
    import subprocess
    import sys

    recs = _real(data_dir, "musique/musique_qa_sub.json")
    _string_booleans(recs[0])
    bad = _write(tmp_path, "bad.json", recs)
    runs = tmp_path / "runs"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            "dataset=musique_sub",
            f"dataset.questions_path={bad}",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.strip()]
    assert errors == [
        f"hopbench: error: {bad}: record #0 (id={recs[0]['id']}), field "
        "'paragraphs[0].is_supporting': expected boolean (true/false), got str 'false'"
    ]
    assert "Traceback" not in out.stdout
    # Hydra keeps its own log folder (runs/.hydra/<time>/); no run folder and no run config.yaml
    written = [
        p.relative_to(runs) for p in runs.rglob("*") if ".hydra" not in p.relative_to(runs).parts
    ]
    assert written == []
    assert not list(runs.glob("musique_sub*"))


def test_cli_bad_limit_exits_2_naming_dataset_limit(data_dir, tmp_path):
    import subprocess
    import sys

    runs = tmp_path / "runs"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            "dataset=musique_sub",
            "dataset.limit=abc",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2, out.stderr
    assert [line for line in out.stderr.splitlines() if line.strip()] == [
        "hopbench: error: dataset.limit must be null or a positive integer, got 'abc' (str)"
    ]
    assert not list(runs.glob("musique_sub*"))


def test_sample_seed_is_an_integer_and_limit_then_samples(data_dir):
    from hopbench.core.errors import HopbenchError
    from hopbench.data import load_dataset

    args = (
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )
    first = [q.id for q in load_dataset(*args).questions]
    sample = [q.id for q in load_dataset(*args, limit=10, sample_seed=3).questions]
    assert len(sample) == 10 and set(sample) <= set(first) and sample != first[:10]
    assert sample == [q.id for q in load_dataset(*args, limit=10, sample_seed=3).questions]
    assert (
        load_dataset(*args, limit=10).fingerprint
        != load_dataset(*args, limit=10, sample_seed=3).fingerprint
    )
    for bad in ("3", True, 1.5):
        with pytest.raises(HopbenchError, match="dataset.sample_seed must be null or an integer"):
            load_dataset(*args, sample_seed=bad)
