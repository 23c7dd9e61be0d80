"""Figures from the leaderboard table, sized for one column of a paper (PNG and PDF).

- recall@k curves, one figure per dataset x reader (`recall_at_k_<dataset>[_<reader>]`),
- quality vs retrieval latency, the same split (`quality_vs_latency_<dataset>[_<reader>]`),
- sensitivity to every numeric hyper-parameter that a set of otherwise identical runs sweeps
  (`sensitivity_<dataset>_<method>[_<reader>]_<param>`).

A figure is COLUMN_WIDTH inches wide per panel, its legend below the axes; every method keeps
one colour (its family: hipporag, catrag, ...) and one line style / marker (its variant:
`_code`, `_nogate`, ...) in all figures. Labels name the method and only the parameters that
differ from its defaults (as the run recorded them). In the recall and latency figures a method is one
run: the one at its defaults if there is one, else the one whose question count most other
methods share, then the most recent. A sensitivity line joins runs that differ in the swept
parameter only (same dataset, reader, questions, models and every other parameter); lines with
fewer than two values are not drawn, and the error bars of the lines are dodged sideways.
All error bars are the 95% bootstrap intervals of the leaderboard.
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from hopbench.core.atomic import atomic_path  # noqa: E402
from hopbench.evaluate import metric_registry  # noqa: E402
from hopbench.report.run_reader import diff_label  # noqa: E402
from hopbench.report.sweeps import Sweep, sweeps  # noqa: E402
from hopbench.report.table_params import row_diff  # noqa: E402

COST_NAMES = {
    "latency_ms_p50": "latency p50 (ms)",
    "latency_ms_p95": "latency p95 (ms)",
    "llm_calls_per_q": "LLM calls / question",
}
COST_METRICS = (
    "latency_ms_p50",
    "latency_ms_p95",
    "llm_calls_per_q",
    "llm_tokens_per_q",
    "llm_seconds_per_q",
)
COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper
PANEL_HEIGHT = 2.3  # inches per panel, legend not included
DPI = 300
FORMATS = ("png", "pdf")
LABEL_WIDTH = 30  # characters before a legend label wraps

# Okabe-Ito colours (colour-blind safe) per method family; variants get line styles / markers.
FAMILY_COLOURS = {
    "dense": "#000000",
    "hipporag": "#0072B2",
    "catrag": "#D55E00",
    "flow_diffusion": "#009E73",
    "neuropath": "#CC79A7",
    "spreading_activation": "#E69F00",
    "oracle": "#999999",
}
EXTRA_COLOURS = ["#56B4E9", "#882255", "#44AA99", "#117733", "#999933", "#AA4499", "#332288"]
VARIANT_STYLES = {
    "": ("-", "o"),
    "_code": ("--", "s"),
    "1": ("--", "s"),
    "_nogate": (":", "^"),
    "_neo4j": ("-.", "D"),
    "_neo4j_nogate": ((0, (3, 1, 1, 1, 1, 1)), "v"),
}
OTHER_STYLE = ("--", "X")

STYLE = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "legend.fontsize": 6,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "lines.linewidth": 1.0,
    "lines.markersize": 3.5,
    "errorbar.capsize": 1.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,
    "savefig.dpi": DPI,
}


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(s))


def _missing(v) -> bool:
    return v is None or (not isinstance(v, (str, dict, list)) and bool(pd.isna(v)))


# ---- method styles and labels -------------------------------------------------------------------
def family(method: str) -> tuple[str, str]:
    """('spreading_activation', '_nogate'): the longest known family prefix and the rest."""
    for fam in sorted(FAMILY_COLOURS, key=len, reverse=True):
        if method == fam or method.startswith(fam):
            return fam, method[len(fam) :]
    return method, ""


def method_style(method: str) -> dict:
    """colour, line style and marker of a method, the same in every figure."""
    fam, variant = family(method)
    colour = FAMILY_COLOURS.get(fam)
    if colour is None:
        idx = int.from_bytes(fam.encode(), "little") % len(EXTRA_COLOURS)
        colour = EXTRA_COLOURS[idx]
    linestyle, marker = VARIANT_STYLES.get(variant, OTHER_STYLE)
    return {"color": colour, "linestyle": linestyle, "marker": marker}


def _wrap(text: str) -> str:
    return "\n".join(
        textwrap.wrap(text, LABEL_WIDTH, break_long_words=False, subsequent_indent="  ")
    )


def _method_label(name: str, diff: str) -> str:
    """'name (diff)' on one line when it is short, else the parameters indented on the lines below."""
    if not diff:
        return name
    if len(name) + len(diff) + 3 <= LABEL_WIDTH:
        return f"{name} ({diff})"
    params = textwrap.wrap(f"({diff})", LABEL_WIDTH - 2, break_long_words=False)
    return "\n".join([name, *(f"  {line}" for line in params)])


def run_label(row, with_reader: bool = False) -> str:
    """'spreading_activation (decay=0.3)': the method and the parameters that differ from its
    defaults (none named: the run is at its defaults)."""
    diff = row.get("params_diff")
    if _missing(diff):
        diff = diff_label(row_diff(row))
    reader = f" +{row['reader']}" if with_reader and row.get("reader") not in (None, "none") else ""
    return _method_label(f"{row['retriever']}{reader}", diff)


def _order(methods) -> list[str]:
    """dense first, oracle last, the rest alphabetical."""
    return sorted(methods, key=lambda m: (m != "dense", m == "oracle", m))


# ---- which run stands for a method ------------------------------------------------------------
def representative_runs(part: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per method: at its defaults if it has such a run; else the run whose question
    count is shared by the most other methods; then the larger count; then the most recent."""
    part = part.dropna(subset=[metric])
    if part.empty:
        return part
    n_methods = part.groupby("n_questions")["retriever"].nunique()
    keys = []
    for i, r in part.iterrows():
        at_defaults = not (
            r.get("params_diff") if not _missing(r.get("params_diff")) else diff_label(row_diff(r))
        )
        keys.append(
            (
                i,
                (
                    at_defaults,
                    int(n_methods.get(r["n_questions"], 0)),
                    int(r["n_questions"]),
                    str(r.get("finished_at") or ""),
                    str(r["config_hash"]),
                ),
            )
        )
    best: dict[str, tuple] = {}
    for i, k in keys:
        m = part.loc[i, "retriever"]
        if m not in best or k > best[m][1]:
            best[m] = (i, k)
    chosen = [best[m][0] for m in _order(best)]
    return part.loc[chosen]


