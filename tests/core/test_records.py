"""`hopbench.core.records`: the row schema (field order is the file's), traces read from any version."""

from __future__ import annotations

import json

import pytest

from hopbench.core.records import COST_KEYS, BadLine, Row, Seed, Trace, read_rows, row_line
from hopbench.data.schema import Question
from hopbench.retrieve.base import Retrieval

ROW_FIELDS = [
    "id",
    "question",
    "gold_answers",
    "gold_passage_ids",
    "gold_complete",
    "kind",
    "label",
    "meta",
    "ranked_passage_ids",
    "scores",
    "answer",
    "metrics",
    "latency_ms",
    "trace",
]


def _question() -> Question:
    return Question(
        id="q1",
        text="Where was the author of Book A born?",
        answers=["Paris"],
        gold_passage_ids=["pA", "pB"],
        meta={"hops": 2},
    )


def test_a_row_writes_its_fields_in_the_files_order():
    r = Row.of(
        _question(),
        Retrieval(["pA", "x1"], [0.9, 0.1], {"seeds": [["e:a", 1.0]]}),
        answer=None,
        metrics={"recall@1": 0.5},
        latency_ms=1.5,
    )
    d = r.to_dict()
    assert list(d) == ROW_FIELDS  # no reader_trace without a reader
    assert d["trace"] == {"seeds": [["e:a", 1.0]]}  # the retriever's trace as it returned it
    assert list(
        Row.of(
            _question(),
            Retrieval([], [], {}),
            answer="Paris",
            metrics={},
            latency_ms=1.0,
            reader_trace={"calls": []},
        ).to_dict()
    ) == ROW_FIELDS + ["reader_trace"]
    assert Row.from_dict(json.loads(row_line(r))) == r


def test_rows_of_earlier_versions_load_with_defaults():
    r = Row.from_dict(
        {
            "id": "q1",
            "question": "?",
            "ranked_passage_ids": ["p"],
            "metrics": {},
            "latency_ms": 1.0,
            "trace": {},
        }
    )
    assert r.gold_complete is True and r.kind == "qa" and r.meta == {} and r.reader_trace is None
    assert r.reading is None and r.retrieval == Trace()


@pytest.mark.parametrize(
    "seeds, expected",
    [
        (
            [["e:paris", 0.4], ["e:france", 0.1]],
            [Seed("e:paris", 0.4), Seed("e:france", 0.1)],
        ),  # hipporag
        (["paris", "france"], [Seed("paris"), Seed("france")]),  # neuropath
        (
            [
                {"entity": "e:paris", "activation": 1.0, "mention": "paris", "match": "exact"}
            ],  # spreading act.
            [Seed("e:paris", 1.0, {"mention": "paris", "match": "exact"})],
        ),
        (
            [{"entity": "e:x", "activation": 0.5, "mention": "x", "match": "vector", "cos": 0.7}],
            [Seed("e:x", 0.5, {"mention": "x", "match": "vector", "cos": 0.7})],
        ),
    ],
)
def test_the_three_seed_shapes_read_as_one(seeds, expected):
    assert Trace.from_dict({"seeds": seeds, "n_activated": 3}).seeds == expected


def test_trace_common_fields_and_extra():
    t = Trace.from_dict(
        {
            "mentions": ["a"],
            "seeds": [],
            "filter_error": "bad reply",
            "llm_cost": dict.fromkeys(COST_KEYS, 0),
            "timings": {"ppr_s": 0.1},
            "hops": [1],
        }
    )
    assert t.seeds == [] and t.timings == {"ppr_s": 0.1} and t.llm_cost["llm_calls"] == 0
    assert t.fallback == [{"step": "fact_filter", "reason": "bad reply"}]  # a legacy flag, read
    assert t.extra == {"mentions": ["a"], "hops": [1]}
    assert Trace.from_dict(t.to_dict()) == t
    # the dense fallback as each version flagged it: one entry
    for old in (
        {"fallback": "no seeds"},
        {"dense_fallback": True},
        {"fallback": [{"step": "dense_fallback", "reason": "no seeds"}]},
    ):
        [entry] = Trace.from_dict(old).fallback
        assert entry["step"] == "dense_fallback"
    assert Trace.from_dict({"query_timeout": True}).extra == {"query_timeout": True}


def test_read_rows_lenient_and_strict(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(b'{"id": "a", "metrics": {}}\n{oops\n\n{"id": "a"}\n[1]\n{"id": "b"}\n\xff\n')
    rows, corrupt, dupes = read_rows(path)
    assert [r["id"] for r in rows] == ["a", "b"] and corrupt == 3 and dupes == 1
    with pytest.raises(BadLine) as exc:
        read_rows(path, strict=True)
    assert exc.value.line == 2 and "not valid JSON" in exc.value.problem
