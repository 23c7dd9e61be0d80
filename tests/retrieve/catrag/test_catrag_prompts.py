"""CatRAG's prompts in the authors' design: the reply-line parser, the filter's mapping back to
candidates, and `prompts: official` reading a checkout (a synthetic one: no authors' text here)."""

from __future__ import annotations

import json

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.catrag.prompts import fact_filter_demos as fd
from hopbench.retrieve.catrag.prompts import neighbour_lines as nl
from hopbench.retrieve.catrag.prompts import official_catrag as oc


def test_lines_parse_by_id_then_name_then_containment():
    names = ["danzig", "Nobel Prize", "the tin drum", "german", "poland"]
    reply = (
        "Answer:\n1 (danzig): 10 | the birthplace\n"
        "(nobel prize): 2\n"
        "3 (tin drum): 12 | above ten\n"
        "the entity (tin drum film): 6\n"
    )
    got = nl.parse(reply, names)
    assert got == [10, 2, 10, None, None]  # 3: by id, clamped; 4 and 5: not named


def test_lines_containment_fallback_and_later_lines_win():
    names = ["tin drum", "lkab"]
    got = nl.parse("x (the tin drum novel): 7\n2 (lkab): 3\n2 (lkab): 8", names)
    assert got == [7, 8]


def test_filter_maps_generated_facts_back_in_reply_order_with_repeats_and_limit():
    cands = [("a", "r", "b"), ("c", "s", "d"), ("e", "t", "f")]
    assert fd.selected_positions([["e", "t", "f"], ["a", "r", "b"]], cands, 5) == [2, 0]
    assert fd.selected_positions([["c", "s", "dd"], ["c", "s", "d"]], cands, 5) == [1, 1]
    assert fd.selected_positions([["a", "r", "b"]] * 3, cands, 2) == [0, 0]
    assert fd.selected_positions([], cands, 5) == []


def test_official_filter_reply_parse():
    assert fd.parse_official(
        '[[ ## fact_after_filter ## ]]\n{"fact": [["a", "r", "b"]]}\n\n[[ ## completed ## ]]'
    ) == [["a", "r", "b"]]
    assert fd.parse_official("[[ ## fact_after_filter ## ]]\n{'fact': [['a', 'r', 'b']]}") == [
        ["a", "r", "b"]
    ]
    assert fd.parse_official("no fields at all") == []


def _fake_checkout(tmp_path):
    t = tmp_path / "prompts" / "templates"
    t.mkdir(parents=True)
    for name, var in (
        (
            "fact_score_with_sum",
            "Q=${query} S=${seed_entity} F=${seed_triplet}\n${neighbor_entities}",
        ),
        ("node_summarize", "E=${entity} N=${summary_length} L=${language}\n${fact_triplets}"),
        ("ner_query", "Q=${query}"),
    ):
        (t / f"{name}.py").write_text(
            f'sys_text = "system of {name}"\n'
            f"prompt_template = [{{'role': 'system', 'content': sys_text}},\n"
            f"    {{'role': 'user', 'content': {var!r}}}]\n"
        )
    d = tmp_path / "prompts" / "dspy_prompts"
    d.mkdir()
    (d / "filter_x.json").write_text(
        json.dumps(
            {
                "prog": {
                    "system": "SYS",
                    "demos": [
                        {
                            "question": "q1",
                            "fact_before_filter": "{}",
                            "fact_after_filter": '{"fact": []}',
                        }
                    ],
                }
            }
        )
    )
    return tmp_path


def test_official_prompts_are_read_without_executing_and_rendered_as_the_code(tmp_path):
    p = oc.OfficialCatRAGPrompts(_fake_checkout(tmp_path))
    msgs = p.score_messages("who?", [("A", "R", "B")], "a", [("b", [("a", "r", "b")], "b is x. ")])
    assert msgs[0] == {"role": "system", "content": "system of fact_score_with_sum"}
    assert msgs[1]["content"] == (
        'Q=who? S=a F=("a", "r", "b")\n'
        "[1] \"b\" | LINKING FACT: ('a', 'r', 'b') | SUMMARY: b is x. \n"
    )
    s = p.summary_messages("kiruna", [("kiruna", "in", "sweden")])
    assert s[1]["content"] == "E=kiruna N=150 L=English\n{\n('kiruna', 'in', 'sweden')\n}"
    f = p.filter_messages("q", [("a", "r", "b")])
    assert [m["role"] for m in f] == ["system", "user", "assistant", "user"]
    assert '"fact": [["a", "r", "b"]]' in f[-1]["content"]
    assert oc.ner_entities('```json\n{"named_entities": ["Kiruna"]}\n```') == ["Kiruna"]
    assert oc.summary_text("Answer: short.") == "short." and oc.summary_text(" plain ") == "plain"


def test_official_prompts_refuse_a_folder_that_is_not_a_checkout(tmp_path):
    with pytest.raises(HopbenchError, match="no prompts/templates"):
        oc.OfficialCatRAGPrompts(tmp_path)
    (tmp_path / "prompts" / "templates").mkdir(parents=True)
    (tmp_path / "prompts" / "templates" / "fact_score_with_sum.py").write_text(
        "prompt_template = [f(x)]\n"
    )
    with pytest.raises(HopbenchError, match="not a dict"):
        oc.OfficialCatRAGPrompts(tmp_path)
