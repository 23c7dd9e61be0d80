"""The leaderboard: one row per dataset x method x config, with 95% CIs and paired tests.

Every metric M gets columns M (mean over the questions where it applies), M_lo / M_hi
(percentile bootstrap) and p_M (paired test against the baseline run on the same dataset,
on the questions both runs scored; see stats.py for which test). `n_fallback` and
`fallback_rate` (questions ranked or answered by a fallback, `hopbench.evaluate.fallbacks`)
come from metrics.json and are missing, not 0, for runs written before they were counted.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from hopbench.report.runs import METRICS, Run, params_label
from hopbench.report.stats import (
    DEFAULT_RESAMPLES,
    bootstrap_cis,
    mcnemar_exact_p,
    paired_bootstrap_ps,
    paired_test_for,
)

ID_COLUMNS = ["dataset", "retriever", "reader", "params", "limit", "config_hash", "n_questions",
              "n_retrieval_scored", "n_answer_scored"]
COST_COLUMNS = ["latency_ms_p50", "latency_ms_p95", "llm_calls_per_q", "llm_tokens_per_q",
                "llm_seconds_per_q"]
FALLBACK_COLUMNS = ["n_fallback", "fallback_rate"]
TEST_COLUMNS = ["baseline", "baseline_config_hash", "n_paired"]


def metric_columns(metrics=METRICS) -> list[str]:
    return [c for m in metrics for c in (m, f"{m}_lo", f"{m}_hi")]


def p_columns(metrics=METRICS) -> list[str]:
    return [f"p_{m}" for m in metrics]


def stable_seed(*parts: str) -> int:
    """A seed fixed by the run and metric, so the report is the same every time it is built."""
    return int(hashlib.sha256(":".join(parts).encode()).hexdigest()[:8], 16)


def _by_question_set(scores: dict[str, dict[str, float]], metrics) -> list[tuple[list[str], list[str]]]:
    """Metrics scored on the same questions, grouped: (metrics, sorted question ids)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for m in metrics:
        ids = tuple(sorted(scores.get(m, {})))
        if ids:
            groups.setdefault(ids, []).append(m)
    return [(ms, list(ids)) for ids, ms in groups.items()]


def summaries(scores: dict[str, dict[str, float]], seed: int,
              n_resamples: int = DEFAULT_RESAMPLES) -> dict[str, tuple[float, float, float]]:
    """metric -> (mean, lo, hi) for every metric in METRICS (NaNs where it has no scores).
    Metrics on the same questions share one set of resamples."""
    out = {m: (float("nan"),) * 3 for m in METRICS}
    for ms, ids in _by_question_set(scores, METRICS):
        v = np.array([[scores[m][i] for m in ms] for i in ids])
        lo, hi = bootstrap_cis(v, n_resamples=n_resamples, seed=seed)
        for j, m in enumerate(ms):
            out[m] = (float(v[:, j].mean()), float(lo[j]), float(hi[j]))
    return out


def paired_pvalues(scores: dict[str, dict[str, float]], base: dict[str, dict[str, float]], seed: int,
                   n_resamples: int = DEFAULT_RESAMPLES) -> dict[str, tuple[float, int]]:
    """metric -> (p-value against the baseline, number of paired questions)."""
    out = {m: (float("nan"), 0) for m in METRICS}
    shared = {m: {i: (s, base[m][i]) for i, s in scores.get(m, {}).items() if i in base.get(m, {})}
              for m in METRICS}
    boot = [m for m in METRICS if paired_test_for(m) == "paired_bootstrap"]
    for ms, ids in _by_question_set({m: shared[m] for m in boot}, boot):
        a = np.array([[shared[m][i][0] for m in ms] for i in ids])
        b = np.array([[shared[m][i][1] for m in ms] for i in ids])
        for m, p in zip(ms, paired_bootstrap_ps(a, b, n_resamples=n_resamples, seed=seed), strict=True):
            out[m] = (float(p), len(ids))
    for m in METRICS:
        if m not in boot and shared[m]:
            pairs = np.array(list(shared[m].values()))
            out[m] = (mcnemar_exact_p(pairs[:, 0], pairs[:, 1]), len(pairs))
    return out


def all_scores(run: Run) -> dict[str, dict[str, float]]:
    return {m: run.scores(m) for m in METRICS}


