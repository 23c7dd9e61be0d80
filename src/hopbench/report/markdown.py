"""Readable markdown views of the result tables: percentages as 'value ±half-width', differences
to the baseline with their corrected p-values.

The csv/parquet keep every column at full precision; the markdown is what a person reads, so
it shows only the headline metrics, the parameters that differ from each method's defaults,
and drops columns that are empty for every row (no reader -> no EM/F1 columns).
"""

from __future__ import annotations

import math

import pandas as pd

from hopbench.evaluate import metric_registry
from hopbench.evaluate.fallbacks import WARN_RATE, is_high
from hopbench.report.leaderboard import CORRECTION, finish_table, headline_metrics, n_comparisons

DASH = "–"
DIFFERENT_CARD = "‡"  # paired with a baseline on another protocol card (core.protocol_card)
MINUS = "−"
SIGNIFICANT = 0.05


def _missing(v) -> bool:
    return (
        v is None
        or (isinstance(v, float) and math.isnan(v))
        or (not isinstance(v, str) and pd.isna(v))
    )


def fmt_ci(mean, lo, hi) -> str:
    """'49.2 ±10.8' in percent: the mean and half the width of its 95% interval."""
    if _missing(mean):
        return DASH
    if _missing(lo) or _missing(hi):
        return f"{100 * mean:.1f}"
    return f"{100 * mean:.1f} ±{100 * (hi - lo) / 2:.1f}"


def fmt_p(p) -> str:
    if _missing(p):
        return DASH
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}"


def fmt_delta(delta, p_adj) -> str:
    """'+3.1 ▲ (0.012)': method - baseline in points, signed; ▲/▼ when the corrected p-value is
    below 0.05; the corrected p-value in brackets."""
    if _missing(delta):
        return DASH if _missing(p_adj) else f"({fmt_p(p_adj)})"
    d = 100 * delta
    text = f"{'+' if d > 0 else MINUS if d < 0 else '±'}{abs(d):.1f}"
    if text[1:] == "0.0":
        text = "±0.0"
    if not _missing(p_adj) and p_adj < SIGNIFICANT:
        text += " ▲" if d > 0 else " ▼" if d < 0 else ""
    return f"{text} ({fmt_p(p_adj)})" if not _missing(p_adj) else text


def fmt_params(diff, params) -> str:
    """The parameters that differ from the method's defaults; 'defaults' for a run at its
    method's defaults, DASH for a method without parameters."""
    if isinstance(diff, str) and diff:
        return diff
    return "defaults" if isinstance(params, str) and params else DASH


def fmt_num(v, digits: int = 2) -> str:
    return DASH if _missing(v) else f"{v:.{digits}f}"


def fmt_fallback(rate) -> str:
    """'12.5%', marked '12.5% ⚠' above WARN_RATE; DASH for a run from before it was counted."""
    if _missing(rate):
        return DASH
    return f"{100 * rate:.1f}%" + (" ⚠" if is_high(rate) else "")


def high_fallback_runs(df: pd.DataFrame) -> list[str]:
    """'dataset/method config (rate)' for every run whose fallback rate is above WARN_RATE."""
    if df.empty or "fallback_rate" not in df:
        return []
    return [
        f"{r['dataset']}/{r['retriever']} {r['config_hash']} ({100 * r['fallback_rate']:.0f}%)"
        for _, r in df.iterrows()
        if is_high(r.get("fallback_rate"))
    ]


def fallback_warning_line(df: pd.DataFrame) -> str | None:
    runs = high_fallback_runs(df)
    if not runs:
        return None
    return (
        f"fallback rate above {100 * WARN_RATE:.0f}% (their numbers are partly the fallback's, "
        f"not the method's): " + ", ".join(runs)
    )


