"""Oversized input is refused at load time with one line naming file, record and field (issue
#54, defects 1 and 11): a text over `dataset.max_text_chars`, a JSON value nested deeper than
the parser can read, a number with more digits than Python converts."""

import json

import pytest

from hopbench.core.errors import DataError, HopbenchError
from hopbench.data import load_dataset
from hopbench.data.text_limit import DEFAULT_MAX_TEXT_CHARS

LIMIT = DEFAULT_MAX_TEXT_CHARS
DEEP = 200_000  # the nesting depth


def _musique(text_of_paragraph_3: str) -> list[dict]:
    paragraphs = [
        {"idx": j, "title": f"T{j}", "paragraph_text": f"text {j}", "is_supporting": j == 0}
        for j in range(4)
    ]
    paragraphs[3]["paragraph_text"] = text_of_paragraph_3
    return [
        {"id": "q0", "question": "Who?", "answer": "A", "paragraphs": paragraphs},
        {"id": "q1", "question": "What?", "answer": "B", "paragraphs": paragraphs[:2]},
    ]


def _write(tmp_path, name, data) -> str:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(p)


def test_a_passage_over_the_limit_names_record_and_field(tmp_path):
    path = _write(tmp_path, "q.json", _musique("word " * (LIMIT // 5 + 1)))
    with pytest.raises(DataError) as exc:
        load_dataset("m", "musique", path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert f"{path}: record #0 (id=q0), field 'paragraphs[3].paragraph_text'" in msg
    assert f"{LIMIT + 5:,} characters" in msg and f"limit of {LIMIT:,}" in msg
    assert "dataset.max_text_chars" in msg


def test_a_passage_at_the_limit_loads_and_the_limit_is_a_setting(tmp_path):
    at_limit = "x" * LIMIT
    ds = load_dataset("m", "musique", _write(tmp_path, "a.json", _musique(at_limit)))
    assert any(p.text == at_limit for p in ds.corpus)
    over = _write(tmp_path, "b.json", _musique("x" * (LIMIT + 1)))
    assert len(load_dataset("m", "musique", over, max_text_chars=LIMIT + 1).corpus) == 4
    with pytest.raises(DataError, match=r"'paragraphs\[0\].paragraph_text': is 6 characters long"):
        load_dataset("m", "musique", over, max_text_chars=5)  # "text 0"
    for bad in (0, -1, True, "100", 1.5):
        with pytest.raises(HopbenchError, match="dataset.max_text_chars must be"):
            load_dataset("m", "musique", over, max_text_chars=bad)


def test_every_format_checks_its_texts(tmp_path):
    huge = "y" * (LIMIT + 1)
    ok_q = {"_id": "h0", "question": "Q?", "answer": "A", "supporting_facts": [["T", 0]]}
    hotpot = [{**ok_q, "context": [["T", ["short. ", huge]]]}]
    with pytest.raises(DataError, match=r"record #0 \(id=h0\), field 'context\[0\]': is 100,008"):
        load_dataset("h", "hotpotqa", _write(tmp_path, "h.json", hotpot))
    questions = _write(tmp_path, "hq.json", [{**ok_q, "context": [["T", ["short."]]]}])
    as_dict = _write(tmp_path, "c1.json", {"T": ["short."], "U": [huge[:-9], "123456789"]})
    with pytest.raises(DataError, match=r"c1.json: record title='U', field 'sentences': is 100,0"):
        load_dataset("h", "hotpotqa", questions, as_dict)
    as_list = _write(
        tmp_path, "c2.json", [{"title": "T", "text": "s"}, {"title": huge, "text": "t"}]
    )
    with pytest.raises(DataError, match=r"c2.json: record #1, field 'title': is 100,001"):
        load_dataset("h", "hotpotqa", questions, as_list)
    claims = _write(tmp_path, "hv.json", [{"uid": "c0", "claim": huge, "supporting_facts": []}])
    with pytest.raises(DataError, match=r"record #0 \(id=c0\), field 'claim': is 100,001"):
        load_dataset("v", "hover", claims, as_list)
    claims = _write(
        tmp_path, "hv2.json", [{"uid": "c0", "claim": "C.", "supporting_facts": [["T", 0]]}]
    )
    evidence = _write(
        tmp_path, "ev.jsonl", json.dumps({"original": "C.", "gold_evidence": huge}) + "\n"
    )
    with pytest.raises(DataError, match=r"ev.jsonl: record line 1, field 'gold_evidence': is 100"):
        load_dataset("v", "hover", claims, evidence)


def test_a_registered_format_is_checked_too(tmp_path):
    from hopbench.data.registry import FORMATS, register_format
    from hopbench.data.schema import Passage, Question

    def loader(questions_path, corpus_path):
        p = Passage("p1", "Big", "z" * (LIMIT + 1))
        return [Question("q1", "Q?", ["A"], ["p1"])], [p]

    register_format("oversized_test_format", loader)
    try:
        with pytest.raises(DataError, match=r"passage 'Big' \(id p1\), field 'text': is 100,001"):
            load_dataset("o", "oversized_test_format", _write(tmp_path, "o.json", "[]"))
    finally:
        FORMATS.pop("oversized_test_format")


@pytest.mark.parametrize(
    "name, text, where",
    [
        ("deep.json", "[" * DEEP + "]" * DEEP, "invalid JSON: nested deeper than"),
        ("deep_field.json", '[{"id": "q", "question": ' + "[" * DEEP, "invalid JSON: nested"),
        ("deep.jsonl", '{"id": 1}\n' + '{"id": ' + "[" * DEEP + "]" * DEEP + "}\n", "line 2"),
        ("digits.json", '[{"id": ' + "7" * 5000 + "}]", "invalid JSON: a number with more"),
    ],
)
def test_deep_or_huge_values_are_one_line(tmp_path, name, text, where):
    path = _write(tmp_path, name, text)
    with pytest.raises(DataError) as exc:
        load_dataset("m", "musique", path)
    assert str(exc.value).startswith(path) and where in str(exc.value)
    assert "\n" not in str(exc.value)


def test_deep_corpus_and_evidence_files_are_one_line(tmp_path):
    claims = _write(tmp_path, "c.json", [{"uid": "c0", "claim": "C.", "supporting_facts": []}])
    corpus = _write(tmp_path, "corpus.json", "[" * DEEP + "]" * DEEP)
    with pytest.raises(DataError, match="corpus.json: invalid JSON: nested deeper"):
        load_dataset("v", "hover", claims, corpus)
    evidence = _write(tmp_path, "ev.jsonl", '{"original": ' + "[" * DEEP + "\n")
    with pytest.raises(DataError, match=r"ev.jsonl: record line 1: invalid JSON: nested deeper"):
        load_dataset("v", "hover", claims, evidence)
    # the format sniffing of a corpus that is not named .jsonl reads its first line too
    sniffed = _write(tmp_path, "ev.txt", '{"original": ' + "[" * DEEP + "\n")
    with pytest.raises(DataError, match="ev.txt: invalid JSON"):
        load_dataset("v", "hover", claims, sniffed)


def test_the_cli_says_one_line_and_exits_2(tmp_path, child_env):
    import subprocess
    import sys

    path = _write(tmp_path, "deep.json", "[" * DEEP + "]" * DEEP)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            "dataset=custom",
            "dataset.format=musique",
            f"dataset.questions_path={path}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "retriever=dense",
            "progress=false",
        ],
        capture_output=True,
        text=True,
        env=child_env,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("hopbench: error:")]
    assert len(errors) == 1 and f"{path}: invalid JSON: nested deeper than" in errors[0]
    assert "Traceback" not in proc.stderr


def test_messages_quote_a_huge_or_odd_value_in_one_short_printable_line(tmp_path):
    """Found by the fuzz test (test_fuzz_loaders.py): ids and values were quoted whole."""
    huge_id = "i" * 50_000
    path = _write(tmp_path, "q.json", [{"id": huge_id, "question": "Q?", "answer": 1}])
    with pytest.raises(DataError) as exc:
        load_dataset("m", "musique", path)
    assert f"id={'i' * 80}... (50,000 characters)), field 'answer'" in str(exc.value)
    assert len(str(exc.value)) < 400
    path = _write(tmp_path, "q2.json", [{"id": "a\nb\ud800", "question": "Q?", "answer": 1}])
    with pytest.raises(DataError) as exc:
        load_dataset("m", "musique", path)
    assert "(id=a\\nb\\ud800), field 'id': not valid Unicode" in str(exc.value)
    str(exc.value).encode("utf-8")  # printable
    claims = _write(tmp_path, "c.json", [{"uid": "c", "claim": "C.", "label": "x" * 9000}])
    with pytest.raises(DataError, match=r"field 'label': expected one of") as exc:
        load_dataset("v", "hover", claims, claims)
    assert len(str(exc.value)) < 400


def test_a_lone_surrogate_in_a_context_or_a_corpus_title_is_refused(tmp_path):
    """Found by the fuzz test: these texts were not checked, so a lone surrogate was loaded."""
    ok_q = {"_id": "h0", "question": "Q?", "answer": "A", "supporting_facts": [["T", 0]]}
    bad = _write(tmp_path, "h.json", [{**ok_q, "context": [["T", ["lone \ud800"]]]}])
    with pytest.raises(DataError, match=r"field 'context\[0\]': not valid Unicode text"):
        load_dataset("h", "hotpotqa", bad)
    questions = _write(tmp_path, "hq.json", [{**ok_q, "context": [["T", ["fine."]]]}])
    corpus = _write(tmp_path, "c.json", {"T": ["fine."], "U\udc00": ["x"]})
    with pytest.raises(DataError, match=r"record title='U\\udc00', field 'title': not valid"):
        load_dataset("h", "hotpotqa", questions, corpus)


def test_the_limit_is_a_run_setting_outside_the_run_hash(tmp_path, data_dir):
    from hopbench.harness.compose import build_dataset, build_retriever, load_config
    from hopbench.harness.run_store import config_hash
    from hopbench.harness.runner import semantic_config

    base = [f"paths.data_dir={data_dir}", "dataset=musique_sub", "retriever=dense"]

    def run_hash(*extra):
        cfg = load_config([*base, *extra])
        return config_hash(semantic_config(cfg, build_dataset(cfg), build_retriever(cfg)))

    assert run_hash("+dataset.max_text_chars=200000") == run_hash()
    with pytest.raises(DataError, match=r"over the limit of 50 \(dataset.max_text_chars"):
        build_dataset(load_config([*base, "+dataset.max_text_chars=50"]))
