"""Issue #18 (3, 4): parameters as differences from each method's defaults, rows in a readable
order, signed differences with Holm-corrected p-values, the long table, integer parameters,
and column-width figures with legends outside the axes and sensitivity from matching runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hopbench.report.collect import collect, write_everything
from hopbench.report.leaderboard import (
    LONG_COLUMNS,
    finish_table,
    headline_metrics,
    holm,
    read_leaderboard,
)
from hopbench.report.markdown import fmt_delta, leaderboard_markdown
from hopbench.report.plots import (
    COLUMN_WIDTH,
    DPI,
    recall_figure,
    run_label,
    sensitivity_figure,
)
from hopbench.report.sweeps import sweeps

from .test_collect import DENSE_R5, SPREAD_R5


# ---- the Holm correction --------------------------------------------------------------------
def test_holm_against_a_hand_worked_case():
    # m = 4 (the NaN is not a comparison). Sorted: 0.005, 0.01, 0.03, 0.04
    #   0.005 x 4 = 0.02;  0.01 x 3 = 0.03;  0.03 x 2 = 0.06;  0.04 x 1 = 0.04 -> max(0.06, 0.04) = 0.06
    p = [0.01, 0.04, np.nan, 0.03, 0.005]
    assert np.allclose(holm(p), [0.03, 0.06, np.nan, 0.06, 0.02], equal_nan=True)
    # capped at 1: sorted 0.02 x 3 = 0.06, 0.3 x 2 = 0.6, 0.5 x 1 = 0.5 -> 0.6
    assert np.allclose(holm([0.5, 0.3, 0.02]), [0.6, 0.6, 0.06])
    assert np.allclose(holm([0.6, 0.9]), [1.0, 1.0])
    assert holm([]).size == 0 and np.isnan(holm([np.nan])).all()
    # Holm rejects at 0.05 exactly what its step-down rule rejects: 0.005 < 0.05/4, 0.01 < 0.05/3,
    # 0.03 > 0.05/2 stops it
    assert list(holm(p)[[0, 1, 3, 4]] < 0.05) == [True, False, False, True]


def test_the_tables_p_values_are_corrected_across_all_its_comparisons(sweep_runs):
    df = collect(sweep_runs, n_resamples=500)
    ps = df[[f"p_{m}" for m in headline_metrics()]].to_numpy(dtype=float)
    adjusted = df[[f"p_adj_{m}" for m in headline_metrics()]].to_numpy(dtype=float)
    family = ~np.isnan(ps)
    assert (
        family.sum() == 5 * 8
    )  # five runs against dense x eight metrics with values (no accuracy)
    assert np.allclose(adjusted[family], holm(ps[family]))
    assert np.isnan(adjusted[~family]).all()
    assert (adjusted[family] >= ps[family]).all()
    md = leaderboard_markdown(df)
    assert "Holm-corrected across the 40 comparisons of this table" in md
    # the same runs on their own are a smaller family: smaller corrections
    one = finish_table(df[df["config_hash"].isin(["d0000000000a", "5a0000000001"])])
    assert (
        one["p_adj_recall@5"].iloc[1]
        < df.set_index("config_hash").loc["5a0000000001", "p_adj_recall@5"]
    )


def test_signed_differences_in_points():
    assert fmt_delta(0.031, 0.012) == "+3.1 ▲ (0.012)"
    assert fmt_delta(-0.02, 0.0004) == "−2.0 ▼ (<0.001)"
    assert fmt_delta(-0.02, 0.2) == "−2.0 (0.200)"
    assert fmt_delta(0.0, 1.0) == "±0.0 (1.000)" and fmt_delta(float("nan"), float("nan")) == "–"


# ---- the long table ---------------------------------------------------------------------------
def test_long_table_schema_and_values(toy_runs, tmp_path):
    results = tmp_path / "results"
    write_everything(toy_runs, results, n_resamples=500, figures=False)
    long = pd.read_parquet(results / "leaderboard_long.parquet")
    assert (
        list(long.columns)
        == LONG_COLUMNS
        == [
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
    )
    for c in ("value", "low", "high", "delta", "p", "p_adj"):
        assert long[c].dtype == np.float64, c
    for c in ("run", "dataset", "method", "reader", "params", "metric", "source"):
        assert long[c].map(lambda v: isinstance(v, str)).all(), c
    assert not long.duplicated(["run", "metric"]).any()  # tidy: one row per run x metric
    wide = pd.read_parquet(results / "leaderboard.parquet").set_index("config_hash")
    s = long[long["run"] == "5a0000000001"].set_index("metric")
    assert s.loc["recall@5", "value"] == pytest.approx(np.mean(SPREAD_R5))
    assert s.loc["recall@5", "low"] == wide.loc["5a0000000001", "recall@5_lo"]
    # delta = method mean - baseline mean on the paired questions, hand-worked from the fixture
    assert s.loc["recall@5", "delta"] == pytest.approx(np.mean(SPREAD_R5) - np.mean(DENSE_R5))
    assert s.loc["fcr@5", "delta"] == pytest.approx(5 / 6 - 2 / 6) and s.loc[
        "fcr@5", "p"
    ] == pytest.approx(0.25)
    assert s.loc["fcr@5", "p_adj"] == wide.loc["5a0000000001", "p_adj_fcr@5"]
    assert np.isnan(s.loc["recall@1", "p_adj"]) and not np.isnan(
        s.loc["recall@1", "p"]
    )  # not in the family
    assert s.loc["latency_ms_p50", "value"] == pytest.approx(35.0) and np.isnan(
        s.loc["latency_ms_p50", "low"]
    )
    assert (s["params"] == "decay=0.5 depth=2").all() and (s["baseline"] == "d0000000000a").all()
    d = long[long["run"] == "d0000000000a"]
    assert (
        d["delta"].isna().all() and d["p"].isna().all() and (d["params"] == "").all()
    )  # the baseline itself
    assert "accuracy" not in set(long["metric"])  # no value, no row


def test_long_table_of_the_reference_beside_the_runs(toy_runs, tmp_path, run_factory):
    make_run, dense = run_factory
    reference = tmp_path / "reference"
    write_everything(
        toy_runs,
        reference,
        n_resamples=200,
        figures=False,
        reference_dir=reference,
        update_reference=True,
    )
    mine = tmp_path / "mine"
    make_run(mine, "musique_toy", "dense", "e0000000000b", dense)
    write_everything(
        mine, tmp_path / "out", n_resamples=200, figures=False, reference_dir=reference
    )
    long = pd.read_parquet(tmp_path / "out" / "leaderboard_long.parquet")
    assert dict(long.groupby("source")["run"].unique().map(sorted)) == {
        "reference": ["5a0000000001", "d0000000000a"],
        "runs": ["e0000000000b"],
    }


def test_figure_labels_name_the_method_and_only_what_differs(toy_runs):
    df = collect(toy_runs, n_resamples=200)
    spread = df[df["retriever"] == "spreading_activation"].iloc[0]
    assert (
        run_label(spread) == "spreading_activation\n  (decay=0.5 depth=2)"
    )  # too long for one line
    assert run_label(spread.to_dict() | {"retriever": "sa"}) == "sa (decay=0.5 depth=2)"
    assert run_label(df[df["retriever"] == "dense"].iloc[0]) == "dense"
    # a table written before params_diff: computed from the param.* columns
    old = df.drop(columns=["params_diff", "params_json"])
    assert (
        run_label(old[old["retriever"] == "spreading_activation"].iloc[0])
        == "spreading_activation\n  (decay=0.5 depth=2)"
    )
    long_row = pd.Series(
        {
            "retriever": "hipporag",
            "reader": "none",
            "params_diff": "damping=0.85 linking_top_k=10 passage_node_weight=0.1 top_phrases=8",
        }
    )
    lines = run_label(long_row).split("\n")
    assert lines[0] == "hipporag" and len(lines) > 2 and all(len(line) <= 30 for line in lines)
    assert (
        " ".join(line.strip() for line in lines[1:]) == f"({long_row['params_diff']})"
    )  # nothing dropped


def test_old_tables_get_short_params_integers_and_deltas(sweep_runs):
    """A table without its derived columns (params_diff, delta_*, p_adj_*) and with param.depth
    as float (a column with gaps): they come back the same, integers from params_json."""
    new = collect(sweep_runs, n_resamples=300)
    old = new.drop(
        columns=[c for c in new.columns if c.startswith(("delta_", "p_adj_"))] + ["params_diff"]
    )
    old["param.depth"] = old["param.depth"].astype(float)
    redone = finish_table(old)
    assert list(redone["params_diff"]) == list(new["params_diff"])
    assert str(redone["param.depth"].dtype) == "Int64"
    for m in ("recall@5", "fcr@5", "f1"):
        assert np.allclose(redone[f"delta_{m}"], new[f"delta_{m}"], equal_nan=True)
        assert np.allclose(redone[f"p_adj_{m}"], new[f"p_adj_{m}"], equal_nan=True)


# ---- integers, order ------------------------------------------------------------------------------
def test_integer_parameters_stay_integers(sweep_runs, tmp_path):
    results = tmp_path / "results"
    df, _ = write_everything(sweep_runs, results, n_resamples=200, figures=False)
    assert str(df["param.depth"].dtype) == "Int64" and df["param.decay"].dtype == np.float64
    pq = pd.read_parquet(results / "leaderboard.parquet")
    assert str(pq["param.depth"].dtype) == "Int64"
    assert pq["param.depth"].dropna().map(lambda v: isinstance(v, (int, np.integer))).all()
    csv = pd.read_csv(results / "leaderboard.csv", dtype=str, keep_default_na=False)
    assert sorted(set(csv["param.depth"])) == ["", "1", "2", "3"]  # not 1.0
    md = (results / "leaderboard.md").read_text()
    assert "depth=1 " in md and "depth=1.0" not in md
    assert read_leaderboard(results)["param.depth"].dtype == pq["param.depth"].dtype


def test_rows_are_ordered_by_dataset_method_and_parameters(sweep_runs):
    df = collect(sweep_runs, n_resamples=200)
    # by (decay, depth) in numeric order, the default run (decay 0.7, depth 3) in its place; the
    # config hashes would give 5a.., sw13.., sw17.., sw33.., sw37..
    assert list(df["config_hash"]) == [
        "d0000000000a",
        "sw1300000000",
        "sw3300000000",
        "5a0000000001",
        "sw1700000000",
        "sw3700000000",
    ]
    assert list(df["params_diff"]) == [
        "",
        "decay=0.3 depth=1",
        "decay=0.3",
        "decay=0.5 depth=2",
        "depth=1",
        "",
    ]
    md = " ".join(leaderboard_markdown(df).split("### Paired")[0].split())  # whitespace collapsed
    assert md.index("decay=0.3 depth=1") < md.index("decay=0.5 depth=2") < md.index("| depth=1 |")
    assert md.index("| depth=1 |") < md.index("| defaults |")


# ---- figures --------------------------------------------------------------------------------------
def test_recall_figure_is_column_wide_with_its_legend_below_the_axes(toy_runs):
    df = collect(toy_runs, n_resamples=200)
    fig = recall_figure(df, title="t")
    fig.canvas.draw()
    assert fig.get_figwidth() == pytest.approx(COLUMN_WIDTH)
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "dense",
        "spreading_activation\n  (decay=0.5 depth=2)",
    ]
    [ax] = fig.axes
    renderer = fig.canvas.get_renderer()
    assert (
        legend.get_window_extent(renderer).y1 <= ax.get_tightbbox(renderer).y0 + 1
    )  # below, not over
    assert ax.get_legend() is None


def test_figures_are_saved_as_png_and_pdf_at_column_width(sweep_runs, tmp_path):
    from PIL import Image

    write_everything(sweep_runs, tmp_path / "r", n_resamples=200)
    figures = tmp_path / "r" / "figures"
    pngs = sorted(figures.glob("*.png"))
    assert [p.name for p in pngs] == [
        "quality_vs_latency_musique_toy_qa.png",
        "recall_at_k_musique_toy_qa.png",
        "sensitivity_musique_toy_spreading_activation_qa_decay.png",
        "sensitivity_musique_toy_spreading_activation_qa_depth.png",
    ]
    for p in pngs:
        width, height = Image.open(p).size
        assert abs(width - COLUMN_WIDTH * DPI) < 0.1 * COLUMN_WIDTH * DPI, (p.name, width)
        assert height < 3 * width
        assert p.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
        assert b"/CreationDate" not in p.with_suffix(".pdf").read_bytes()
    # the same figures again are the same bytes (no creation date): a reference update
    # rewrites only the figures whose plot changed
    write_everything(sweep_runs, tmp_path / "again", n_resamples=200)
    for p in sorted(figures.iterdir()):
        assert (tmp_path / "again" / "figures" / p.name).read_bytes() == p.read_bytes(), p.name


def test_sensitivity_uses_matching_runs_only_with_dodged_bars_and_integer_ticks(sweep_runs):
    df = collect(sweep_runs, n_resamples=200)
    found = {sw.param: sw for sw in sweeps(df, metrics=["recall@5"])}
    assert set(found) == {"depth", "decay"}
    depth = found["depth"]
    assert depth.integer and depth.values == [1, 3]
    # one line per decay with both depths; the depth=2 decay=0.5 run matches no other: left out
    assert [fixed["decay"] for fixed, _ in depth.lines] == [0.3, 0.7]
    assert all(list(rows["_x"]) == [1, 3] for _, rows in depth.lines)
    assert "5a0000000001" not in {h for _, rows in depth.lines for h in rows["config_hash"]}
    assert depth.line_labels() == ["decay=0.3", "decay=0.7"]
    assert not found["decay"].integer and found["decay"].values == [0.3, 0.7]

    fig = sensitivity_figure(depth, metrics=["recall@5"])
    [ax] = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "3"]
    assert list(ax.get_xticks()) == [1, 3]
    xs = [np.asarray(c.lines[0].get_xdata(), dtype=float) for c in ax.containers]  # the data lines
    assert len(xs) == 2 and not np.allclose(xs[0], xs[1])  # dodged ...
    assert np.allclose((xs[0] + xs[1]) / 2, [1, 3])  # ... around the values run
    assert all(np.abs(x - [1, 3]).max() < 0.5 for x in xs)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["decay=0.3", "decay=0.7"]


def test_a_method_without_a_sweep_gets_no_sensitivity_figure(toy_runs):
    df = collect(toy_runs, n_resamples=200)  # one spreading run: nothing to sweep
    assert sweeps(df) == []
    assert not math.isnan(df["recall@5"].iloc[0])
