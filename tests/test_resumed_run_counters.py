"""metrics.json's llm_* counters are summed from the rows, so a resumed run reports every
question's calls, not only those of its last process (issue #28, item 14)."""

from __future__ import annotations

import json

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from tests.helpers.scripted_llm_server import ScriptedServer, error, reply


def test_a_resumed_run_counts_the_llm_calls_of_every_row(tmp_path, data_dir, musique_sub):
    gold = {q.text: q.answers[0] for q in musique_sub.questions}
    last = musique_sub.questions[2].text
    state = {"up": False}

    def respond(body):
        retry = body["messages"][-1]["content"].startswith("That reply does not match")
        question = body["messages"][-3 if retry else -1]["content"].rsplit("Question: ", 1)[1]
        if question == last and not state["up"]:
            return error(401, "key revoked")  # fatal: the first process stops after two rows
        # the first attempt of every question is off-schema: one format retry each
        if not retry:
            return reply('{"reasoning": "r"}', prompt_tokens=90, completion_tokens=9)
        return reply(
            json.dumps({"reasoning": "r", "answer": gold[question]}),
            prompt_tokens=100,
            completion_tokens=10,
        )

    srv = ScriptedServer(respond=respond)
    cfg = load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
            "dataset=musique_sub",
            "retriever=oracle",
            "reader=qa",
            "llm=server",
            f"llm.base_url={srv.base_url}",
            "llm.model=scripted",
            "concurrency=1",
        ]
    )
    try:
        with pytest.raises(HopbenchError, match="refused the API key"):
            execute(cfg)
        state["up"] = True
        m = execute(cfg)
    finally:
        srv.close()
    run = next((tmp_path / "runs").glob("musique_sub/oracle/*/"))
    assert len((run / "predictions.jsonl").read_text().splitlines()) == 3
    assert m["em"] == 1.0
    # three questions, two attempts each (the second process made two of the six)
    assert (m["llm_calls"], m["llm_format_retries"]) == (6, 3)
    assert (m["llm_prompt_tokens"], m["llm_completion_tokens"]) == (3 * 190, 3 * 19)
    assert m["llm_cache_hits"] == 0 and m["llm_failures"] == 0
