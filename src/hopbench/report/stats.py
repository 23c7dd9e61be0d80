"""Uncertainty for per-question scores: bootstrap confidence intervals and paired tests.

A leaderboard difference means little without them: on a 1,000-question split a 2-point gap
in Recall@5 may or may not be real. Both methods of a comparison are scored on the *same*
questions, so the tests are paired (question-level differences), which is far more
sensitive than comparing two independent intervals.

- `bootstrap_ci`: percentile bootstrap of the mean (same definition as
  `scipy.stats.bootstrap(method="percentile")`).
- `paired_bootstrap_p`: two-sided p-value of the mean paired difference, by inverting the
  percentile bootstrap interval of the differences (p < 0.05 exactly when the 95% interval
  of the difference excludes 0). Used for continuous scores (F1, Recall@k, MRR, nDCG).
- `mcnemar_exact_p`: exact-binomial McNemar test on the discordant pairs. Used for 0/1
  scores (EM, FCR, JSR, accuracy).

Which one a metric gets is its declared kind (`paired_test_for`, hopbench.evaluate.metric_registry).
"""

from __future__ import annotations

from math import comb

import numpy as np

from hopbench.evaluate import metric_registry

DEFAULT_RESAMPLES = 10_000
_BATCH = 1_000  # resamples per batch: bounds memory at _BATCH x n counts


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator):
    """Yield batches (b x n) of how often each of n rows was drawn, one row per resample.

    A resample is stored as a count vector, so the means of every column of a score matrix
    come from one matrix product: all metrics of a run share the same resamples.
    """
    for start in range(0, n_resamples, _BATCH):
        b = min(_BATCH, n_resamples - start)
        idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=b * n).reshape(b, n)


def _bootstrap_means(values: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of `n_resamples` resamples (rows drawn with replacement) of `values` (n x m)."""
    n = values.shape[0]
    batches = [counts @ values / n for counts in resample_counts(n, n_resamples, rng)]
    return np.concatenate(batches) if batches else np.empty((0, values.shape[1]))


def _as_matrix(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v.reshape(-1, 1) if v.ndim == 1 else v


def bootstrap_cis(
    values, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap intervals of the column means of `values` (n x m), one resample
    set for all columns; NaNs when there are no rows."""
    v = _as_matrix(values)
    if v.shape[0] == 0:
        return np.full(v.shape[1], np.nan), np.full(v.shape[1], np.nan)
    means = _bootstrap_means(v, n_resamples, np.random.default_rng(seed))
    alpha = 1 - confidence
    lo, hi = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    constant = np.all(v == v[0], axis=0)  # every resample has the same mean: no rounding noise
    lo[constant] = hi[constant] = v[0, constant]
    return lo, hi


def bootstrap_ci(
    values, confidence: float = 0.95, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean; (nan, nan) for no values."""
    lo, hi = bootstrap_cis(_as_matrix(values), confidence, n_resamples, seed)
    return float(lo[0]), float(hi[0])


def paired_bootstrap_ps(
    method, baseline, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """Two-sided p-values that mean(method - baseline) differs from 0, per column (paired by row).

    p = 2 * min(P*(mean diff <= 0), P*(mean diff >= 0)) over bootstrap resamples of the
    question-level differences, capped at 1: the smallest alpha at which the percentile
    interval of the difference at confidence 1 - alpha excludes 0.
    """
    a, b = _as_matrix(method), _as_matrix(baseline)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same length, got {a.shape} and {b.shape}")
    if a.shape[0] == 0:
        return np.full(a.shape[1], np.nan)
    d = a - b
    means = _bootstrap_means(d, n_resamples, np.random.default_rng(seed))
    p = np.minimum(1.0, 2 * np.minimum(np.mean(means <= 0, axis=0), np.mean(means >= 0, axis=0)))
    constant = np.all(d == d[0], axis=0)
    p[constant] = np.where(d[0, constant] == 0, 1.0, 0.0)
    return p


def paired_bootstrap_p(
    method, baseline, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> float:
    """paired_bootstrap_ps for one score vector."""
    a, b = np.asarray(method, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same length, got {a.shape} and {b.shape}")
    return float(paired_bootstrap_ps(a, b, n_resamples, seed)[0])


def mcnemar_exact_p(method, baseline) -> float:
    """Exact McNemar: of the discordant pairs, is 'method right, baseline wrong' a fair coin?

    With b = #(method 1, baseline 0) and c = #(method 0, baseline 1), the two-sided
    p-value is min(1, 2 * P[Binomial(b + c, 1/2) <= min(b, c)]), computed in exact integers.
    """
    a, b_ = np.asarray(method, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b_.shape:
        raise ValueError(f"paired scores need the same length, got {a.shape} and {b_.shape}")
    bad = ~np.isin(a, (0.0, 1.0)) | ~np.isin(b_, (0.0, 1.0))
    if bad.any():
        raise ValueError(
            "McNemar needs 0/1 scores; got non-binary values "
            f"{sorted(set(a[bad]) | set(b_[bad]))[:5]}"
        )
    if a.size == 0:
        return float("nan")
    b = int(np.sum((a == 1) & (b_ == 0)))
    c = int(np.sum((a == 0) & (b_ == 1)))
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def paired_test_for(name: str) -> str:
    """The paired test of a metric, by its declared kind: 'paired_bootstrap' for a continuous
    score, 'mcnemar' for a binary one (docs/internals/architecture.md, Metrics). An undeclared name is a
    KeyError, never a guess."""
    return metric_registry.get(name).paired_test


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error), in the order given; NaNs are not
    part of the family and stay NaN.

    With the m p-values sorted, p_(1) <= ... <= p_(m), the adjusted p_(i) is
    max_{j <= i} min(1, (m - j + 1) p_(j)): reject p_(i) at level alpha exactly when every
    p_(j), j <= i, is below alpha / (m - j + 1).
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    m = int(ok.sum())
    if m == 0:
        return out
    vals = p[ok]
    order = np.argsort(vals, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * vals[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    out[ok] = adjusted
    return out
