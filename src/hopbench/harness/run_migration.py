"""One-off upgrades of what older hopbench versions wrote, so the report reads only today's form.

`hopbench migrate` applies them:
- a run folder's metrics.json gains what runs record today: `method` (family, defaults, the
  settings that differ from them: hopbench.harness.method_info) and `graph`;
- a result table (results/reference/*.parquet and .csv) gains `params_json` where it lacks it
  and `params_diff_json` on every row;
- a run or row of a method renamed since gets today's name (the rules below); a run folder
  keeps its path and config hash, its metrics.json records `migrated_from`.

Renamed methods. Before the faithful HippoRAG 2 graph (issue #15), ``retriever=hipporag`` ran on
hopbench's graph construction: that computation is ``hipporag_hb`` today, the same settings
plus ``graph_construction: hopbench`` (benchmarks/parity/hipporag/results/official_hipporag.md). Before QAFD's
answering pipeline (issue #32), ``flow_diffusion`` ranked passages by one joint diffusion: that
is ``flow_diffusion_joint`` today, recognised by its ``variant`` setting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from hopbench.core.atomic import write_json
from hopbench.core.param_values import diff_label, parse_params_label
from hopbench.harness.method_info import (
    RETRIEVER_SKIP,
    family_of,
    method_record,
    params_diff,
    typed_value,
)
from hopbench.kg.settings import graph_label
from hopbench.report.run_reader import DENSE_ONLY
from hopbench.report.table_params import is_missing


def is_pre_construction_hipporag(retriever: str, params: dict) -> bool:
    """A HippoRAG 2 run from before `graph_construction` existed (HippoRAG 1 seeding kept its name)."""
    return (
        retriever == "hipporag"
        and "graph_construction" not in params
        and params.get("seeding", "hipporag2") != "hipporag1"
    )


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


def migrate_run(run_dir: str | Path) -> bool:
    """Upgrade one complete run folder in place; True if metrics.json changed."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
    config_path = run_dir / "config.yaml"
    config = (
        (yaml.safe_load(config_path.read_text(encoding="utf-8")) or {})
        if config_path.exists()
        else {}
    )
    old = metrics.get("retriever") or run_dir.parent.name
    retriever_cfg = config.get("retriever") or {}
    params = {k: v for k, v in retriever_cfg.items() if k not in RETRIEVER_SKIP}
    name, params = current_name(old, params)
    before = json.dumps(metrics, sort_keys=True)
    if name != old:
        metrics["retriever"], metrics["migrated_from"] = name, old
    if "graph" not in metrics:
        metrics["graph"] = None if name in DENSE_ONLY else graph_label(config.get("graph") or {})
    if "method" not in metrics:
        metrics["method"] = method_record({"name": name, **params}, config, family_of(name))
    if json.dumps(metrics, sort_keys=True) == before:
        return False
    write_json(metrics_path, metrics)
    return True


def _row_params(row: dict) -> dict:
    raw = row.get("params_json")
    if isinstance(raw, str) and raw:
        return json.loads(raw)
    out = {
        k.removeprefix("param."): typed_value(row.get("retriever"), k.removeprefix("param."), v)
        for k, v in row.items()
        if k.startswith("param.") and not is_missing(v)
    }
    return out or parse_params_label(row.get("params"))


def migrate_table(df: pd.DataFrame) -> pd.DataFrame:
    """A result table (leaderboard, breakdown) under today's names, every row with its typed
    `params_json` and its `params_diff_json`. Applying it twice changes nothing."""
    if df.empty or "retriever" not in df:
        return df
    df = df.copy()
    names, params_json, diff_json, diff_labels = [], [], [], []
    for row in df.to_dict("records"):
        name, params = current_name(row.get("retriever"), _row_params(row))
        diff = params_diff(params, name)
        names.append(name)
        params_json.append(json.dumps(params, sort_keys=True, default=str))
        diff_json.append(json.dumps(diff, sort_keys=True, default=str))
        # the label follows today's defaults too (a row made when a default differed shows it)
        graph = parse_params_label(row.get("params_diff")).get("graph") or row.get("graph")
        diff_labels.append(
            diff_label(
                {"graph": graph, **diff}
                if isinstance(graph, str) and graph and graph != "spacy"
                else diff
            )
        )
    df["retriever"], df["params_json"], df["params_diff_json"] = names, params_json, diff_json
    if "params_diff" in df or any(diff_labels):
        df["params_diff"] = diff_labels
    if "param.graph_construction" in df or any(n == "hipporag_hb" for n in names):
        col = df.get("param.graph_construction", pd.Series(index=df.index, dtype=object)).astype(
            object
        )
        df["param.graph_construction"] = [
            json.loads(p).get("graph_construction", c if not is_missing(c) else None)
            for p, c in zip(params_json, col)
        ]
    return df


TABLES = ("leaderboard", "breakdown")


def migrate_tables(folder: str | Path) -> dict[str, int]:
    """Migrate the result tables of a folder (parquet and its csv twin); rows changed per table."""
    from hopbench.report.collect import (
        write_table,  # the report's own writer: same files, same form
    )

    changed = {}
    for stem in TABLES:
        path = Path(folder) / f"{stem}.parquet"
        if not path.exists():
            continue
        df = pd.read_parquet(path)
        new = migrate_table(df)
        before = [json.dumps(r, sort_keys=True, default=str) for r in df.to_dict("records")]
        after = [json.dumps(r, sort_keys=True, default=str) for r in new.to_dict("records")]
        changed[stem] = sum(a != b for a, b in zip(before, after))
        if changed[stem]:
            write_table(new, Path(folder) / stem)
    return changed


def cli(argv: list[str]) -> int:
    """`hopbench migrate [--runs-dir DIR] [--tables DIR ...]`."""
    import argparse
    import sys

    from hopbench.report.run_reader import load_runs

    ap = argparse.ArgumentParser(
        prog="hopbench migrate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--runs-dir", help="upgrade every complete run folder under it")
    ap.add_argument(
        "--tables",
        nargs="*",
        default=[],
        metavar="DIR",
        help="upgrade the result tables (leaderboard, breakdown) in these folders, "
        "e.g. results/reference",
    )
    args = ap.parse_args(argv)
    if not args.runs_dir and not args.tables:
        ap.error("name --runs-dir and/or --tables")
    if args.runs_dir:
        runs = load_runs(args.runs_dir)
        n = sum(migrate_run(r.dir) for r in runs)
        print(f"hopbench migrate: {n} of {len(runs)} run folders under {args.runs_dir} upgraded")
    for folder in args.tables:
        if not Path(folder).is_dir():
            print(f"hopbench migrate: {folder}: not a folder", file=sys.stderr)
            return 2
        for stem, n in migrate_tables(folder).items():
            print(f"hopbench migrate: {folder}/{stem}: {n} rows changed")
    return 0
