"""Figures from the leaderboard table (PNG, matplotlib's headless Agg backend).

- recall@k curves per dataset (one line per method/config),
- quality vs latency per dataset (is a gain worth the milliseconds?),
- decay/depth sensitivity for every method swept over `retriever.depth` / `retriever.decay`.
All error bars are the 95% bootstrap intervals of the leaderboard.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from hopbench.atomic import atomic_path  # noqa: E402

RECALL_KS = (1, 2, 5, 10)
SWEEP_PARAMS = ("depth", "decay", "damping")
MAX_LINES = 8


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(s))


def _label(r) -> str:
    extra = f" [{r['params']}]" if r.get("params") else ""
    reader = f" +{r['reader']}" if r.get("reader") not in (None, "none") else ""
    return f"{r['retriever']}{reader}{extra}"


def _labels(part: pd.DataFrame) -> dict:
    """index -> legend label; configs that would share a label get their hash and n added."""
    base = {i: _label(r) for i, r in part.iterrows()}
    counts = pd.Series(list(base.values())).value_counts()
    return {i: (f"{lab} ({part.loc[i, 'config_hash'][:6]}, n={part.loc[i, 'n_questions']})"
                if counts[lab] > 1 else lab) for i, lab in base.items()}


def _save(fig, path: Path) -> Path:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _err(part: pd.DataFrame, metric: str) -> np.ndarray:
    """Asymmetric error bars (2 x n, in percent) from the _lo/_hi columns."""
    m, lo, hi = (part[c].astype(float).to_numpy() for c in (metric, f"{metric}_lo", f"{metric}_hi"))
    return 100 * np.vstack([np.nan_to_num(m - lo), np.nan_to_num(hi - m)])


def _readable(part: pd.DataFrame, metric: str = "recall@5") -> pd.DataFrame:
    """At most MAX_LINES rows: with many configs keep each method's best one."""
    if len(part) <= MAX_LINES:
        return part
    best = part.sort_values(metric, ascending=False).groupby("retriever", sort=False).head(1)
    return best.head(MAX_LINES)


def recall_curves(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    paths = []
    for dataset, part in df.groupby("dataset", sort=True):
        part = _readable(part.dropna(subset=["recall@5"]))
        if part.empty:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        labels = _labels(part)
        for idx, r in part.iterrows():
            ys = [100 * r[f"recall@{k}"] for k in RECALL_KS]
            lo = [100 * r[f"recall@{k}_lo"] for k in RECALL_KS]
            hi = [100 * r[f"recall@{k}_hi"] for k in RECALL_KS]
            line, = ax.plot(RECALL_KS, ys, marker="o", label=labels[idx])
            ax.fill_between(RECALL_KS, lo, hi, color=line.get_color(), alpha=0.15)
        ax.set(xscale="log", xticks=RECALL_KS, xticklabels=[str(k) for k in RECALL_KS],
               xlabel="k", ylabel="Recall@k (%)", title=f"{dataset}: Recall@k (95% CI bands)")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7)
        paths.append(_save(fig, out_dir / f"recall_at_k_{_slug(dataset)}.png"))
    return paths


def quality_vs_latency(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    paths = []
    for dataset, part in df.groupby("dataset", sort=True):
        metrics = [m for m in ("recall@5", "f1", "accuracy") if part[m].notna().any()]
        part = part.dropna(subset=["latency_ms_p50"])
        if part.empty or not metrics:
            continue
        fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4), squeeze=False)
        for ax, metric in zip(axes[0], metrics, strict=True):
            sub = _readable(part.dropna(subset=[metric]), metric)
            labels = _labels(sub)
            for idx, r in sub.iterrows():
                ax.errorbar([r["latency_ms_p50"]], [100 * r[metric]], yerr=_err(sub.loc[[idx]], metric),
                            fmt="o", capsize=3, label=labels[idx])
            ax.set(xscale="log", xlabel="retrieval latency p50 (ms, log)", ylabel=f"{metric} (%)",
                   title=f"{dataset}: {metric} vs latency")
            ax.legend(fontsize=7)
        paths.append(_save(fig, out_dir / f"quality_vs_latency_{_slug(dataset)}.png"))
    return paths


def sensitivity_table(df: pd.DataFrame) -> pd.DataFrame:
    """Leaderboard rows of methods that have a depth or decay hyper-parameter."""
    cols = [f"param.{p}" for p in SWEEP_PARAMS if f"param.{p}" in df]
    if not cols:
        return df.iloc[0:0]
    return df[df[cols].notna().any(axis=1)].reset_index(drop=True)


def _sweep_panel(ax, part: pd.DataFrame, x: str, line: str | None, metric: str) -> None:
    groups = part.groupby(line, dropna=False, sort=True) if line else [(None, part)]
    for value, g in groups:
        g = g.sort_values(x)
        shown = int(value) if isinstance(value, float) and value.is_integer() else value
        label = f"{line.removeprefix('param.')}={shown}" if line else None
        ax.errorbar(g[x].astype(float), 100 * g[metric].astype(float), yerr=_err(g, metric),
                    marker="o", capsize=3, label=label)
    ax.set(xlabel=x.removeprefix("param."), ylabel=f"{metric} (%)")
    if all(float(v).is_integer() for v in part[x]):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if line:
        ax.legend(fontsize=7)


def sensitivity_plots(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    """metric vs depth (a line per decay) and vs decay (a line per depth), per dataset x method."""
    sens = sensitivity_table(df)
    paths = []
    for (dataset, retriever, reader), part in sens.groupby(["dataset", "retriever", "reader"], sort=True):
        varying = [f"param.{p}" for p in SWEEP_PARAMS
                   if f"param.{p}" in part and part[f"param.{p}"].nunique(dropna=True) > 1]
        metrics = [m for m in ("recall@5", "f1") if part[m].notna().any()]
        if not varying or not metrics:
            continue
        fig, axes = plt.subplots(len(metrics), len(varying), figsize=(5 * len(varying), 3.5 * len(metrics)),
                                 squeeze=False)
        for i, metric in enumerate(metrics):
            for j, x in enumerate(varying):
                others = [v for v in varying if v != x]
                _sweep_panel(axes[i][j], part.dropna(subset=[x, metric]), x, others[0] if others else None,
                             metric)
        fig.suptitle(f"{dataset} / {retriever}" + (f" +{reader}" if reader != "none" else "")
                     + ": sensitivity (95% CI)")
        paths.append(_save(fig, out_dir / f"sensitivity_{_slug(dataset)}_{_slug(retriever)}.png"))
    return paths


def all_figures(df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    out_dir = Path(out_dir)
    if df.empty:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    return recall_curves(df, out_dir) + quality_vs_latency(df, out_dir) + sensitivity_plots(df, out_dir)
