"""Paper-style tables: per dataset, methods x headline metrics, each value with its 95% interval
and the paired difference to the baseline (dense) with its Holm-adjusted p-value.

Built from a finished leaderboard frame (leaderboard.finish_table), the one leaderboard.md is
written from: every number is a column of that frame (M, M_lo, M_hi, delta_M, p_adj_M), nothing
is recomputed. The metrics are the headline ones (`headline_metrics()`, metric_registry), with
the paper-table ones beside them (R@1024t beside R@5, Contain-Acc beside F1; `paper_columns`).

A method is a retriever with its reader and graph (the `graph=` entry of `params_diff`). Its
main row is the one with the fewest other parameters differing from the method's defaults
(the defaults row when there is one), then the most questions, then the config hash; its other
rows are listed below the main table as variants, with the same columns.

A row gets a paired difference only when its baseline run is a row of the same table and both
are on the same questions (same number of questions, and every question the row scored was
paired); otherwise the row is marked † and its difference cells are empty.

    python -m hopbench.report.paper_tables results/reference   # rewrite <folder>/paper_tables.md
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from hopbench.core.atomic import write_text
from hopbench.core.param_values import parse_params_label
from hopbench.evaluate import metric_registry
from hopbench.evaluate.fallbacks import WARN_RATE
from hopbench.report.card_tables import DIFFERENT_CARD, cards_section, differs, row_card
from hopbench.report.leaderboard import CORRECTION, finish_table
from hopbench.report.markdown import (
    DASH,
    _table,
    fmt_delta,
    fmt_fallback,
    fmt_params,
    headline_headers,
)
from hopbench.report.ranking_shift import shift_markdown
from hopbench.report.reference import concat_rows, load_table
from hopbench.report.table_params import is_missing

PAPER_TABLES = "paper_tables.md"
OTHER_QUESTIONS = "†"
BASELINE_CELL = "baseline"
FALLBACK = "fallback"  # the share of questions an LLM step failed or fell back on
FALLBACK_AFTER = "recall@5"  # shown next to this metric's difference column
SHIFT = ("recall@5", "recall@1024t")  # the orders compared under each table (ranking_shift)


def fmt_interval(mean, lo, hi) -> str:
    """'62.2 [53.1, 70.8]' in percent; the mean alone when the interval is missing."""
    if is_missing(mean):
        return DASH
    if is_missing(lo) or is_missing(hi):
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def _diff(row) -> dict:
    return parse_params_label(row.get("params_diff"))


def method_key(row) -> tuple[str, str, str]:
    """(retriever, reader, graph): what one line of the paper table stands for."""
    graph = _diff(row).get("graph")
    return (str(row.get("retriever")), str(row.get("reader")), "" if graph is None else str(graph))


def _main_preference(row) -> tuple:
    """Smaller is preferred: fewest non-graph parameters off the defaults, most questions, hash."""
    other = {k: v for k, v in _diff(row).items() if k != "graph"}
    n = row.get("n_questions")
    return (len(other), -(0 if is_missing(n) else int(n)), str(row.get("config_hash")))


def _scored(row) -> int | None:
    counts = [
        int(row[c])
        for c in ("n_retrieval_scored", "n_answer_scored")
        if c in row and not is_missing(row.get(c))
    ]
    return max(counts) if counts else None


def pairing(row, by_hash: dict) -> str:
    """'baseline' (the row is its own baseline), 'paired' (its baseline is a row of the table, on the
    same questions) or 'other' (no baseline row, or other questions: no paired difference)."""
    base_hash = row.get("baseline_config_hash")
    if is_missing(base_hash):
        return "other"
    if base_hash == row.get("config_hash"):
        return "baseline"
    base = by_hash.get((row.get("dataset"), base_hash))
    if base is None:
        return "other"
    n_paired = row.get("n_paired")
    same = (
        not is_missing(n_paired)
        and row.get("n_questions") == base.get("n_questions")
        and int(n_paired) == _scored(row)
    )
    return "paired" if same else "other"


def split_methods(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(main rows, variant rows) of one dataset's rows: one main row per method_key."""
    if df.empty:
        return df, df
    keys = [method_key(r) for _, r in df.iterrows()]
    main_idx = {}
    for (i, r), k in zip(df.iterrows(), keys):
        if k not in main_idx or _main_preference(r) < _main_preference(df.loc[main_idx[k]]):
            main_idx[k] = i
    chosen = set(main_idx.values())
    return df[df.index.isin(chosen)], df[~df.index.isin(chosen)]