def _n_note(rows: pd.DataFrame) -> dict:
    """index -> ' [n=20]' when the runs of a figure were scored on different numbers of questions."""
    if rows["n_questions"].nunique() <= 1:
        return {i: "" for i in rows.index}
    return {i: f" [n={int(n)}]" for i, n in rows["n_questions"].items()}


# ---- saving ---------------------------------------------------------------------------------------
def _legend_below(fig, handles, labels, ncol: int = 2) -> None:
    if handles:
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncol=ncol,
            frameon=False,
            handlelength=2.2,
            columnspacing=1.0,
            borderaxespad=0.2,
        )


# no creation date in a PDF: the same figure gives the same bytes, so a reference update
# changes only the figures whose plot changed
_METADATA = {"pdf": {"CreationDate": None}, "png": {}}


def _save(fig, stem: Path) -> list[Path]:
    """stem.png (DPI) and stem.pdf, each written atomically."""
    paths = []
    for fmt in FORMATS:
        path = stem.with_name(stem.name + f".{fmt}")
        with atomic_path(path, suffix=f".{fmt}") as tmp:
            fig.savefig(
                tmp,
                format=fmt,
                dpi=DPI,
                bbox_inches="tight",
                pad_inches=0.02,
                metadata=_METADATA.get(fmt),
            )
        paths.append(path)
    plt.close(fig)
    return paths


