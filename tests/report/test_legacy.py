"""Runs and reference rows of ``hipporag`` from before its graph construction was a setting are
read as ``hipporag_hb`` (the computation's name today)."""

from __future__ import annotations

import json

import pandas as pd

from hopbench.report.legacy import current_name, migrate_rows
from hopbench.report.reference import load_table
from hopbench.report.runs import Run


def _run(retriever_cfg: dict) -> Run:
    from pathlib import Path
    return Run(dir=Path("runs/musique/hipporag/abc"), metrics={"retriever": "hipporag"},
               config={"retriever": {"name": "hipporag", **retriever_cfg}}, predictions=[])


def test_a_pre_construction_hipporag_run_is_hipporag_hb_and_others_keep_their_names():
    old = _run({"damping": 0.5, "seeding": "hipporag2"})
    assert old.retriever == "hipporag_hb" and old.params["graph_construction"] == "hopbench"
    assert old.params_diff == {}  # at hipporag_hb's defaults
    new = _run({"damping": 0.5, "seeding": "hipporag2", "graph_construction": "hipporag2"})
    assert new.retriever == "hipporag" and new.params["graph_construction"] == "hipporag2"
    assert current_name("hipporag", {"seeding": "hipporag1"})[0] == "hipporag"
    assert current_name("catrag", {})[0] == "catrag"


def test_reference_rows_are_migrated_on_load(tmp_path):
    rows = pd.DataFrame([
        {"dataset": "musique", "retriever": "hipporag", "param.seeding": "hipporag2",
         "params_json": json.dumps({"seeding": "hipporag2", "damping": 0.5})},
        {"dataset": "musique", "retriever": "hipporag", "param.seeding": "hipporag2",
         "param.graph_construction": "hipporag2",
         "params_json": json.dumps({"seeding": "hipporag2", "graph_construction": "hipporag2"})},
        {"dataset": "musique", "retriever": "dense", "params_json": "{}"},
    ])
    rows.to_parquet(tmp_path / "leaderboard.parquet")
    got = load_table(tmp_path, "leaderboard")
    assert got["retriever"].tolist() == ["hipporag_hb", "hipporag", "dense"]
    assert got["param.graph_construction"].tolist()[:2] == ["hopbench", "hipporag2"]
    assert json.loads(got["params_json"][0])["graph_construction"] == "hopbench"
    assert migrate_rows(got).equals(got)  # idempotent


def test_a_joint_flow_diffusion_run_is_flow_diffusion_joint():
    """flow_diffusion ranked by one joint diffusion before issue #32; its `variant` setting says so."""
    from pathlib import Path
    old = Run(dir=Path("runs/musique/flow_diffusion/abc"), metrics={"retriever": "flow_diffusion"},
              config={"retriever": {"name": "flow_diffusion", "variant": "paper", "alpha": 50.0}}, predictions=[])
    assert old.retriever == "flow_diffusion_joint"
    assert current_name("flow_diffusion", {"mode": "hybrid"})[0] == "flow_diffusion"
    rows = pd.DataFrame([{"dataset": "musique", "retriever": "flow_diffusion", "param.variant": "paper",
                          "params_json": json.dumps({"variant": "paper", "alpha": 50.0})},
                         {"dataset": "musique", "retriever": "flow_diffusion", "params_json": "{}"}])
    got = migrate_rows(rows)
    assert got["retriever"].tolist() == ["flow_diffusion_joint", "flow_diffusion"]
    assert migrate_rows(got).equals(got)