def choose_baseline(run: Run, runs: list[Run], baseline: str) -> Run | None:
    """The baseline run to pair `run` with: same dataset, baseline retriever; prefer the same
    reader, then the most shared questions, then the most recent."""
    ids = {p["id"] for p in run.predictions}
    candidates = [r for r in runs if r.dataset == run.dataset and r.retriever == baseline]
    if not candidates:
        return None
    if any(r is run for r in candidates):
        return run
    return max(candidates, key=lambda r: (r.reader == run.reader,
                                          len(ids & {p["id"] for p in r.predictions}),
                                          str(r.metrics.get("finished_at", ""))))


def _per_question(value, n: int):
    return None if value is None or not n else float(value) / n


def run_row(run: Run, runs: list[Run], baseline: str, n_resamples: int = DEFAULT_RESAMPLES) -> dict:
    m = run.metrics
    n = len(run.predictions)
    row = {
        "dataset": run.dataset, "retriever": run.retriever, "reader": run.reader,
        "params": params_label(run.params), "limit": run.limit, "config_hash": run.config_hash,
        "n_questions": n,
        "n_retrieval_scored": sum("recall@1" in p["metrics"] for p in run.predictions),
        "n_answer_scored": sum(("em" in p["metrics"]) or ("accuracy" in p["metrics"])
                               for p in run.predictions),
    }
    scores = all_scores(run)
    for metric, (mean, lo, hi) in summaries(scores, stable_seed(run.config_hash), n_resamples).items():
        row.update({metric: mean, f"{metric}_lo": lo, f"{metric}_hi": hi})
    lat = run.latencies()
    row["latency_ms_p50"] = float(np.percentile(lat, 50)) if lat.size else None
    row["latency_ms_p95"] = float(np.percentile(lat, 95)) if lat.size else None
    row["llm_calls_per_q"] = _per_question(m.get("llm_calls"), n)
    tokens = None
    if m.get("llm_prompt_tokens") is not None or m.get("llm_completion_tokens") is not None:
        tokens = (m.get("llm_prompt_tokens") or 0) + (m.get("llm_completion_tokens") or 0)
    row["llm_tokens_per_q"] = _per_question(tokens, n)
    row["llm_seconds_per_q"] = None
    parts = [p for p in ("retrieval", "reader") if f"{p}_llm_calls_per_question" in m]
    if parts:  # per-question costs summed from the rows: right even for a resumed run
        row["llm_calls_per_q"] = sum(m[f"{p}_llm_calls_per_question"] for p in parts)
        row["llm_tokens_per_q"] = sum(m[f"{p}_llm_tokens_per_question"] for p in parts)
        row["llm_seconds_per_q"] = sum(m[f"{p}_llm_seconds_uncached_per_question"] for p in parts)
    row["n_fallback"] = m.get("n_fallback")          # None: a run from before fallbacks were counted
    row["fallback_rate"] = m.get("fallback_rate")

    base = choose_baseline(run, runs, baseline)
    row["baseline"] = baseline
    row["baseline_config_hash"] = base.config_hash if base is not None else None
    paired = base is not None and base is not run
    tests = (paired_pvalues(scores, all_scores(base), stable_seed(run.config_hash, base.config_hash),
                            n_resamples) if paired else {})
    for metric in METRICS:
        row[f"p_{metric}"] = tests[metric][0] if paired else float("nan")
    row["n_paired"] = max(k for _, k in tests.values()) if paired else None
    row["run_dir"] = str(run.dir)
    row["models"] = run.models
    for k, v in run.params.items():  # one column per hyper-parameter, for sweeps and plots
        row[f"param.{k}"] = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
    # everything else metrics.json holds (timings, LLM counters), for the csv/parquet
    for k, v in m.items():
        if k not in row and k not in METRICS:
            row[k] = v
    return row


def leaderboard(runs: list[Run], baseline: str = "dense",
                n_resamples: int = DEFAULT_RESAMPLES) -> pd.DataFrame:
    columns = (ID_COLUMNS + metric_columns() + COST_COLUMNS + FALLBACK_COLUMNS + TEST_COLUMNS
               + p_columns() + ["run_dir"])
    if not runs:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame([run_row(r, runs, baseline, n_resamples) for r in runs])
    # counts stay integers next to missing values (csv "3", not "3.0"; parquet int64 with nulls)
    df["n_fallback"] = pd.Series([None if pd.isna(v) else int(v) for v in df["n_fallback"]],
                                 dtype=object, index=df.index)
    rest = [c for c in df.columns if c not in columns]
    return df[columns + rest].reset_index(drop=True)