def _legend_height(labels: list[str], ncol: int) -> float:
    """Inches a legend below the axes takes: its rows, each as tall as its longest label."""
    if not any(labels):
        return 0.0
    rows = [labels[i : i + ncol] for i in range(0, len(labels), ncol)]
    return 0.08 + sum(max(lab.count("\n") + 1 for lab in row) * 0.115 for row in rows)


def _figure(n_panels: int = 1, labels: list[str] = (), ncol: int = 2):
    height = PANEL_HEIGHT * n_panels + _legend_height(list(labels), ncol)
    fig, axes = plt.subplots(
        n_panels,
        1,
        figsize=(COLUMN_WIDTH, height),
        squeeze=False,
        sharex=True,
        layout="constrained",
    )
    return fig, list(axes[:, 0])


def _err(rows: pd.DataFrame, metric: str) -> np.ndarray | None:
    """Asymmetric error bars (2 x n, in percent) from the _lo/_hi columns; None for a metric
    without an interval (a cost)."""
    if f"{metric}_lo" not in rows or f"{metric}_hi" not in rows:
        return None
    m, lo, hi = (rows[c].astype(float).to_numpy() for c in (metric, f"{metric}_lo", f"{metric}_hi"))
    return 100 * np.vstack([np.nan_to_num(m - lo), np.nan_to_num(hi - m)])


def _scale(metric: str) -> float:
    """Quality metrics are fractions in the table and percentages in the figures; costs keep their unit."""
    return 1.0 if metric in COST_METRICS else 100.0


def quality_metrics() -> list[str]:
    """The metrics with a panel in the quality-vs-latency and sensitivity figures (declared in
    hopbench.evaluate.metric_registry)."""
    return metric_registry.shown_in(metric_registry.FIGURES)


def recall_ks() -> list[int]:
    """The k of the recall@k curves: every declared recall@k."""
    return metric_registry.family_ks("recall")


def _ylabel(metric: str) -> str:
    name = COST_NAMES.get(metric) or (
        metric_registry.get(metric).label if metric in metric_registry.names() else metric
    )
    return name if _scale(metric) == 1.0 else f"{name} (%)"


def _offsets(n: int, width: float) -> np.ndarray:
    """n dodge offsets spread evenly over `width`, centred on 0."""
    return np.zeros(1) if n <= 1 else np.linspace(-width / 2, width / 2, n)


def _suffix(reader) -> str:
    return "" if reader in (None, "none") else f"_{_slug(reader)}"


def _title(dataset: str, reader) -> str:
    return dataset + ("" if reader in (None, "none") else f", reader {reader}")


def _split(df: pd.DataFrame):
    """(dataset, reader, rows) per figure, in order."""
    for (dataset, reader), part in df.groupby(["dataset", "reader"], sort=True, dropna=False):
        yield dataset, reader, part


# ---- recall@k -------------------------------------------------------------------------------------
def recall_figure(part: pd.DataFrame, title: str = ""):
    """Recall@k of one run per method (representative_runs), error bars dodged on the log k axis;
    None without recall."""
    rows = representative_runs(part, "recall@5")
    if rows.empty:
        return None
    with plt.rc_context(STYLE):
        ncol = 2
        notes = _n_note(rows)
        labels = {i: run_label(r) + notes[i] for i, r in rows.iterrows()}
        fig, (ax,) = _figure(1, list(labels.values()), ncol)
        offsets = _offsets(
            len(rows), 0.25 * math.log(2)
        )  # a quarter of the gap between k=1 and k=2
        ks = recall_ks()
        for off, (i, r) in zip(offsets, rows.iterrows(), strict=True):
            style = method_style(r["retriever"])
            xs = np.array(ks, dtype=float) * math.exp(off)
            ys = [100 * r[f"recall@{k}"] for k in ks]
            err = np.hstack([_err(rows.loc[[i]], f"recall@{k}") for k in ks])
            ax.errorbar(
                xs,
                ys,
                yerr=err,
                label=labels[i],
                elinewidth=0.6,
                alpha=0.95,
                markeredgewidth=0,
                **style,
            )
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set(xlabel="k (passages retrieved)", ylabel="Recall@k (%)", ylim=(0, 100), title=title)
        ax.grid(axis="y", linewidth=0.3, alpha=0.5)
        _legend_below(fig, *ax.get_legend_handles_labels(), ncol=ncol)
    return fig


