"""Names of runs made before a method was renamed, read under the name that computes them now.

Before the faithful HippoRAG 2 graph (issue #15), ``retriever=hipporag`` ran on hopbench's graph
construction. That computation is ``retriever=hipporag_hb`` today: the same settings plus
``graph_construction: hopbench`` (benchmarks/results/official_hipporag.md: the same rankings on
100/100 MuSiQue questions on both graphs). A run or reference row of ``hipporag`` without a
``graph_construction`` setting is therefore shown, compared and superseded as ``hipporag_hb``;
its run folder and config hash stay what they were.

Before QAFD's answering pipeline (issue #32), ``retriever=flow_diffusion`` ranked passages by one
joint diffusion; that computation is ``retriever=flow_diffusion_joint`` today, with the same
settings. A ``flow_diffusion`` run with a ``variant`` setting (the joint kernel's, which the
pipeline does not have) is read as ``flow_diffusion_joint``.
"""

from __future__ import annotations

import json

import pandas as pd


def is_pre_construction_hipporag(retriever: str, params: dict) -> bool:
    """A HippoRAG 2 run from before `graph_construction` existed (HippoRAG 1 seeding kept its name)."""
    return (retriever == "hipporag" and "graph_construction" not in params
            and params.get("seeding", "hipporag2") != "hipporag1")


def is_joint_flow_diffusion(retriever: str, params: dict) -> bool:
    """A `flow_diffusion` run from before the answering pipeline (the joint ranking)."""
    return retriever == "flow_diffusion" and "variant" in params


def current_name(retriever: str, params: dict) -> tuple[str, dict]:
    """(retriever, params) under today's names."""
    if is_pre_construction_hipporag(retriever, params):
        return "hipporag_hb", {**params, "graph_construction": "hopbench"}
    if is_joint_flow_diffusion(retriever, params):
        return "flow_diffusion_joint", params
    return retriever, params


def migrate_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Result-table rows (leaderboard, breakdown) under today's names."""
    if df.empty or "retriever" not in df:
        return df
    def params_of(row) -> dict:
        raw = row.get("params_json")
        if isinstance(raw, str) and raw:
            return json.loads(raw)
        text = row.get("params")  # "k=v k=v": the only record of the settings in older tables
        out = dict(kv.split("=", 1) for kv in text.split() if "=" in kv) if isinstance(text, str) else {}
        for key in ("seeding", "graph_construction", "variant"):
            v = row.get(f"param.{key}")
            if v is not None and not pd.isna(v):
                out[key] = v
        return out

    records = df.to_dict("records")
    joint = [is_joint_flow_diffusion(r.get("retriever"), params_of(r)) for r in records]
    if any(joint):
        df = df.copy()
        df.loc[pd.Series(joint, index=df.index), "retriever"] = "flow_diffusion_joint"
    old = [is_pre_construction_hipporag(r.get("retriever"), params_of(r)) for r in records]
    if not any(old):
        return df
    df = df.copy()
    mask = pd.Series(old, index=df.index)
    df.loc[mask, "retriever"] = "hipporag_hb"
    df["param.graph_construction"] = df.get("param.graph_construction", pd.Series(index=df.index, dtype=object)).astype(object)
    df.loc[mask, "param.graph_construction"] = "hopbench"
    if "params_json" in df:
        df.loc[mask, "params_json"] = [
            json.dumps(current_name("hipporag", json.loads(p))[1], sort_keys=True, default=str)
            if isinstance(p, str) and p else p for p in df.loc[mask, "params_json"]]
    return df