def paper_headers() -> dict[str, str]:
    """metric -> header: the headline metrics, and the paper-table ones each beside its metric
    (R@1024t beside R@5, Contain-Acc beside F1: `metric_registry.paper_columns`)."""
    return {m: metric_registry.get(m).header for m in metric_registry.paper_columns()}


def _p_for_delta(row, metric: str, holm: set[str]):
    """The Holm-adjusted p of a headline metric; the paired test's own p of the others (they are
    outside the Holm family, the header says so)."""
    return row.get(f"p_adj_{metric}" if metric in holm else f"p_{metric}")


def table_rows(df: pd.DataFrame, by_hash: dict, baseline: str = "dense") -> list[dict]:
    headers = paper_headers()
    holm = set(headline_headers())
    rows = []
    for _, r in df.iterrows():
        kind = pairing(r, by_hash)
        method = str(r["retriever"]) + (f" {OTHER_QUESTIONS}" if kind == "other" else "")
        method += f" {DIFFERENT_CARD}" if kind == "paired" and differs(r) else ""
        row = {
            "method": method,
            "reader": str(r["reader"]),
            "params": fmt_params(r.get("params_diff"), r.get("params")),
            "n": DASH if is_missing(r.get("n_questions")) else str(int(r["n_questions"])),
        }
        for m, h in headers.items():
            row[h] = fmt_interval(r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi"))
            if kind == "paired" and not is_missing(r.get(m)):
                row[f"Δ {h}"] = fmt_delta(r.get(f"delta_{m}"), _p_for_delta(r, m, holm))
            elif kind == "baseline" and not is_missing(r.get(m)):
                row[f"Δ {h}"] = BASELINE_CELL
            else:
                row[f"Δ {h}"] = DASH
        row[FALLBACK] = fmt_fallback(r.get("fallback_rate"))
        row["card"] = row_card(r)
        row["config"] = str(r["config_hash"])
        row[f"vs {baseline}"] = {
            "paired": str(r.get("baseline_config_hash")),
            "baseline": BASELINE_CELL,
        }.get(kind, DASH)
        rows.append(row)
    return rows


def columns(baseline: str = "dense") -> list[str]:
    """The table's columns: the fallback share after R@5 and the metrics shown beside it."""
    cols = ["method", "reader", "params", "n"]
    holm, pending = set(headline_headers()), False
    for m, h in paper_headers().items():
        if pending and m in holm:  # past R@5's group (R@1024t sits beside it)
            cols.append(FALLBACK)
            pending = False
        cols += [h, f"Δ {h}"]
        pending = pending or m == FALLBACK_AFTER
    if FALLBACK not in cols:
        cols.append(FALLBACK)
    return cols + ["card", "config", f"vs {baseline}"]


def method_label(row) -> str:
    """'retriever [graph] +reader': one main row of a table, in a sentence."""
    retriever, reader, graph = method_key(row)
    return (
        retriever + (f" [{graph}]" if graph else "") + (f" +{reader}" if reader != "none" else "")
    )


def _method_order(df: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The baseline's rows first, then by method, reader, graph (the frame's order within)."""
    order = sorted(
        range(len(df)),
        key=lambda j: (df.iloc[j]["retriever"] != baseline, method_key(df.iloc[j]), j),
    )
    return df.iloc[order]


def dataset_section(
    df: pd.DataFrame, dataset: str, baseline: str = "dense", by_hash: dict | None = None
) -> str:
    """The paper table of one dataset (rows of `df` with that dataset) and its variants."""
    rows = df[df["dataset"] == dataset]
    if by_hash is None:
        by_hash = {(r["dataset"], r["config_hash"]): r for _, r in df.iterrows()}
    main, variants = split_methods(rows)
    cols = columns(baseline)
    out = f"## {dataset}\n\n" + _table(
        table_rows(_method_order(main, baseline), by_hash, baseline), cols
    )
    if all(m in paper_headers() for m in SHIFT):
        out += shift_markdown(main, *SHIFT, paper_headers(), method_label)
    if not variants.empty:
        out += f"\n**Variants** (the methods' other configurations on {dataset}):\n\n" + _table(
            table_rows(_method_order(variants, baseline), by_hash, baseline), cols
        )
    return out + cards_section(_method_order(rows, baseline))


def paper_tables_markdown(df: pd.DataFrame, baseline: str = "dense") -> str:
    """Every dataset's paper table, from one finished leaderboard (one Holm family)."""
    if df.empty:
        return "_no complete runs yet_\n"
    df = finish_table(df)
    by_hash = {(r["dataset"], r["config_hash"]): r for _, r in df.iterrows()}
    return "\n".join(
        dataset_section(df, d, baseline, by_hash) for d in sorted(df["dataset"].unique())
    )


def _outside_holm() -> str:
    """The header's line on the paper-table metrics outside the Holm family."""
    names = [h for m, h in paper_headers().items() if m not in headline_headers()]
    if not names:
        return ""
    return (
        f"{', '.join(names)} (R@Nt: recall within N tokens of context, docs/results.md) are not "
        f"in the {CORRECTION} family: their `Δ` carries the paired test's own p-value."
    )


def header(baseline: str = "dense") -> str:
    return f"""# hopbench: paper tables

One table per dataset, from the same rows as leaderboard.md (nothing recomputed). Each metric:
the value in percent with its 95% percentile-bootstrap interval [lo, hi], and `Δ`: method −
`{baseline}` in points on the questions both runs scored, with the p-value {CORRECTION}-corrected
across every comparison of the leaderboard (▲ / ▼: better / worse at corrected p < 0.05).
`{baseline}` rows are the baselines (`Δ` = {BASELINE_CELL}); `vs {baseline}` names the config of
the `{baseline}` run a row is paired with. A method is a retriever with its reader and graph;
its main row is its defaults configuration (else the one with the fewest parameters off the
defaults), then the most questions; its other configurations are listed as variants.
{OTHER_QUESTIONS}: the row is not on the same questions as a `{baseline}` row of this table
(other question count, or its baseline run is not in the table), so it gets no paired
difference. {DIFFERENT_CARD}: paired with a `{baseline}` run whose protocol card differs in more
than the method (the fields are named under the table): the difference is not on equal terms.
{_outside_holm()}
`{FALLBACK}`: the share of questions where an LLM step failed or fell back (marked ⚠ above
{100 * WARN_RATE:.0f}%: the row measures the fallback as much as the method). `card`: the row's
protocol card, listed under each table (retrieval unit, corpus and question digests, questions
scored, embedder, LLM, reader context; the graph builds below it); `params` as in
leaderboard.md; `config` is the run's config hash.

"""


def write_paper_tables(
    df: pd.DataFrame,
    path: str | Path,
    baseline: str = "dense",
    reference: pd.DataFrame | None = None,
) -> Path:
    """<path> (paper_tables.md) from a finished leaderboard and, when given, the reference rows."""
    text = header(baseline) + paper_tables_markdown(df, baseline)
    if reference is not None and not reference.empty:
        text += (
            "\n# Reference results (committed, `results/reference/`)\n\n"
            + paper_tables_markdown(reference, baseline)
        )
    write_text(Path(path), text)
    return Path(path)


def main(argv: list[str]) -> int:
    """Rewrite <folder>/paper_tables.md from <folder>/leaderboard.parquet (no run is reread)."""
    if len(argv) != 1:
        print("usage: python -m hopbench.report.paper_tables RESULTS_DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    df = load_table(folder, "leaderboard")  # as --update-reference reads it (legacy names migrated)
    if df.empty:
        print(f"no {folder / 'leaderboard.parquet'}", file=sys.stderr)
        return 2
    if "source" in df:  # runs and reference beside them: each its own table (Holm family)
        df = concat_rows([finish_table(g) for _, g in df.groupby("source", sort=False)])
    baseline = next(iter(df["baseline"].dropna()), "dense") if "baseline" in df else "dense"
    reference = None
    if (
        "source" in df and (df["source"] == "reference").any()
    ):  # a report's runs and the reference beside
        reference = df[df["source"] == "reference"]
        df = df[df["source"] != "reference"]
    print(f"wrote {write_paper_tables(df, folder / PAPER_TABLES, baseline, reference)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
