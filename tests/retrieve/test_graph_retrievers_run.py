"""Each graph retriever end to end through `execute()` on the MuSiQue subset (real graph, real runs)."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir

from hopbench.paths import CONFIG_DIR
from hopbench.runner import execute

RETRIEVERS = ["hipporag", "hipporag1", "spreading_activation", "spreading_activation_nogate",
              "flow_diffusion", "flow_diffusion_code"]


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_execute_runs_each_graph_retriever(retriever, tmp_path, data_dir, cache_dir, musique_kg):
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=[
            f"paths.data_dir={data_dir}", f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}", "progress=false", "dataset=musique_sub",
            f"retriever={retriever}"])
    metrics = execute(cfg)
    assert metrics["n_questions"] == 3 and metrics["retriever"] == retriever
    assert 0.0 < metrics["recall@5"] <= 1.0
    run = next(p for p in (tmp_path / "runs" / "musique_sub" / retriever).iterdir()
               if not p.name.startswith("."))  # not the run lock beside it
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    for r in rows:
        assert len(r["ranked_passage_ids"]) == 10 and len(set(r["ranked_passage_ids"])) == 10
        assert r["trace"]  # seeds / facts / activations recorded per question
