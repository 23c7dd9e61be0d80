"""Bootstrap intervals and paired tests against scipy on known inputs."""

import numpy as np
import pytest
from scipy import stats

from hopbench.report.stats import (
    bootstrap_ci,
    mcnemar_exact_p,
    paired_bootstrap_p,
    paired_test_for,
)


def _scipy_ci(values, confidence=0.95, seed=1):
    res = stats.bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        confidence_level=confidence,
        n_resamples=20_000,
        method="percentile",
        random_state=seed,
    )
    return res.confidence_interval.low, res.confidence_interval.high


@pytest.mark.parametrize("kind", ["binary", "continuous", "skewed"])
def test_bootstrap_ci_matches_scipy_percentile(kind):
    rng = np.random.default_rng(7)
    values = {
        "binary": (rng.random(200) < 0.4).astype(float),  # like FCR@5
        "continuous": rng.choice([0, 0.25, 0.5, 0.75, 1.0], 150),  # like Recall@5 on 4-hop
        "skewed": rng.beta(0.5, 3, 120),
    }[kind]  # like F1
    lo, hi = bootstrap_ci(values, n_resamples=20_000, seed=3)
    s_lo, s_hi = _scipy_ci(values)
    se = values.std(ddof=1) / np.sqrt(len(values))
    # two independent Monte-Carlo estimates of the same quantiles agree to a tenth of a SE,
    # or to one step of the mean's lattice (1/n) for 0/1 data
    tol = max(0.1 * se, 1.01 / len(values)) if kind == "binary" else 0.1 * se
    assert abs(lo - s_lo) <= tol and abs(hi - s_hi) <= tol
    assert lo < values.mean() < hi
    # and the interval has the width the normal approximation predicts (sanity, 15%)
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_bootstrap_ci_confidence_level_and_degenerate_cases():
    values = np.r_[np.ones(30), np.zeros(70)]
    lo90, hi90 = bootstrap_ci(values, confidence=0.90)
    s_lo, s_hi = _scipy_ci(values, confidence=0.90)
    assert lo90 == pytest.approx(s_lo, abs=0.011) and hi90 == pytest.approx(s_hi, abs=0.011)
    lo95, hi95 = bootstrap_ci(values)
    assert lo95 <= lo90 and hi95 >= hi90
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)  # every resample is the same
    assert all(np.isnan(bootstrap_ci([])))
    assert bootstrap_ci(values, seed=5) == bootstrap_ci(values, seed=5)  # reproducible


@pytest.mark.parametrize("shift", [0.05, 0.1])
def test_paired_bootstrap_p_is_the_inverted_percentile_interval(shift):
    """p is the alpha at which scipy's (1 - alpha) percentile interval of the paired
    differences just touches 0."""
    rng = np.random.default_rng(11)
    base = rng.beta(2, 2, 150)
    method = np.clip(base + shift + rng.normal(0, 0.4, 150), 0, 1)
    p = paired_bootstrap_p(method, base, n_resamples=20_000, seed=2)
    d = method - base
    assert 0.002 < p < 0.5  # the known inputs give a p in the testable range
    low, high = _scipy_ci(d, confidence=1 - p)
    se = d.std(ddof=1) / np.sqrt(len(d))
    assert min(abs(low), abs(high)) < 0.1 * se
    # equivalently: the 95% interval excludes 0 exactly when p < 0.05
    lo95, hi95 = _scipy_ci(d)
    assert (p < 0.05) == (lo95 > 0 or hi95 < 0)


def test_paired_bootstrap_p_edge_cases():
    a = np.array([0.5, 1.0, 0.0, 0.25])
    assert paired_bootstrap_p(a, a) == 1.0  # identical methods
    assert paired_bootstrap_p(a + 0.1, a) == 0.0  # the same gain on every question
    rng = np.random.default_rng(0)
    x, y = rng.random(80), rng.random(80)
    assert paired_bootstrap_p(x, y, seed=4) == pytest.approx(
        paired_bootstrap_p(y, x, seed=4), abs=0.02
    )
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_p([1.0], [1.0, 0.0])


