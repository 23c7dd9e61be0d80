"""reader.context_extras: the retriever's notes (QAFD's cluster summaries) reach the reader's
prompt, over a scripted OpenAI-compatible server, in a real run (reader=qa_clusters)."""

from __future__ import annotations

import json

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.evaluate import token_budget
from hopbench.evaluate.metric_registry import Outcome, score
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.llm.client import LLMClient
from hopbench.llm.prompts import qa
from hopbench.read import ClaimVerifier, QAReader
from hopbench.retrieve.qafd.prompts import qafd_clusters, qafd_keywords
from tests.helpers.scripted_llm_server import ScriptedServer, reply


def test_notes_go_before_the_passages_and_plain_prompts_stay_as_they_were(musique_sub):
    q, passages = musique_sub.questions[0], musique_sub.corpus[:2]
    plain = qa.messages(q.text, passages)
    assert qa.messages(q.text, passages, notes=[]) == plain
    with_notes = qa.messages(q.text, passages, notes=["first note", "second"])
    assert with_notes[:-1] == plain[:-1]
    assert with_notes[-1]["content"] == (
        f"{qa.NOTES_HEADING}\n- first note\n- second\n\n" + plain[-1]["content"]
    )
    with pytest.raises(HopbenchError, match="context_extras"):
        ClaimVerifier(context_extras=True)


def test_qa_reader_shows_the_notes(musique_sub):
    srv = ScriptedServer([reply(json.dumps({"reasoning": "r", "answer": "x"}))])
    try:
        llm = LLMClient(base_url=srv.base_url, model="scripted", identity="scripted", cache=None)
        out = (
            QAReader(context_extras=True)
            .bind(llm)
            .answer(musique_sub.questions[0], musique_sub.corpus[:3], notes=["a cluster summary"])
        )
    finally:
        srv.close()
    assert out.trace["notes"] == 1
    assert "- a cluster summary\n\nWikipedia Title:" in srv.requests[0]["messages"][-1]["content"]


def test_run_with_flow_diffusion_and_qa_clusters(tmp_path, data_dir, cache_dir, musique_kg):
    seen = {"keywords": 0, "clusters": 0, "qa": []}

    def respond(body):
        system = body["messages"][0]["content"]
        if system == qafd_keywords.SYSTEM:
            seen["keywords"] += 1
            return reply(
                json.dumps(
                    {"high_level_keywords": ["Organisation"], "low_level_keywords": ["Reagan"]}
                )
            )
        if system == qafd_clusters.SYSTEM:
            seen["clusters"] += 1
            n = body["messages"][-1]["content"].count("Source entity:")
            return reply("\n".join(f"Cluster {i}: note {i}" for i in range(1, n + 1)))
        seen["qa"].append(body["messages"][-1]["content"])
        return reply(json.dumps({"reasoning": "r", "answer": "x"}))

    srv = ScriptedServer(respond=respond)
    try:
        cfg = load_config(
            [
                f"paths.data_dir={data_dir}",
                f"paths.runs_dir={tmp_path / 'runs'}",
                f"paths.cache_dir={cache_dir}",
                "progress=false",
                "dataset=musique_sub",
                "retriever=flow_diffusion_bench",
                "retriever.n_seeds=3",
                "reader=qa_clusters",
                "llm=server",
                f"llm.base_url={srv.base_url}",
                "llm.model=scripted",
                "llm.cache=false",
            ]
        )
        m = execute(cfg)
    finally:
        srv.close()
    assert m["reader"] == "qa_clusters" and m["n_answer_scored"] == 3
    assert seen["keywords"] == 3 and seen["clusters"] >= 1 and len(seen["qa"]) == 3
    run = next((tmp_path / "runs").glob("musique_sub/flow_diffusion_bench/*/"))
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    for row in rows:
        notes = row["trace"]["cluster_summaries"]
        assert row["reader_trace"]["notes"] == len(notes)
        # what the notes took of the context is recorded, and R@Nt paid it first (issue #57)
        assert row["reader_trace"]["notes_tokens"] == sum(token_budget.count_tokens(notes))
        assert row["metrics"]["recall@1024t"] == score(Outcome.from_row(row))["recall@1024t"]
        if notes:
            prompt = next(p for p in seen["qa"] if p.endswith(f"Question: {row['question']}"))
            assert prompt.startswith(f"{qa.NOTES_HEADING}\n- note 1\n")
    assert any(row["trace"]["cluster_summaries"] for row in rows)