def recall_curves(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    paths = []
    for dataset, reader, part in _split(df.dropna(subset=["recall@5"])):
        fig = recall_figure(part, title=f"{_title(dataset, reader)}: Recall@k (95% CI)")
        if fig is not None:
            paths += _save(fig, out_dir / f"recall_at_k_{_slug(dataset)}{_suffix(reader)}")
    return paths


# ---- quality vs latency ---------------------------------------------------------------------------
def _log_latency_axis(ax, latencies: pd.Series) -> None:
    """Log x axis spanning at least a decade (so it has a labelled power of ten), plain numbers."""
    lo, hi = float(latencies.min()), float(latencies.max())
    lo, hi = lo / 1.6, hi * 1.6
    if hi / lo < 12:
        centre = math.sqrt(lo * hi)
        lo, hi = centre / math.sqrt(12), centre * math.sqrt(12)
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def quality_latency_figure(part: pd.DataFrame, title: str = ""):
    """metric (95% CI) against retrieval latency p50 (log), one point per method, one panel per
    quality metric with values; None without latency."""
    part = part.dropna(subset=["latency_ms_p50"])
    metrics = [m for m in quality_metrics() if m in part and part[m].notna().any()]
    if part.empty or not metrics:
        return None
    panels = {m: representative_runs(part, m) for m in metrics}
    labels: dict[str, None] = {}
    for rows in panels.values():
        notes = _n_note(rows)
        labels.update({run_label(r) + notes[i]: None for i, r in rows.iterrows()})
    with plt.rc_context(STYLE):
        ncol = 2
        fig, axes = _figure(len(metrics), list(labels), ncol)
        handles: dict[str, object] = {}
        for ax, (metric, rows) in zip(axes, panels.items(), strict=True):
            notes = _n_note(rows)
            for i, r in rows.iterrows():
                style = method_style(r["retriever"])
                h = ax.errorbar(
                    [r["latency_ms_p50"]],
                    [100 * r[metric]],
                    yerr=_err(rows.loc[[i]], metric),
                    color=style["color"],
                    marker=style["marker"],
                    linestyle="none",
                    elinewidth=0.6,
                    markeredgewidth=0,
                )
                handles.setdefault(run_label(r) + notes[i], h)
            _log_latency_axis(ax, part["latency_ms_p50"].astype(float))
            ax.set(ylabel=_ylabel(metric))
            ax.grid(linewidth=0.3, alpha=0.5)
        axes[-1].set_xlabel("retrieval latency p50 (ms, log scale)")
        axes[0].set_title(title)
        _legend_below(fig, list(handles.values()), list(handles), ncol=ncol)
    return fig


def quality_vs_latency(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    paths = []
    for dataset, reader, part in _split(df):
        fig = quality_latency_figure(
            part, title=f"{_title(dataset, reader)}: quality vs latency (95% CI)"
        )
        if fig is not None:
            paths += _save(fig, out_dir / f"quality_vs_latency_{_slug(dataset)}{_suffix(reader)}")
    return paths


# ---- sensitivity ------------------------------------------------------------------------------------
def _fmt_tick(v, integer: bool) -> str:
    return str(int(v)) if integer else f"{v:g}"


def sensitivity_figure(sweep: Sweep, metrics=None):
    """metric (95% CI) against the swept parameter, a line per setting of the other parameters,
    error bars dodged; ticks at the values run (integers for an integer parameter). A cost
    metric (latency_ms_p50, ...) is drawn in its own unit, without error bars."""
    rows_all = pd.concat([rows for _, rows in sweep.lines])
    metrics = [
        m for m in (metrics or quality_metrics()) if m in rows_all and rows_all[m].notna().any()
    ]
    if not metrics:
        return None
    labels = [_wrap(label) for label in sweep.line_labels()]
    values = sweep.values
    gap = min(np.diff(values)) if len(values) > 1 else 1.0
    offsets = _offsets(len(sweep.lines), 0.3 * gap)
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(sweep.lines)))
    base = method_style(sweep.method)
    with plt.rc_context(STYLE):
        ncol = 2 if max(map(len, labels)) > 12 else 4
        fig, axes = _figure(len(metrics), labels, ncol)
        for ax, metric in zip(axes, metrics, strict=True):
            for j, ((_, rows), label) in enumerate(zip(sweep.lines, labels, strict=True)):
                rows = rows.dropna(subset=[metric])
                if rows.empty:
                    continue
                colour = colours[j] if len(sweep.lines) > 1 else base["color"]
                err = _err(rows, metric)
                dodge = offsets[j] if err is not None else 0.0  # only error bars need room
                ax.errorbar(
                    rows["_x"].astype(float) + dodge,
                    _scale(metric) * rows[metric].astype(float),
                    yerr=err,
                    color=colour,
                    marker=base["marker"],
                    elinewidth=0.6,
                    markeredgewidth=0,
                    label=label or None,
                )
            ax.set_xticks(values, [_fmt_tick(v, sweep.integer) for v in values])
            ax.minorticks_off()
            ax.set(ylabel=_ylabel(metric))
            ax.grid(axis="y", linewidth=0.3, alpha=0.5)
        axes[-1].set_xlabel(sweep.param)
        reader = "" if sweep.reader in ("none", "None") else f", reader {sweep.reader}"
        n = int(rows_all["n_questions"].iloc[0])
        ci = " (95% CI)" if any(_err(rows_all, m) is not None for m in metrics) else ""
        axes[0].set_title(f"{sweep.dataset}: {sweep.method}{reader}, n={n}{ci}")
        if any(labels):
            _legend_below(fig, *axes[0].get_legend_handles_labels(), ncol=ncol)
    return fig


