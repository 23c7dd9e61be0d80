"""The leaderboard: one row per dataset x method x config, with 95% CIs and paired tests.

Every metric M gets columns M (mean over the questions where it applies), M_lo / M_hi
(percentile bootstrap), p_M (paired test against the baseline run on the same dataset,
on the questions both runs scored; see stats.py for which test) and delta_M (mean of
method - baseline on those paired questions). The metrics and their tests are the declared ones
(hopbench.evaluate.metric_registry); the p-values of the headline metrics (`headline_metrics()`,
the ones leaderboard.md shows) are Holm-corrected across every comparison of the table: p_adj_M.
`n_fallback` and `fallback_rate` (questions ranked or answered by a
fallback, `hopbench.evaluate.fallbacks`) come from metrics.json and are missing, not 0, for
runs written before they were counted.

`params` lists every hyper-parameter of the run; `params_diff` only those that differ from
the method's defaults (as the run recorded them: metrics.json's `method`), `params_json` all of them with their types.
`long_table` turns the wide table into one row per run x metric.
The protocol card (metrics.json's `protocol`, hopbench.core.protocol_card) becomes `card.*`
columns and `card_id`; `card_differs` / `card_differences` say whether, and in which fields,
the paired baseline's card differs in more than the method (None when a card is missing).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hopbench.core.param_values import diff_label, params_label
from hopbench.core.paths import run_folder_cell
from hopbench.core.protocol_card import (
    CARD_DIFFERENCES,
    CARD_DIFFERS,
    CARD_ID,
    CARD_KEY,
    COLUMN_PREFIX,
    GRAPH_COUNTS,
    card_columns,
    differences,
    flat_card,
)
from hopbench.core.records import (
    LLM_CALLS,
    LLM_COMPLETION_TOKENS,
    LLM_PROMPT_TOKENS,
    LLM_SECONDS_UNCACHED,
    LLM_TOKENS,
    per_question,
)
from hopbench.evaluate import metric_registry
from hopbench.evaluate.fallbacks import fallback_summary
from hopbench.evaluate.metric_registry import answer_scored, retrieval_scored
from hopbench.report.run_reader import Run
from hopbench.report.stats import (
    DEFAULT_RESAMPLES,
    bootstrap_cis,
    holm,
    mcnemar_exact_p,
    paired_bootstrap_ps,
    paired_test_for,
)
from hopbench.report.table_params import is_missing, row_diff, sort_rows, typed_params

ID_COLUMNS = [
    "dataset",
    "retriever",
    "reader",
    "params",
    "limit",
    "config_hash",
    "n_questions",
    "n_retrieval_scored",
    "n_answer_scored",
]
COST_COLUMNS = [
    "latency_ms_p50",
    "latency_ms_p95",
    "llm_calls_per_q",
    "llm_tokens_per_q",
    "llm_seconds_per_q",
]
FALLBACK_COLUMNS = ["n_fallback", "fallback_rate"]
TEST_COLUMNS = ["baseline", "baseline_config_hash", "n_paired"]
# the protocol card (hopbench.core.protocol_card): its id, and whether the paired baseline's differs
CARD_FLAG_COLUMNS = [CARD_ID, CARD_DIFFERS, CARD_DIFFERENCES]
CARD_COUNT_COLUMNS = [
    COLUMN_PREFIX + k
    for k in ("n_questions", "n_retrieval_scored", "retrieval_depth", *GRAPH_COUNTS)
]
CORRECTION = "Holm"


def metrics() -> list[str]:
    """Every declared metric, in column order (read at each call: a metric declared later counts)."""
    return metric_registry.names()


def headline_metrics() -> list[str]:
    """The metrics leaderboard.md shows; their p-values form the family of the Holm correction."""
    return metric_registry.shown_in(metric_registry.LEADERBOARD)


def metric_columns(names=None) -> list[str]:
    return [c for m in (names or metrics()) for c in (m, f"{m}_lo", f"{m}_hi")]


def p_columns(names=None) -> list[str]:
    return [f"p_{m}" for m in (names or metrics())]


def delta_columns(names=None) -> list[str]:
    return [f"delta_{m}" for m in (names or metrics())]


def p_adj_columns(names=None) -> list[str]:
    return [f"p_adj_{m}" for m in (names or headline_metrics())]


def stable_seed(*parts: str) -> int:
    """A seed fixed by the run and metric, so the report is the same every time it is built."""
    return int(hashlib.sha256(":".join(parts).encode()).hexdigest()[:8], 16)


def _by_question_set(
    scores: dict[str, dict[str, float]], metrics
) -> list[tuple[list[str], list[str]]]:
    """Metrics scored on the same questions, grouped: (metrics, sorted question ids). Every group
    draws the same resamples; a group is one matrix product, whose rounding depends on its width,
    so only legacy metrics share one (their numbers as before the registry, Metric.legacy) and
    any other metric is a group of its own."""
    groups: dict[tuple, list[str]] = {}
    for m in metrics:
        ids = tuple(sorted(scores.get(m, {})))
        if ids:
            alone = None if metric_registry.get(m).legacy else m
            groups.setdefault((ids, alone), []).append(m)
    return [(ms, list(ids)) for (ids, _), ms in groups.items()]


def summaries(
    scores: dict[str, dict[str, float]], seed: int, n_resamples: int = DEFAULT_RESAMPLES
) -> dict[str, tuple[float, float, float]]:
    """metric -> (mean, lo, hi) for every declared metric (NaNs where it has no scores).
    Metrics on the same questions share one set of resamples."""
    names = metrics()
    out = {m: (float("nan"),) * 3 for m in names}
    for ms, ids in _by_question_set(scores, names):
        v = np.array([[scores[m][i] for m in ms] for i in ids])
        lo, hi = bootstrap_cis(v, n_resamples=n_resamples, seed=seed)
        for j, m in enumerate(ms):
            out[m] = (float(v[:, j].mean()), float(lo[j]), float(hi[j]))
    return out


def paired_pvalues(
    scores: dict[str, dict[str, float]],
    base: dict[str, dict[str, float]],
    seed: int,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, tuple[float, int, float]]:
    """metric -> (p-value against the baseline, number of paired questions, mean difference
    method - baseline on those questions)."""
    names = metrics()
    out = {m: (float("nan"), 0, float("nan")) for m in names}
    shared = {
        m: {i: (s, base[m][i]) for i, s in scores.get(m, {}).items() if i in base.get(m, {})}
        for m in names
    }
    boot = [m for m in names if paired_test_for(m) == "paired_bootstrap"]
    for ms, ids in _by_question_set({m: shared[m] for m in boot}, boot):
        a = np.array([[shared[m][i][0] for m in ms] for i in ids])
        b = np.array([[shared[m][i][1] for m in ms] for i in ids])
        ps = paired_bootstrap_ps(a, b, n_resamples=n_resamples, seed=seed)
        for j, (m, p) in enumerate(zip(ms, ps, strict=True)):
            out[m] = (float(p), len(ids), float(np.mean(a[:, j] - b[:, j])))
    for m in names:
        if m not in boot and shared[m]:
            pairs = np.array(list(shared[m].values()))
            out[m] = (
                mcnemar_exact_p(pairs[:, 0], pairs[:, 1]),
                len(pairs),
                float(np.mean(pairs[:, 0] - pairs[:, 1])),
            )
    return out


def all_scores(run: Run) -> dict[str, dict[str, float]]:
    return {m: run.scores(m) for m in metrics()}


def choose_baseline(run: Run, runs: list[Run], baseline: str) -> Run | None:
    """The baseline run to pair `run` with: same dataset, baseline retriever; prefer the same
    reader, then the same models (a reader's EM under another LLM is no pair), then the most
    shared questions, then the fewest questions beyond them (a 20-question run pairs with the
    20-question baseline, not a newer 100-question one), then the most recent."""
    ids = {p["id"] for p in run.predictions}
    candidates = [r for r in runs if r.dataset == run.dataset and r.retriever == baseline]
    if not candidates:
        return None
    if any(r is run for r in candidates):
        return run

    def preference(r: Run):
        theirs = {p["id"] for p in r.predictions}
        return (
            r.reader == run.reader,
            r.models == run.models,
            _card_id(r) == _card_id(run),  # on the same protocol, when both recorded one
            len(ids & theirs),
            -len(theirs - ids),
            str(r.metrics.get("finished_at", "")),
        )

    return max(candidates, key=preference)


def _card_id(run: Run) -> str | None:
    return card_columns(run.metrics.get(CARD_KEY))[CARD_ID]


def card_pairing(run: Run, base: Run | None) -> dict:
    """`card_differs` (None when unpaired or a card is missing) and `card_differences` (the fields
    in which the baseline's card differs, the method's own left out: core.protocol_card)."""
    mine = flat_card(run.metrics.get(CARD_KEY))
    theirs = flat_card(base.metrics.get(CARD_KEY)) if base is not None else {}
    if base is None or not mine or not theirs:
        return {CARD_DIFFERS: None, CARD_DIFFERENCES: None}
    fields = differences(mine, theirs) if base is not run else []
    return {CARD_DIFFERS: bool(fields), CARD_DIFFERENCES: ", ".join(fields) or None}


def _per_question(value, n: int):
    return None if value is None or not n else float(value) / n


def run_columns(run: Run) -> dict:
    """The columns that name a run in every table made of runs (leaderboard, breakdowns)."""
    return {
        "dataset": run.dataset,
        "retriever": run.retriever,
        "reader": run.reader,
        "params": params_label(run.params),
        "params_diff": diff_label(run.params_diff),
        "params_json": json.dumps(run.params, sort_keys=True, default=str),
    }


def run_row(run: Run, runs: list[Run], baseline: str, n_resamples: int = DEFAULT_RESAMPLES) -> dict:
    m = run.metrics
    n = len(run.predictions)
    row = {
        **run_columns(run),
        "params_diff_json": json.dumps(run.method_params_diff, sort_keys=True, default=str),
        "limit": run.limit,
        "config_hash": run.config_hash,
        "n_questions": n,
        "n_retrieval_scored": sum(retrieval_scored(p["metrics"]) for p in run.predictions),
        "n_answer_scored": sum(answer_scored(p["metrics"]) for p in run.predictions),
    }
    scores = all_scores(run)
    for metric, (mean, lo, hi) in summaries(
        scores, stable_seed(run.config_hash), n_resamples
    ).items():
        row.update({metric: mean, f"{metric}_lo": lo, f"{metric}_hi": hi})
    lat = run.latencies()
    row["latency_ms_p50"] = float(np.percentile(lat, 50)) if lat.size else None
    row["latency_ms_p95"] = float(np.percentile(lat, 95)) if lat.size else None
    row["llm_calls_per_q"] = _per_question(m.get(LLM_CALLS), n)
    tokens = None
    if m.get(LLM_PROMPT_TOKENS) is not None or m.get(LLM_COMPLETION_TOKENS) is not None:
        tokens = (m.get(LLM_PROMPT_TOKENS) or 0) + (m.get(LLM_COMPLETION_TOKENS) or 0)
    row["llm_tokens_per_q"] = _per_question(tokens, n)
    row["llm_seconds_per_q"] = None
    parts = [p for p in ("retrieval", "reader") if per_question(p, LLM_CALLS) in m]
    if parts:  # per-question costs summed from the rows: right even for a resumed run
        row["llm_calls_per_q"] = sum(m[per_question(p, LLM_CALLS)] for p in parts)
        row["llm_tokens_per_q"] = sum(m[per_question(p, LLM_TOKENS)] for p in parts)
        row["llm_seconds_per_q"] = sum(m[per_question(p, LLM_SECONDS_UNCACHED)] for p in parts)
    if m.get("n_fallback") is None and run.predictions:  # a run from before they were counted
        m = {**m, **fallback_summary(run.predictions)}
    row["n_fallback"] = m.get("n_fallback")  # None: no predictions to count them from
    row["fallback_rate"] = m.get("fallback_rate")
    row.update(card_columns(m.get(CARD_KEY)))

    base = choose_baseline(run, runs, baseline)
    row["baseline"] = baseline
    row["baseline_config_hash"] = base.config_hash if base is not None else None
    paired = base is not None and base is not run
    tests = (
        paired_pvalues(
            scores, all_scores(base), stable_seed(run.config_hash, base.config_hash), n_resamples
        )
        if paired
        else {}
    )
    for metric in metrics():
        row[f"p_{metric}"] = tests[metric][0] if paired else float("nan")
    for metric in metrics():
        row[f"delta_{metric}"] = tests[metric][2] if paired else float("nan")
    row["n_paired"] = max(k for _, k, _ in tests.values()) if paired else None
    row.update(card_pairing(run, base))
    row["run_dir"] = run_folder_cell(run.dir)  # relative: no machine path in a table
    row["models"] = run.models
    for k, v in run.params.items():  # one column per hyper-parameter, for sweeps and plots
        row[f"param.{k}"] = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
    # everything else metrics.json holds (timings, LLM counters), for the csv/parquet
    for k, v in m.items():
        if k not in row and k not in metric_registry.names() and k != CARD_KEY:
            row[k] = v
    return row


def leaderboard(
    runs: list[Run], baseline: str = "dense", n_resamples: int = DEFAULT_RESAMPLES
) -> pd.DataFrame:
    columns = (
        ID_COLUMNS
        + metric_columns()
        + COST_COLUMNS
        + FALLBACK_COLUMNS
        + TEST_COLUMNS
        + CARD_FLAG_COLUMNS
        + p_columns()
        + delta_columns()
        + p_adj_columns()
        + ["params_diff", "params_json", "params_diff_json", "run_dir"]
    )
    if not runs:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame([run_row(r, runs, baseline, n_resamples) for r in runs])
    # counts stay integers next to missing values (csv "3", not "3.0"; parquet int64 with nulls)
    for col in ["n_fallback", *(c for c in CARD_COUNT_COLUMNS if c in df)]:
        df[col] = pd.Series(
            [None if pd.isna(v) else int(v) for v in df[col]], dtype=object, index=df.index
        )
    df = finish_table(df)
    rest = [c for c in df.columns if c not in columns]
    return df[columns + rest].reset_index(drop=True)


# ---- columns derived from the table itself ---------------------------------------------------
def _scored(row, metric: str):
    return row.get(metric_registry.get(metric).counted_by)


def _table_delta(row, base, metric: str) -> float:
    """method - baseline from the two rows' means, for tables written before delta_* existed; only
    when that is the paired difference: both runs scored the same number of questions and all of
    them were paired (otherwise NaN)."""
    n = _scored(row, metric)
    if (
        is_missing(row.get(f"p_{metric}"))
        or is_missing(n)
        or is_missing(row.get("n_paired"))
        or is_missing(row.get(metric))
        or is_missing(base.get(metric))
    ):
        return float("nan")
    same = (
        n == _scored(base, metric)
        and row.get("n_questions") == base.get("n_questions")
        and row.get("n_paired")
        == max(
            v
            for v in (row.get("n_retrieval_scored"), row.get("n_answer_scored"))
            if not is_missing(v)
        )
    )
    return float(row[metric] - base[metric]) if same else float("nan")


def finish_table(df: pd.DataFrame) -> pd.DataFrame:
    """The columns a leaderboard table derives from its own rows: `params_diff` (where missing),
    `delta_*` (where missing, see _table_delta), `p_adj_*` (Holm across all of the table's
    comparisons: every row x headline metric with a p-value), integer params as integers, and
    the rows sorted (sort_rows). Call it on exactly the rows of one table (leaderboard.md shows
    the runs and the reference rows as two tables, so each is finished on its own)."""
    if df.empty:
        return df
    out = df.copy()
    if "params_diff" not in out:
        out["params_diff"] = None
    out["params_diff"] = [
        diff_label(row_diff(r)) if is_missing(r.get("params_diff")) else r["params_diff"]
        for _, r in out.iterrows()
    ]
    by_hash = {(r["dataset"], r["config_hash"]): r for _, r in out.iterrows()}
    for m in metrics():
        col = f"delta_{m}"
        if col not in out:
            out[col] = np.nan
        if f"p_{m}" not in out or m not in out:
            continue
        fill = []
        for _, r in out.iterrows():
            base = by_hash.get((r["dataset"], r.get("baseline_config_hash")))
            if is_missing(r[col]) and base is not None and base["config_hash"] != r["config_hash"]:
                fill.append(_table_delta(r, base, m))
            else:
                fill.append(r[col])
        out[col] = pd.Series(fill, index=out.index, dtype=float)
    family = [m for m in headline_metrics() if f"p_{m}" in out]
    adjusted = holm(out[[f"p_{m}" for m in family]].to_numpy(dtype=float).ravel()).reshape(
        len(out), -1
    )
    for j, m in enumerate(family):
        out[f"p_adj_{m}"] = adjusted[:, j]
    return sort_rows(typed_params(out))


def n_comparisons(df: pd.DataFrame) -> int:
    """The size of the table's Holm family (p-values of the headline metrics)."""
    cols = [f"p_{m}" for m in headline_metrics() if f"p_{m}" in df]
    return int(df[cols].notna().to_numpy().sum()) if cols else 0


def read_leaderboard(folder) -> pd.DataFrame:
    """<folder>/leaderboard.parquet as `hopbench report` wrote it, with the derived columns filled
    in for tables written by older versions (each `source`, runs or reference, on its own)."""
    from hopbench.report.reference import concat_rows

    df = pd.read_parquet(Path(folder) / "leaderboard.parquet")
    if df.empty or "source" not in df:
        return finish_table(df)
    return concat_rows([finish_table(g) for _, g in df.groupby("source", sort=False)])


# ---- the long (tidy) table --------------------------------------------------------------------
LONG_COLUMNS = [
    "run",
    "dataset",
    "method",
    "reader",
    "params",
    "metric",
    "value",
    "low",
    "high",
    "delta",
    "p",
    "p_adj",
    "baseline",
    "source",
]
_LONG_COSTS = COST_COLUMNS + ["fallback_rate"]


def long_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run x metric (a finished table in, see finish_table):

    run (config hash), dataset, method, reader, params (the differences from the method's
    defaults), metric, value (a fraction for quality metrics, as in the wide table; ms, calls,
    tokens, seconds per question for the costs), low / high (95% bootstrap interval), delta
    (method - baseline on the paired questions), p (paired test), p_adj (Holm across the table's
    headline comparisons; NaN for metrics outside that family), baseline (the paired run's
    hash), source (runs | reference, when the table says). Metrics without a value are left out.
    """
    rows = []
    for _, r in df.iterrows():
        ident = {
            "run": r["config_hash"],
            "dataset": r["dataset"],
            "method": r["retriever"],
            "reader": r["reader"],
            "params": r.get("params_diff") or "",
            "baseline": None
            if is_missing(r.get("baseline_config_hash"))
            else r["baseline_config_hash"],
            "source": None if is_missing(r.get("source")) else r["source"],
        }
        paired = ident["baseline"] is not None and ident["baseline"] != ident["run"]
        for m in metrics():
            if is_missing(r.get(m)):
                continue
            rows.append(
                {
                    **ident,
                    "metric": m,
                    "value": r[m],
                    "low": r.get(f"{m}_lo"),
                    "high": r.get(f"{m}_hi"),
                    "delta": r.get(f"delta_{m}") if paired else None,
                    "p": r.get(f"p_{m}") if paired else None,
                    "p_adj": r.get(f"p_adj_{m}") if paired else None,
                }
            )
        for m in _LONG_COSTS:
            if not is_missing(r.get(m)):
                rows.append({**ident, "metric": m, "value": r[m]})
    out = pd.DataFrame(rows, columns=LONG_COLUMNS)
    for c in ("value", "low", "high", "delta", "p", "p_adj"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c in ("run", "dataset", "method", "reader", "params", "metric", "baseline", "source"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out
