"""Every retriever config in configs/retriever end to end through `execute()` on the MuSiQue
subset (real graph, real runs). The list is discovered: a new configs/retriever/<name>.yaml is
run here with no edit. Configs whose retriever declares that it needs an LLM or a Neo4j server
are left to their own tests (scripted LLMs, the neo4j-marked tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.harness.compose import build_retriever, load_config
from hopbench.harness.runner import execute

CONFIGS = sorted(p.stem for p in (Path(CONFIG_DIR) / "retriever").glob("*.yaml"))


def _compose(retriever: str, *overrides: str):
    return load_config([f"retriever={retriever}", *overrides])


def offline_graph_retrievers() -> list[str]:
    """Configs that run without an LLM and without Neo4j and use the knowledge graph, read from
    what each retriever declares (`needs_graph`, `needs_llm`, `needs_graphdb`)."""
    out = []
    for name in CONFIGS:
        try:
            r = build_retriever(_compose(name, "llm=none"))
        except HopbenchError:  # a setting that requires an LLM (e.g. catrag's edge weighting)
            continue
        if r.needs_graph and not r.needs_llm and not r.needs_graphdb:
            out.append(name)
    return out


OFFLINE = offline_graph_retrievers()


def test_discovery_finds_the_offline_graph_retrievers():
    assert {
        "hipporag",
        "hipporag_hb",
        "hipporag1",
        "spreading_activation",
        "spreading_activation_nogate",
        "flow_diffusion",
        "flow_diffusion_bench",
        "flow_diffusion_joint",
        "flow_diffusion_code",
    } <= set(OFFLINE)
    assert not {"dense", "oracle", "catrag", "neuropath", "spreading_activation_neo4j"} & set(
        OFFLINE
    )


@pytest.mark.parametrize("retriever", OFFLINE)
def test_execute_runs_each_graph_retriever(retriever, tmp_path, data_dir, cache_dir, musique_kg):
    cfg = _compose(
        retriever,
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
    )
    metrics = execute(cfg)
    assert metrics["n_questions"] == 3 and metrics["retriever"] == retriever
    # hipporag and flow_diffusion_code run on HippoRAG 2's own graph construction, the others on hopbench's
    assert metrics["graph"] == (
        "spacy/hipporag2" if retriever in ("hipporag", "flow_diffusion_code") else "spacy"
    )
    assert 0.0 < metrics["recall@5"] <= 1.0
    run = next(
        p
        for p in (tmp_path / "runs" / "musique_sub" / retriever).iterdir()
        if not p.name.startswith(".")
    )  # not the run lock beside it
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    for r in rows:
        assert len(r["ranked_passage_ids"]) == 10 and len(set(r["ranked_passage_ids"])) == 10
        assert r["trace"]  # seeds / facts / activations recorded per question