def _stem(sweep: Sweep) -> str:
    return (
        f"sensitivity_{_slug(sweep.dataset)}_{_slug(sweep.method)}{_suffix(sweep.reader)}"
        f"_{_slug(sweep.param)}"
    )


def sensitivity_plots(df: pd.DataFrame, out_dir: Path) -> list[Path]:
    """One figure per sweep; sweeps that would share a file name (the same sweep on another
    number of questions or other models) get `_n<questions>` (and a counter) appended."""
    all_sweeps = sweeps(df)
    counts: dict[str, int] = {}
    for sw in all_sweeps:
        counts[_stem(sw)] = counts.get(_stem(sw), 0) + 1
    paths, used = [], set()
    for sw in all_sweeps:
        stem = _stem(sw)
        if counts[stem] > 1:
            stem += f"_n{int(sw.lines[0][1]['n_questions'].iloc[0])}"
        name, k = stem, 2
        while name in used:
            name, k = f"{stem}_{k}", k + 1
        fig = sensitivity_figure(sw)
        if fig is not None:
            used.add(name)
            paths += _save(fig, out_dir / name)
    return paths


def all_figures(df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    out_dir = Path(out_dir)
    if df.empty:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    return (
        recall_curves(df, out_dir)
        + quality_vs_latency(df, out_dir)
        + sensitivity_plots(df, out_dir)
    )
