"""Readable markdown views of the result tables: percentages as 'value ±half-width', p-values.

The csv/parquet keep every column at full precision; the markdown is what a person reads, so
it shows only the headline metrics and drops columns that are empty for every row (no reader
-> no EM/F1 columns).
"""

from __future__ import annotations

import math

import pandas as pd

from hopbench.evaluate.fallbacks import WARN_RATE, is_high

# metric -> column header in markdown
HEADLINE = {"recall@2": "R@2", "recall@5": "R@5", "recall@10": "R@10", "fcr@5": "FCR@5",
            "em": "EM", "f1": "F1", "jsr@5": "JSR@5", "jsr_contain@5": "JSRc@5",
            "accuracy": "Acc"}
DASH = "–"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (not isinstance(v, str) and pd.isna(v))


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
    return [f"{r['dataset']}/{r['retriever']} {r['config_hash']} ({100 * r['fallback_rate']:.0f}%)"
            for _, r in df.iterrows() if is_high(r.get("fallback_rate"))]


def fallback_warning_line(df: pd.DataFrame) -> str | None:
    runs = high_fallback_runs(df)
    if not runs:
        return None
    return (f"fallback rate above {100 * WARN_RATE:.0f}% (their numbers are partly the fallback's, "
            f"not the method's): " + ", ".join(runs))


def _table(rows: list[dict], columns: list[str]) -> str:
    """A markdown table; columns that are DASH in every row are dropped."""
    keep = [c for c in columns if any(r.get(c, DASH) != DASH for r in rows)]
    df = pd.DataFrame([{c: r.get(c, DASH) for c in keep} for r in rows], columns=keep)
    return df.to_markdown(index=False, disable_numparse=True) + "\n"


def leaderboard_markdown(df: pd.DataFrame, baseline: str = "dense") -> str:
    if df.empty:
        return "_no complete runs yet_\n"
    rows, tests = [], []
    for _, r in df.iterrows():
        row = {"dataset": r["dataset"], "method": r["retriever"], "reader": r["reader"],
               "params": r["params"] or DASH, "n": str(r["n_questions"])}
        for m, h in HEADLINE.items():
            row[h] = fmt_ci(r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi"))
        row["p50 ms"] = fmt_num(r.get("latency_ms_p50"))
        row["p95 ms"] = fmt_num(r.get("latency_ms_p95"))
        row["LLM calls/q"] = fmt_num(r.get("llm_calls_per_q"), 1)
        row["LLM tok/q"] = fmt_num(r.get("llm_tokens_per_q"), 0)
        row["LLM s/q"] = fmt_num(r.get("llm_seconds_per_q"), 1)
        row["fallback"] = fmt_fallback(r.get("fallback_rate"))
        row["config"] = r["config_hash"]
        rows.append(row)
        if not _missing(r.get("n_paired")) and r.get("n_paired"):
            t = {"dataset": r["dataset"], "method": r["retriever"], "reader": r["reader"],
                 "params": r["params"] or DASH, "config": r["config_hash"],
                 f"vs {baseline}": r["baseline_config_hash"], "n paired": str(int(r["n_paired"]))}
            for m, h in HEADLINE.items():
                t[h] = fmt_p(r.get(f"p_{m}"))
            tests.append(t)
    cols = ["dataset", "method", "reader", "params", "n", *HEADLINE.values(), "p50 ms", "p95 ms",
            "LLM calls/q", "LLM tok/q", "LLM s/q", "fallback", "config"]
    out = _table(rows, cols)
    if warning := fallback_warning_line(df):
        out += f"\n**Warning:** {warning}.\n"
    out += f"\n### Paired tests against `{baseline}` (p-values, same questions)\n\n"
    if tests:
        out += _table(tests, ["dataset", "method", "reader", "params", "config", f"vs {baseline}",
                              "n paired", *HEADLINE.values()])
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
p-values: paired bootstrap for Recall@k and F1, exact McNemar for EM, FCR, JSR and accuracy,
on the questions both runs scored. Numbers on the bundled subsets are subset numbers.

"""