def _table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table; columns that are DASH in every row are dropped."""
    keep = [c for c in columns if any(r.get(c, DASH) != DASH for r in rows)]
    df = pd.DataFrame([{c: r.get(c, DASH) for c in keep} for r in rows], columns=keep)
    return df.to_markdown(index=False, disable_numparse=True) + "\n"


def headline_headers() -> dict[str, str]:
    """metric -> its column header in leaderboard.md, for the headline metrics ('recall@5': 'R@5')."""
    return {m: metric_registry.get(m).header for m in headline_metrics()}


def _score_row(r, headline: dict[str, str]) -> dict:
    """A run's line of the scores table: its metrics with their intervals, costs, fallbacks."""
    row = {
        "dataset": r["dataset"],
        "method": r["retriever"],
        "reader": r["reader"],
        "params": fmt_params(r.get("params_diff"), r.get("params")),
        "n": str(r["n_questions"]),
    }
    for m, h in headline.items():
        row[h] = fmt_ci(r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi"))
    row["p50 ms"] = fmt_num(r.get("latency_ms_p50"))
    row["p95 ms"] = fmt_num(r.get("latency_ms_p95"))
    row["LLM calls/q"] = fmt_num(r.get("llm_calls_per_q"), 1)
    row["LLM tok/q"] = fmt_num(r.get("llm_tokens_per_q"), 0)
    row["LLM s/q"] = fmt_num(r.get("llm_seconds_per_q"), 1)
    row["fallback"] = fmt_fallback(r.get("fallback_rate"))
    row["config"] = r["config_hash"]
    return row


def _test_row(r, headline: dict[str, str], baseline: str) -> dict:
    """A run's line of the paired-tests table: its differences to the baseline, corrected p."""
    t = {
        "dataset": r["dataset"],
        "method": r["retriever"],
        "reader": r["reader"],
        "params": fmt_params(r.get("params_diff"), r.get("params")),
        "config": r["config_hash"],
        f"vs {baseline}": r["baseline_config_hash"],
        "n paired": str(int(r["n_paired"])),
    }
    for m, h in headline.items():
        t[h] = fmt_delta(r.get(f"delta_{m}"), r.get(f"p_adj_{m}"))
    t["protocol"] = fmt_card_pairing(r)
    return t


def fmt_card_pairing(r) -> str:
    """'same' when the baseline's protocol card matches, '‡ <fields>' when it differs in more
    than the method, DASH when a card is missing (a run from before cards were recorded)."""
    differs = r.get("card_differs")
    if _missing(differs):
        return DASH
    if not bool(differs):
        return "same"
    return f"{DIFFERENT_CARD} {r.get('card_differences') or ''}".rstrip()


def leaderboard_markdown(df: pd.DataFrame, baseline: str = "dense") -> str:
    """The scores table and the paired-tests table of one leaderboard (one Holm family)."""
    if df.empty:
        return "_no complete runs yet_\n"
    df = finish_table(df)
    HEADLINE = headline_headers()
    rows, tests = [], []
    for _, r in df.iterrows():
        rows.append(_score_row(r, HEADLINE))
        if not _missing(r.get("n_paired")) and r.get("n_paired"):
            tests.append(_test_row(r, HEADLINE, baseline))
    cols = [
        "dataset",
        "method",
        "reader",
        "params",
        "n",
        *HEADLINE.values(),
        "p50 ms",
        "p95 ms",
        "LLM calls/q",
        "LLM tok/q",
        "LLM s/q",
        "fallback",
        "config",
    ]
    out = _table(rows, cols)
    if warning := fallback_warning_line(df):
        out += f"\n**Warning:** {warning}.\n"
    out += f"\n### Paired tests against `{baseline}` (difference in points, corrected p-value)\n\n"
    if tests:
        out += (
            f"Each cell: method − `{baseline}` in points on the questions both runs scored, and in "
            f"brackets the p-value {CORRECTION}-corrected across the {n_comparisons(df)} comparisons "
            f"of this table (every method × metric below); ▲ / ▼: better / worse than `{baseline}` "
            f"at corrected p < {SIGNIFICANT}. Uncorrected p-values: `p_<metric>` in leaderboard.csv, "
            "`p` in leaderboard_long.parquet.\n\n"
        )
        out += _table(
            tests,
            [
                "dataset",
                "method",
                "reader",
                "params",
                "config",
                f"vs {baseline}",
                "n paired",
                *HEADLINE.values(),
                "protocol",
            ],
        )
        if any(t["protocol"].startswith(DIFFERENT_CARD) for t in tests):
            out += (
                f"\n{DIFFERENT_CARD} the row's protocol card differs from its `{baseline}` run's in "
                "more than the method (the fields named): the difference is not on equal terms. "
                "`protocol` = same: both runs are on one card; –: a run without a card.\n"
            )
    else:
        out += f"_no run to compare with a `{baseline}` run on the same dataset_\n"
    return out


LEADERBOARD_HEADER = f"""# hopbench leaderboard

Percentages with the half-width of their 95% percentile-bootstrap interval (value ±h).
Recall/FCR count only questions whose gold passages are all in the corpus; EM/F1/JSR need a
reader. Latency is retrieval time per question (p50/p95, ms), LLM waits included. LLM calls,
tokens and seconds are per question, retrieval and reader together; seconds are what the
server took when each reply was first computed (cache hits count what they had cost), so a
rerun from the cache shows the same cost. `fallback` is the share of questions ranked or
answered by a fallback (dense ranking, an LLM step skipped after a bad reply; see
`trace.fallback` in the run's predictions), marked ⚠ above {100 * WARN_RATE:.0f}%; – for
runs from before it was counted. `config` is the run's config hash (`runs/<dataset>/<method>/<config>/`).
`params` are the hyper-parameters that differ from the method's defaults
(`configs/retriever/<method>.yaml`; every parameter for a method without one); all of them are
in the csv's `params`. Rows are ordered by dataset, method, reader and those parameters.
Paired tests: paired bootstrap for Recall@k and F1, exact McNemar for EM, FCR, JSR and accuracy,
on the questions both runs scored; their p-values are {CORRECTION}-corrected for the number of
comparisons in each table. Numbers on the bundled subsets are subset numbers.

"""