@pytest.mark.parametrize(
    "b,c,concordant",
    [(0, 0, 5), (1, 0, 3), (3, 12, 40), (7, 7, 1), (20, 35, 200), (240, 190, 500), (0, 9, 0)],
)
def test_mcnemar_exact_matches_scipy_binomtest(b, c, concordant):
    method = np.r_[
        np.ones(b), np.zeros(c), np.ones(concordant // 2), np.zeros(concordant - concordant // 2)
    ]
    base = np.r_[
        np.zeros(b), np.ones(c), np.ones(concordant // 2), np.zeros(concordant - concordant // 2)
    ]
    expected = 1.0 if b + c == 0 else stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact_p(method, base) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert mcnemar_exact_p(base, method) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_mcnemar_hand_worked_and_input_checks():
    # 2 discordant pairs both for the method: P = 2 * (1/2)^2 = 0.5
    assert mcnemar_exact_p([1, 1, 0, 1], [0, 0, 0, 1]) == 0.5
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_exact_p([0.5, 1.0], [1.0, 1.0])


def test_which_test_each_metric_gets():
    assert paired_test_for("f1") == paired_test_for("recall@5") == "paired_bootstrap"
    assert {paired_test_for(m) for m in ("em", "fcr@5", "jsr@5", "jsr_contain@5", "accuracy")} == {
        "mcnemar"
    }
    # continuous rank metrics: McNemar would refuse their fractions and stop the report
    assert paired_test_for("mrr@10") == paired_test_for("ndcg@10") == "paired_bootstrap"
    with pytest.raises(KeyError, match="no metric 'mrr@5' is declared"):
        paired_test_for("mrr@5")  # a name is looked up, never guessed from its spelling


def test_mrr_and_ndcg_get_the_paired_bootstrap_in_the_leaderboard(toy_runs):
    from hopbench.report.collect import collect
    from hopbench.report.leaderboard import stable_seed
    from hopbench.report.run_reader import load_runs

    df = collect(toy_runs, n_resamples=2_000).set_index("retriever")
    dense, spread = sorted(load_runs(toy_runs), key=lambda r: r.retriever)
    seed = stable_seed(spread.config_hash, dense.config_hash)
    for metric in ("mrr@10", "ndcg@10"):
        a = [spread.scores(metric)[q] for q in sorted(spread.scores(metric))]
        b = [dense.scores(metric)[q] for q in sorted(spread.scores(metric))]
        assert len(set(a) | set(b)) > 2  # fractions: McNemar would raise on them
        assert df.loc["spreading_activation", f"p_{metric}"] == pytest.approx(
            paired_bootstrap_p(a, b, n_resamples=2_000, seed=seed)
        )
        assert df.loc["spreading_activation", f"delta_{metric}"] == pytest.approx(
            np.mean(np.subtract(a, b))
        )


def test_all_metrics_share_resamples_and_match_one_at_a_time():
    """The matrix form (all metrics of a run at once) draws the same resamples as one metric at a
    time (bit-equal indices), and so gives the per-metric results up to summation order."""
    from hopbench.report.stats import bootstrap_cis, paired_bootstrap_ps, resample_counts

    # the property: the same seed draws the same resample indices, whatever the column count
    a = list(resample_counts(90, 2500, np.random.default_rng(9)))
    b = list(resample_counts(90, 2500, np.random.default_rng(9)))
    assert [x.shape for x in a] == [(1000, 90), (1000, 90), (500, 90)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert all((x.sum(axis=1) == 90).all() for x in a)

    rng = np.random.default_rng(5)
    v = np.c_[rng.random(90), (rng.random(90) < 0.3), np.ones(90)]
    lo, hi = bootstrap_cis(v, n_resamples=3000, seed=9)
    # a matrix product sums in another order than a vector product: equal to a few ulps
    tol = dict(rel=1e-12, abs=1e-15)
    for j in range(3):
        assert (lo[j], hi[j]) == pytest.approx(
            bootstrap_ci(v[:, j], n_resamples=3000, seed=9), **tol
        )
    assert lo[2] == hi[2] == 1.0
    w = np.clip(v + rng.normal(0, 0.3, v.shape), 0, 1)
    ps = paired_bootstrap_ps(w, v, n_resamples=3000, seed=9)
    one = [paired_bootstrap_p(w[:, j], v[:, j], n_resamples=3000, seed=9) for j in range(3)]
    assert list(ps) == pytest.approx(one, **tol)
