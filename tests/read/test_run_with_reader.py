"""The Hydra run with a reader: oracle passages -> QA reader over a scripted OpenAI-compatible
server (llm=server) -> em/f1/jsr and LLM accounting in metrics.json."""

from __future__ import annotations

import json

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from tests.helpers.scripted_llm_server import ScriptedServer, reply


def _cfg(tmp_path, data_dir, cache_dir, *overrides):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
            *overrides,
        ]
    )


def test_reader_without_llm_refuses_to_start(tmp_path, data_dir, cache_dir):
    with pytest.raises(HopbenchError, match="reader 'qa' needs an LLM; choose one with llm=local"):
        execute(_cfg(tmp_path, data_dir, cache_dir, "reader=qa"))


def test_run_with_oracle_and_qa_reader_fills_answer_metrics(
    tmp_path, data_dir, cache_dir, musique_sub
):
    gold = {q.text: q.answers[0] for q in musique_sub.questions}
    wrong = musique_sub.questions[2].text

    def respond(body):
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        answer = "not it" if question == wrong else gold[question]
        return reply(
            json.dumps({"reasoning": "r", "answer": answer}),
            prompt_tokens=100,
            completion_tokens=10,
        )

    srv = ScriptedServer(respond=respond)
    try:
        m = execute(
            _cfg(
                tmp_path,
                data_dir,
                tmp_path / "llm-cache",
                "retriever=oracle",
                "reader=qa",
                "llm=server",
                f"llm.base_url={srv.base_url}",
                "llm.model=scripted",
            )
        )
    finally:
        srv.close()
    assert len(srv.requests) == 3
    assert m["reader"] == "qa" and m["n_answer_scored"] == 3
    assert m["fcr@5"] == 1.0
    assert m["em"] == pytest.approx(2 / 3) and m["jsr@5"] == pytest.approx(2 / 3)
    assert (m["llm_calls"], m["llm_prompt_tokens"], m["llm_completion_tokens"]) == (3, 300, 30)
    assert m["llm_cache_hits"] == 0 and m["llm_failures"] == 0
    run = next((tmp_path / "runs").glob("musique_sub/oracle/*/"))
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert [r["answer"] for r in rows] == [
        gold[rows[0]["question"]],
        gold[rows[1]["question"]],
        "not it",
    ]
    assert all(
        r["reader_trace"]["reader"] == "qa" and len(r["reader_trace"]["passage_ids"]) == 5
        for r in rows
    )
