"""The leaderboard: one row per dataset x method x config, with 95% CIs and paired tests.

Every metric M gets columns M (mean over the questions where it applies), M_lo / M_hi
(percentile bootstrap) and p_M (paired test against the baseline run on the same dataset,
on the questions both runs scored; see stats.py for which test).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from hopbench.report.runs import METRICS, Run, params_label
from hopbench.report.stats import (
    DEFAULT_RESAMPLES,
    bootstrap_ci,
    mcnemar_exact_p,
    paired_bootstrap_p,
    paired_test_for,
)

ID_COLUMNS = ["dataset", "retriever", "reader", "params", "limit", "config_hash", "n_questions",
              "n_retrieval_scored", "n_answer_scored"]
COST_COLUMNS = ["latency_ms_p50", "latency_ms_p95", "llm_calls_per_q", "llm_tokens_per_q"]
TEST_COLUMNS = ["baseline", "baseline_config_hash", "n_paired"]


def metric_columns(metrics=METRICS) -> list[str]:
    return [c for m in metrics for c in (m, f"{m}_lo", f"{m}_hi")]


def p_columns(metrics=METRICS) -> list[str]:
    return [f"p_{m}" for m in metrics]


def stable_seed(*parts: str) -> int:
    """A seed fixed by the run and metric, so the report is the same every time it is built."""
    return int(hashlib.sha256(":".join(parts).encode()).hexdigest()[:8], 16)


def summarize(values, seed: int, n_resamples: int = DEFAULT_RESAMPLES) -> tuple[float, float, float]:
    """(mean, lo, hi); NaNs when there are no values."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    lo, hi = bootstrap_ci(v, n_resamples=n_resamples, seed=seed)
    return float(v.mean()), lo, hi


def paired_p(method: dict[str, float], baseline: dict[str, float], metric: str, seed: int,
             n_resamples: int = DEFAULT_RESAMPLES) -> tuple[float, int]:
    """(p-value, number of paired questions) on the questions both runs scored."""
    ids = sorted(set(method) & set(baseline))
    if not ids:
        return float("nan"), 0
    a = np.array([method[i] for i in ids])
    b = np.array([baseline[i] for i in ids])
    if paired_test_for(metric) == "paired_bootstrap":
        return paired_bootstrap_p(a, b, n_resamples=n_resamples, seed=seed), len(ids)
    return mcnemar_exact_p(a, b), len(ids)


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
    for metric in METRICS:
        mean, lo, hi = summarize(run.scores(metric).values(), stable_seed(run.config_hash),
                                 n_resamples)
        row.update({metric: mean, f"{metric}_lo": lo, f"{metric}_hi": hi})
    lat = run.latencies()
    row["latency_ms_p50"] = float(np.percentile(lat, 50)) if lat.size else None
    row["latency_ms_p95"] = float(np.percentile(lat, 95)) if lat.size else None
    row["llm_calls_per_q"] = _per_question(m.get("llm_calls"), n)
    tokens = None
    if m.get("llm_prompt_tokens") is not None or m.get("llm_completion_tokens") is not None:
        tokens = (m.get("llm_prompt_tokens") or 0) + (m.get("llm_completion_tokens") or 0)
    row["llm_tokens_per_q"] = _per_question(tokens, n)

    base = choose_baseline(run, runs, baseline)
    row["baseline"] = baseline
    row["baseline_config_hash"] = base.config_hash if base is not None else None
    n_paired = 0
    for metric in METRICS:
        p = float("nan")
        if base is not None and base is not run:
            p, k = paired_p(run.scores(metric), base.scores(metric), metric,
                            stable_seed(run.config_hash, base.config_hash), n_resamples)
            n_paired = max(n_paired, k)
        row[f"p_{metric}"] = p
    row["n_paired"] = n_paired if base is not None and base is not run else None
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
    columns = ID_COLUMNS + metric_columns() + COST_COLUMNS + TEST_COLUMNS + p_columns() + ["run_dir"]
    if not runs:
        return pd.DataFrame(columns=columns)
    df = pd.DataFrame([run_row(r, runs, baseline, n_resamples) for r in runs])
    rest = [c for c in df.columns if c not in columns]
    return df[columns + rest].reset_index(drop=True)
