"""Scores split by question kind (MuSiQue/HoVer hop count, 2Wiki/HotpotQA question type).

An average hides where a graph method wins: spreading over 3 and 4 hops may help exactly
where dense retrieval fails, so each run's questions are grouped by `meta.hops` and
`meta.type` (whichever the loader recorded) and scored per group, with CIs and the paired
test against the baseline run restricted to the same group (p-values not corrected for
the number of comparisons: a breakdown is for looking, the leaderboard for claims).
"""

from __future__ import annotations

import pandas as pd

from hopbench.evaluate import metric_registry
from hopbench.report.leaderboard import (
    all_scores,
    choose_baseline,
    metrics,
    paired_pvalues,
    run_columns,
    stable_seed,
    summaries,
)
from hopbench.report.markdown import DASH, MINUS, _table, fmt_ci, fmt_p
from hopbench.report.run_reader import Run, diff_label
from hopbench.report.table_params import row_diff, sort_rows

GROUP_KEYS = ("hops", "type", "tracker_calls")
# A grouping read from the method's trace rather than the question's meta: NeuroPath's number of
# tracker calls (trace.hop_stats), i.e. how far its loop got on that question.
TRACE_KEYS = {"tracker_calls": ("hop_stats", "tracker_calls")}
BREAKDOWN_RESAMPLES = 2_000


def _group_value(v):
    return str(v) if v is not None else None


def groups(run: Run, key: str) -> dict[str, set[str]]:
    """group value -> question ids, for the questions whose meta has `key`."""
    out: dict[str, set[str]] = {}
    for p in run.predictions:
        v = _group_value(_question_value(p, key))
        if v is not None:
            out.setdefault(v, set()).add(p["id"])
    return out


def _question_value(p: dict, key: str):
    if key in TRACE_KEYS:
        node = p.get("trace") or {}
        for part in TRACE_KEYS[key]:
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return (p.get("meta") or {}).get(key)


def _sort_key(v: str):
    return (0, int(v), "") if v.isdigit() else (1, 0, v)


def breakdown(
    runs: list[Run], baseline: str = "dense", n_resamples: int = BREAKDOWN_RESAMPLES
) -> pd.DataFrame:
    rows = []
    for run in runs:
        base = choose_baseline(run, runs, baseline)
        paired = base is not None and base is not run
        run_scores = all_scores(run)
        base_scores = all_scores(base) if paired else {}
        for key in GROUP_KEYS:
            for value, ids in sorted(groups(run, key).items(), key=lambda kv: _sort_key(kv[0])):
                row = {
                    **run_columns(run),
                    "config_hash": run.config_hash,
                    "group_by": key,
                    "group": value,
                    "n": len(ids),
                    "baseline_config_hash": base.config_hash if base is not None else None,
                }
                scores = {
                    m: {i: v for i, v in run_scores[m].items() if i in ids} for m in metrics()
                }
                seed = stable_seed(run.config_hash, key, value)
                for m, (mean, lo, hi) in summaries(scores, seed, n_resamples).items():
                    row.update({m: mean, f"{m}_lo": lo, f"{m}_hi": hi})
                tests = paired_pvalues(scores, base_scores, seed, n_resamples) if paired else {}
                for m in metrics():
                    row[f"p_{m}"] = tests[m][0] if paired else float("nan")
                    row[f"delta_{m}"] = tests[m][2] if paired else float("nan")
                rows.append(row)
    return pd.DataFrame(rows)


def _signed(delta) -> str:
    d = 100 * delta
    return ("+" if d > 0 else MINUS if d < 0 else "±") + f"{abs(d):.1f}"


def breakdown_markdown(df: pd.DataFrame, baseline: str = "dense") -> str:
    """One table per dataset x grouping x metric: methods down, groups across."""
    if df.empty:
        return "_no runs with hop counts or question types_\n"
    out = []
    df = df.assign(
        params_diff=[
            r["params_diff"] if isinstance(r.get("params_diff"), str) else diff_label(row_diff(r))
            for _, r in df.iterrows()
        ]
    )
    for (dataset, key), part in df.groupby(["dataset", "group_by"], sort=True):
        values = sorted(part["group"].unique(), key=_sort_key)
        label = {"hops": lambda v: f"{v}-hop", "tracker_calls": lambda v: f"{v} tracker calls"}.get(
            key, lambda v: v
        )
        for metric in metric_registry.shown_in(metric_registry.BREAKDOWN):
            if (
                metric not in part or part[metric].isna().all()
            ):  # a table from before it was declared
                continue
            rows = []
            runs = sort_rows(part.drop_duplicates("config_hash"))
            for _, run in runs.iterrows():
                g = part[part["config_hash"] == run["config_hash"]]
                row = {
                    "method": run["retriever"],
                    "reader": run["reader"],
                    "params": run["params_diff"] or ("defaults" if run.get("params") else DASH),
                    "config": run["config_hash"],
                }
                for v in values:
                    hit = g[g["group"] == v]
                    if hit.empty:
                        row[label(v)] = DASH
                        continue
                    r = hit.iloc[0]
                    cell = fmt_ci(r[metric], r[f"{metric}_lo"], r[f"{metric}_hi"])
                    if cell != DASH and fmt_p(r[f"p_{metric}"]) != DASH:
                        delta = r.get(f"delta_{metric}")
                        diff = (
                            f"{_signed(delta)}, "
                            if delta is not None and not pd.isna(delta)
                            else ""
                        )
                        cell += f" ({diff}p={fmt_p(r[f'p_{metric}'])})"
                    row[label(v)] = cell
                rows.append(row)
            ns = part.groupby("group")["n"].max()
            head = ", ".join(f"{label(v)}: n={ns[v]}" for v in values)
            out.append(
                f"### {dataset} — {metric} by {key} ({head})\n\n"
                + _table(rows, ["method", "reader", "params", "config", *map(label, values)])
            )
    header = (
        "# hopbench breakdowns\n\nPercentages ±half-width of the 95% bootstrap interval; in "
        f"brackets the difference to `{baseline}` in points and the p-value of the paired test on "
        "the same questions of that group (not corrected for the number of comparisons). `params`: "
        "the hyper-parameters that differ from the method's defaults.\n\n"
    )
    return header + "\n".join(out)
