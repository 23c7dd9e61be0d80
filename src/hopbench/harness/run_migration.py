"""One-off upgrades of what older hopbench versions wrote, so the report reads only today's form.

`hopbench migrate` applies them:
- a run folder's metrics.json gains what runs record today: `method` (family, defaults, the
  settings that differ from them: hopbench.harness.method_info) and `graph`;
- a result table (results/reference/*.parquet and .csv) gains `params_json` where it lacks it
  and `params_diff_json` on every row;
- a run or row of a method renamed since gets today's name (the rules below); a run folder
  keeps its path and config hash, its metrics.json records `migrated_from`;
- a run folder named by a hash of before issue #58 (which held the retriever's `_target_`) is
  renamed to its hash of today, computed from its config.yaml (hopbench.harness.rehash); its
  metrics.json records `migrated_from_hash`, and the tables named with `--tables` are re-keyed
  (with the runs re-keyed now and the folder's rehash_map.csv, if any);
- `--rehash-reference DIR` re-keys a reference folder (results/reference) through the grid that
  makes its rows: DIR/rehash_map.csv (old -> new of every row), its tables and its reply file.

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
from hopbench.harness import rehash
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
    ap.add_argument(
        "--rehash-reference",
        metavar="DIR",
        help="re-key a reference folder (results/reference) through the default grid",
    )
    ap.add_argument(
        "--data-dir",
        help="where the benchmark files are now, if not where the runs read them (paths.data_dir)",
    )
    args = ap.parse_args(argv)
    if not args.runs_dir and not args.tables and not args.rehash_reference:
        ap.error("name --runs-dir, --tables and/or --rehash-reference")
    for folder in [*args.tables, *([args.rehash_reference] if args.rehash_reference else [])]:
        if not Path(folder).is_dir():
            print(f"hopbench migrate: {folder}: not a folder", file=sys.stderr)
            return 2
    old_new: dict[str, str] = {}
    if args.runs_dir:
        runs = load_runs(args.runs_dir)
        n = sum(migrate_run(r.dir) for r in runs)
        print(f"hopbench migrate: {n} of {len(runs)} run folders under {args.runs_dir} upgraded")
        old_new.update(_rehash_runs([r.dir for r in runs], args.data_dir))
    for folder in args.tables:
        for stem, n in migrate_tables(folder).items():
            print(f"hopbench migrate: {folder}/{stem}: {n} rows changed")
        saved = Path(folder) / rehash.MAP_FILE
        mapping = {**(rehash.read_map(saved) if saved.exists() else {}), **old_new}
        _rekey(folder, mapping)
    if args.rehash_reference:
        _rehash_reference(Path(args.rehash_reference), args.data_dir)
    return 0


def _rehash_runs(run_dirs: list[Path], data_dir: str | None) -> dict[str, str]:
    """Re-key each run folder; a run left as it is is told with why. old -> new of those done."""
    out, done = {}, 0
    for run_dir in run_dirs:
        r = rehash.rehash_run(run_dir, data_dir)
        if r.why:
            if r.why != "already under its new hash":
                print(f"hopbench migrate: {run_dir}: not re-keyed: {r.why}")
            continue
        out[r.old], done = r.new, done + 1
    print(f"hopbench migrate: {done} of {len(run_dirs)} run folders re-keyed to today's hash")
    return out


def _rekey(folder, old_new: dict[str, str]) -> None:
    for name, n in rehash.rekey_tables(folder, old_new).items():
        print(f"hopbench migrate: {folder}/{name}: {n} hashes re-keyed")
    reply_file = Path(folder) / "llm_replies.jsonl.gz"
    if reply_file.exists() and (n := rehash.rekey_reply_file(reply_file, old_new)):
        print(f"hopbench migrate: {reply_file}: {n} runs re-keyed")


def _rehash_reference(folder: Path, data_dir: str | None) -> None:
    """rehash_map.csv from the default grid (as `hopbench paper` plans it), then the re-key."""
    from hopbench.harness.paper.command import llm_overrides
    from hopbench.harness.paper.grid import expand, load_grid
    from hopbench.harness.paper.plan import Planner

    extra = [f"paths.data_dir={data_dir}"] if data_dir else []
    planner = Planner()
    rows = expand(
        load_grid(),
        extra,
        sizes=lambda ds: planner.size(ds, extra),
        llm_extra=llm_overrides([]),
    )
    errors: list[str] = []
    mapping = rehash.reference_map(
        rehash.grid_rehash_map(rows, planner, errors), folder / "leaderboard.csv"
    )
    for line in errors:
        print(f"hopbench migrate: a grid row could not be hashed: {line}")
    for label in rehash.unmapped(mapping, folder / "leaderboard.csv"):
        print(f"hopbench migrate: reference row {label} is made by no grid row: not re-keyed")
    rehash.write_map(folder / rehash.MAP_FILE, mapping)
    print(f"hopbench migrate: {folder}/rehash_map.csv: {len(mapping)} runs")
    _rekey(folder, {k: v for k, v in rehash.old_to_new(mapping).items() if k != v})
