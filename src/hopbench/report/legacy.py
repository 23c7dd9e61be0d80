"""Names of runs made before a method was renamed, read under the name that computes them now.

Before the faithful HippoRAG 2 graph (issue #15), ``retriever=hipporag`` ran on hopbench's graph
construction. That computation is ``retriever=hipporag_hb`` today: the same settings plus
``graph_construction: hopbench`` (benchmarks/results/official_hipporag.md: the same rankings on
100/100 MuSiQue questions on both graphs). A run or reference row of ``hipporag`` without a
``graph_construction`` setting is therefore shown, compared and superseded as ``hipporag_hb``;
its run folder and config hash stay what they were.
"""

from __future__ import annotations

import json

import pandas as pd


def is_pre_construction_hipporag(retriever: str, params: dict) -> bool:
    """A HippoRAG 2 run from before `graph_construction` existed (HippoRAG 1 seeding kept its name)."""
    return (retriever == "hipporag" and "graph_construction" not in params
            and params.get("seeding", "hipporag2") != "hipporag1")


def current_name(retriever: str, params: dict) -> tuple[str, dict]:
    """(retriever, params) under today's names."""
    if is_pre_construction_hipporag(retriever, params):
        return "hipporag_hb", {**params, "graph_construction": "hopbench"}
    return retriever, params


def migrate_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Result-table rows (leaderboard, breakdown) under today's names."""
    if df.empty or "retriever" not in df:
        return df
    def params_of(row) -> dict:
        raw = row.get("params_json")
        if isinstance(raw, str) and raw:
            return json.loads(raw)
        seeding = row.get("param.seeding")
        construction = row.get("param.graph_construction")
        out = {} if construction is None or pd.isna(construction) else {"graph_construction": construction}
        return out | ({} if seeding is None or pd.isna(seeding) else {"seeding": seeding})

    old = [is_pre_construction_hipporag(r.get("retriever"), params_of(r)) for r in df.to_dict("records")]
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
