"""`hopbench report` on hand-made runs: the expected table, its CIs and p-values, all outputs."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from hopbench.commands.report import main as cli
from hopbench.report.breakdown import breakdown
from hopbench.report.collect import collect
from hopbench.report.run_reader import load_runs

# Hand-worked per-question scores of the fixture (tests/report/conftest.py), q1..q6.
DENSE_R5 = [1, 0.5, 2 / 3, 0, 0.25, 1]
SPREAD_R5 = [1, 1, 1, 1, 0.75, 1]
DENSE_FCR5 = [1, 0, 0, 0, 0, 1]
SPREAD_FCR5 = [1, 1, 1, 1, 0, 1]
DENSE_EM = [1, 0, 1, 0, 0, 0]
SPREAD_EM = [1, 1, 1, 1, 0, 0]
DENSE_F1 = [1, 0, 1, 0, 0, 2 / 3]  # 'jazz music' vs 'Jazz': P=1/2, R=1


def _scipy_ci(values):
    res = stats.bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        n_resamples=20_000,
        method="percentile",
        random_state=0,
    )
    return res.confidence_interval.low, res.confidence_interval.high


def _line(md: str, *cells: str) -> str:
    """The markdown row that holds all the given cells (whitespace collapsed)."""
    rows = [" ".join(r.split()) for r in md.splitlines() if r.startswith("|")]
    hits = [r for r in rows if all(f"| {c} |" in r for c in cells)]
    assert len(hits) == 1, (cells, rows)
    return hits[0]


def test_expected_table_from_two_runs(toy_runs):
    df = collect(toy_runs, n_resamples=20_000)
    assert list(df["retriever"]) == ["dense", "spreading_activation"]  # the killed run is left out
    dense, spread = df.iloc[0], df.iloc[1]
    assert dense["n_questions"] == spread["n_questions"] == 6
    assert dense["recall@5"] == pytest.approx(np.mean(DENSE_R5))
    assert spread["recall@5"] == pytest.approx(np.mean(SPREAD_R5))
    assert dense["fcr@5"] == pytest.approx(2 / 6) and spread["fcr@5"] == pytest.approx(5 / 6)
    assert dense["em"] == pytest.approx(2 / 6) and dense["f1"] == pytest.approx(np.mean(DENSE_F1))
    assert spread["jsr@5"] == pytest.approx(4 / 6) and dense["jsr@5"] == pytest.approx(1 / 6)
    # 95% CIs agree with scipy's percentile bootstrap, to one step of the lattice a 6-question
    # mean lives on (1/18 here: scores are multiples of 1/12 or 1/3); test_stats.py checks
    # agreement to a tenth of a standard error on larger inputs
    for row, values, metric in [
        (dense, DENSE_R5, "recall@5"),
        (spread, SPREAD_FCR5, "fcr@5"),
        (dense, DENSE_F1, "f1"),
    ]:
        lo, hi = _scipy_ci(values)
        assert row[f"{metric}_lo"] == pytest.approx(lo, abs=1 / 18 + 1e-9)
        assert row[f"{metric}_hi"] == pytest.approx(hi, abs=1 / 18 + 1e-9)
    # paired tests against dense on the same six questions
    assert spread["baseline_config_hash"] == "d0000000000a" and spread["n_paired"] == 6
    assert spread["p_fcr@5"] == pytest.approx(stats.binomtest(0, 3, 0.5).pvalue)  # b=3, c=0: 0.25
    assert spread["p_em"] == pytest.approx(stats.binomtest(0, 2, 0.5).pvalue)  # 0.5
    # Recall@5 gains are >= 0 on every question, 0 on two of six: a resampled mean is <= 0
    # only when all six draws are those two, so p = 2 * (2/6)**6
    assert spread["p_recall@5"] == pytest.approx(2 * (2 / 6) ** 6, abs=0.0015)
    assert pd.isna(dense["p_recall@5"]) and pd.isna(dense["n_paired"])  # the baseline itself
    # cost columns
    assert dense["latency_ms_p50"] == 3.5 and spread["latency_ms_p95"] == pytest.approx(57.5)
    assert spread["llm_calls_per_q"] == 2 and spread["llm_tokens_per_q"] == 600
    assert pd.isna(dense["llm_calls_per_q"])
    assert spread["params"] == "decay=0.5 depth=2" and spread["param.depth"] == 2
    assert spread["config_hash"] == "5a0000000001"


def test_cli_writes_tables_figures_and_readable_markdown(toy_runs, tmp_path, capsys):
    results = tmp_path / "results"
    assert (
        cli(["--runs-dir", str(toy_runs), "--results-dir", str(results), "--resamples", "2000"])
        == 0
    )
    out = capsys.readouterr().out
    md = (results / "leaderboard.md").read_text()
    assert "95% percentile-bootstrap" in md
    assert "| 95.8 ±" in _line(
        out.split("### Paired")[0], "musique_toy", "spreading_activation", "qa"
    )
    main_md = md.split("### Paired tests", 1)[0]
    d = _line(main_md, "musique_toy", "dense", "qa")
    assert "| 56.9 ±" in d and "| 33.3 ±" in d and "| 3.50 | 5.75 |" in d and "d0000000000a" in d
    s = _line(main_md, "musique_toy", "spreading_activation", "qa", "decay=0.5 depth=2")
    assert "| 95.8 ±" in s and "| 2.0 | 600 |" in s
    # the paired-test table: signed differences to dense in points, with Holm-corrected p-values
    tests_md = md.split("### Paired tests", 1)[1]
    t = _line(tests_md, "spreading_activation", "5a0000000001", "d0000000000a", "6")
    csv = pd.read_csv(results / "leaderboard.csv")
    pq = pd.read_parquet(results / "leaderboard.parquet")
    spread = pq.iloc[1]
    assert spread["p_fcr@5"] == pytest.approx(0.25) and spread["delta_fcr@5"] == pytest.approx(
        3 / 6
    )
    assert f"| +50.0 ({spread['p_adj_fcr@5']:.3f}) |" in t  # FCR@5 5/6 vs 2/6, not significant
    assert spread["p_adj_recall@5"] < 0.05 and "| +38.9 ▲ (" in t  # Recall@5 95.8 vs 56.9
    assert "Holm-corrected across the 8 comparisons of this table" in tests_md
    assert "killed000000" not in md
    # csv and parquet hold the same rows
    assert list(csv["config_hash"]) == list(pq["config_hash"]) == ["d0000000000a", "5a0000000001"]
    long = pd.read_parquet(results / "leaderboard_long.parquet")
    assert set(long["run"]) == {"d0000000000a", "5a0000000001"} and set(long["source"]) == {"runs"}
    assert len(pd.read_csv(results / "leaderboard_long.csv")) == len(long)
    # breakdown, published view, figures
    bd = (results / "breakdown.md").read_text()
    assert "recall@5 by hops" in bd and "2-hop" in bd and "4-hop" in bd
    pv = (results / "published_vs_ours.md").read_text()
    assert "Not comparable as-is" in pv and "## musique — recall@5" in pv
    assert "6 questions of musique_toy" in pv and "HippoRAG 2" in pv
    assert (results / "published.csv").exists()
    figs = sorted(p.name for p in (results / "figures").iterdir())
    assert figs == [
        "quality_vs_latency_musique_toy_qa.pdf",
        "quality_vs_latency_musique_toy_qa.png",
        "recall_at_k_musique_toy_qa.pdf",
        "recall_at_k_musique_toy_qa.png",
    ]
    for f in (results / "figures").glob("*.png"):
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.stat().st_size > 5000
    for f in (results / "figures").glob("*.pdf"):
        assert f.read_bytes()[:5] == b"%PDF-"


def test_breakdown_by_hops(toy_runs):
    bd = breakdown(load_runs(toy_runs), n_resamples=500)
    dense = bd[(bd["retriever"] == "dense") & (bd["group_by"] == "hops")].set_index("group")
    assert dense.loc["2", "n"] == 3 and dense.loc["3", "n"] == 2 and dense.loc["4", "n"] == 1
    assert dense.loc["2", "recall@5"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert dense.loc["3", "recall@5"] == pytest.approx((2 / 3 + 0) / 2)
    assert dense.loc["4", "recall@5"] == pytest.approx(0.25)
    spread = bd[(bd["retriever"] == "spreading_activation")].set_index("group")
    # within 3-hop: FCR@5 1,1 vs 0,0 -> McNemar b=2, c=0
    assert spread.loc["3", "p_fcr@5"] == pytest.approx(stats.binomtest(0, 2, 0.5).pvalue)
    assert set(bd["group_by"]) == {"hops"}  # the fixture has no question types


def test_baseline_option_changes_the_reference(toy_runs, tmp_path):
    df = collect(toy_runs, baseline="spreading_activation", n_resamples=1000)
    dense = df[df["retriever"] == "dense"].iloc[0]
    assert dense["baseline_config_hash"] == "5a0000000001"
    assert dense["p_fcr@5"] == pytest.approx(0.25)  # McNemar is symmetric
    assert (
        cli(
            [
                "--runs-dir",
                str(toy_runs),
                "--results-dir",
                str(tmp_path / "r"),
                "--no-figures",
                "--baseline",
                "spreading_activation",
                "--resamples",
                "500",
            ]
        )
        == 0
    )
    assert "against `spreading_activation`" in (tmp_path / "r" / "leaderboard.md").read_text()
    assert not (tmp_path / "r" / "figures").exists()


def test_sweep_gives_sensitivity_table_and_figure(sweep_runs, tmp_path):
    results = tmp_path / "results"
    assert (
        cli(["--runs-dir", str(sweep_runs), "--results-dir", str(results), "--resamples", "500"])
        == 0
    )
    sens = pd.read_csv(results / "sensitivity.csv")
    assert len(sens) == 5 and set(sens["param.depth"]) == {1, 2, 3}
    assert set(sens["param.decay"]) == {0.3, 0.5, 0.7}
    deep = sens[sens["param.depth"] == 3]["recall@5"]
    assert np.allclose(deep, np.mean(SPREAD_R5))
    for param in ("depth", "decay"):
        fig = results / "figures" / f"sensitivity_musique_toy_spreading_activation_qa_{param}.png"
        assert fig.read_bytes()[:4] == b"\x89PNG" and fig.with_suffix(".pdf").exists()


def test_malformed_predictions_are_named(toy_runs, tmp_path, capsys):
    pred = toy_runs / "musique_toy" / "dense" / "d0000000000a" / "predictions.jsonl"
    lines = pred.read_text().splitlines()
    row = json.loads(lines[2])
    row["metrics"]["recall@5"] = "high"
    lines[2] = json.dumps(row)
    pred.write_text("\n".join(lines) + "\n")
    assert cli(["--runs-dir", str(toy_runs), "--results-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert str(pred) in err and "line 3" in err and "metrics.recall@5" in err


def test_no_runs_yet(tmp_path, capsys):
    assert cli(["--runs-dir", str(tmp_path / "none"), "--results-dir", str(tmp_path / "r")]) == 0
    assert "no complete runs yet" in capsys.readouterr().out
    assert "no hopbench runs yet" in (tmp_path / "r" / "published_vs_ours.md").read_text()


def test_published_view_is_printed_on_request(toy_runs, tmp_path, capsys):
    assert (
        cli(
            [
                "--runs-dir",
                str(toy_runs),
                "--results-dir",
                str(tmp_path / "r"),
                "--no-figures",
                "--resamples",
                "200",
                "--published",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "# Published numbers next to hopbench's" in out and "Not comparable as-is" in out
    pub = pd.read_csv(tmp_path / "r" / "published.csv")
    assert {"method", "dataset", "metric", "value", "source", "models", "split_size"} <= set(
        pub.columns
    )

    # one spot check per paper against docs/published.md
    def value(method, dataset, metric, source):
        hit = pub[
            (pub["method"] == method)
            & (pub["dataset"] == dataset)
            & (pub["metric"] == metric)
            & pub["source"].str.startswith(source)
        ]
        assert len(hit) == 1, (method, dataset, metric, source)
        return hit["value"].iloc[0]

    assert value("HippoRAG 2", "musique", "recall@5", "HippoRAG 2 paper") == 74.7
    assert value("CatRAG", "hover", "jsr_contain@5", "CatRAG") == 31.1
    assert value("NeuroPath (BGE-M3)", "2wikimultihopqa", "recall@2", "NeuroPath") == 78.1
    assert value("QAFD-RAG", "hotpotqa", "em", "QAFD-RAG paper") == 58.10
    assert (pub[pub["source"].str.startswith("QASA")]["split_size"].isin([500, 1000])).all()


def test_complete_run_without_predictions_is_an_error(toy_runs, tmp_path, capsys):
    (toy_runs / "musique_toy" / "dense" / "d0000000000a" / "predictions.jsonl").unlink()
    assert cli(["--runs-dir", str(toy_runs), "--results-dir", str(tmp_path / "r")]) == 2
    assert "predictions.jsonl" in capsys.readouterr().err


# ---- fallback rate (issue #14.2) ------------------------------------------------------------
def test_fallback_columns_are_counted_for_old_runs_and_marked_when_high(
    fallback_runs, tmp_path, capsys
):
    runs = fallback_runs
    df = collect(runs, n_resamples=200).set_index("config_hash")
    assert (
        df.loc["ca0000000001", "n_fallback"] == 3 and df.loc["ca0000000001", "fallback_rate"] == 0.5
    )
    assert (
        df.loc["h10000000001", "n_fallback"] == 0 and df.loc["h10000000001", "fallback_rate"] == 0.0
    )
    for old in (
        "d0000000000a",
        "5a0000000001",
    ):  # written before they were counted: from predictions
        assert df.loc[old, "n_fallback"] == 0 and df.loc[old, "fallback_rate"] == 0.0

    results = tmp_path / "results"
    assert (
        cli(
            [
                "--runs-dir",
                str(runs),
                "--results-dir",
                str(results),
                "--resamples",
                "200",
                "--no-figures",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    [warning] = [ln for ln in captured.err.splitlines() if "warning" in ln]
    assert warning == (
        "hopbench report: warning: fallback rate above 10% (their numbers are partly "
        "the fallback's, not the method's): musique_toy/catrag ca0000000001 (50%)"
    )
    csv = pd.read_csv(results / "leaderboard.csv", dtype={"n_fallback": "string"}).set_index(
        "config_hash"
    )
    pq = pd.read_parquet(results / "leaderboard.parquet").set_index("config_hash")
    assert (
        csv.loc["ca0000000001", "n_fallback"] == "3"
        and csv.loc["d0000000000a", "n_fallback"] == "0"
    )
    assert (
        pq.loc["ca0000000001", "n_fallback"] == 3 and pq.loc["5a0000000001", "fallback_rate"] == 0.0
    )
    md = (results / "leaderboard.md").read_text()
    main_md = md.split("### Paired tests", 1)[0]
    assert "| 50.0% ⚠ |" in _line(main_md, "musique_toy", "catrag")
    assert "| 0.0% |" in _line(main_md, "musique_toy", "hipporag")
    assert "| 0.0% |" in _line(main_md, "musique_toy", "dense", "d0000000000a")
    assert (
        "**Warning:** fallback rate above 10%" in main_md
        and "musique_toy/catrag ca0000000001" in main_md
    )
    assert "marked ⚠ above 10%" in md


def test_no_warning_when_no_run_falls_back_often(toy_runs, tmp_path, capsys):
    assert (
        cli(
            [
                "--runs-dir",
                str(toy_runs),
                "--results-dir",
                str(tmp_path / "r"),
                "--resamples",
                "200",
                "--no-figures",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "warning" not in captured.err and "**Warning:**" not in captured.out


def test_a_run_on_another_graph_says_so_in_its_parameters(tmp_path):
    from hopbench.report.run_reader import Run

    def run(retriever, metrics=None):
        config = {"retriever": {"name": retriever}, "graph": {"extractor": "spacy"}}
        return Run(
            dir=tmp_path,
            metrics={"retriever": retriever, "method": {"params_diff": {}}, **(metrics or {})},
            config=config,
            predictions=[],
        )

    assert run("hipporag", {"graph": "openie"}).params_diff == {"graph": "openie"}
    assert (
        run("hipporag", {"graph": "spacy"}).params_diff == {}
        and run("dense", {"graph": None}).params_diff == {}
    )
    assert run("hipporag", {"graph": "openie/hipporag2"}).params_diff == {
        "graph": "openie/hipporag2"
    }
    assert (
        run("hipporag").graph == "?" and run("dense").graph is None
    )  # not recorded: `hopbench migrate`


def test_an_older_run_gets_its_graph_and_method_from_hopbench_migrate(tmp_path):
    from hopbench.harness.run_migration import migrate_run
    from hopbench.report.run_reader import load_run

    run_dir = tmp_path / "musique" / "spreading_activation" / "abc"
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "retriever": {"name": "spreading_activation", "decay": 0.3, "depth": 3},
                "graph": {"extractor": "spacy", "construction": "hipporag2"},
                "llm": {"name": "none"},
            }
        )
    )
    (run_dir / "metrics.json").write_text(json.dumps({"retriever": "spreading_activation"}))
    (run_dir / "predictions.jsonl").write_text("")
    assert load_run(run_dir).params_diff == {
        "decay": 0.3,
        "depth": 3,
    }  # unknown defaults: every setting
    assert migrate_run(run_dir) and not migrate_run(run_dir)  # once, then nothing to do
    upgraded = load_run(run_dir)
    assert upgraded.graph == "spacy/hipporag2" and upgraded.family == "spreading_activation"
    assert upgraded.params_diff == {"graph": "spacy/hipporag2", "decay": 0.3}


def test_breakdown_groups_neuropath_questions_by_tracker_calls():
    from types import SimpleNamespace

    from hopbench.report.breakdown import groups

    run = SimpleNamespace(
        predictions=[
            {"id": "a", "meta": {"hops": 2}, "trace": {"hop_stats": {"tracker_calls": 1}}},
            {"id": "b", "meta": {"hops": 2}, "trace": {"hop_stats": {"tracker_calls": 2}}},
            {"id": "c", "meta": {"hops": 3}, "trace": {"hop_stats": {"tracker_calls": 1}}},
            {"id": "d", "meta": {"hops": 3}, "trace": {}},
        ]
    )
    assert groups(run, "tracker_calls") == {"1": {"a", "c"}, "2": {"b"}}
    assert groups(run, "hops") == {"2": {"a", "b"}, "3": {"c", "d"}}


def test_latency_adds_back_the_seconds_cached_replies_cost_when_first_made(tmp_path, run_maker):
    """A rerun whose retrieval replies came from the response cache reports the latency the
    first run had: each row's retrieval `llm_cached_seconds` is added back (reading is not
    retrieval latency, so the reader's are not)."""
    make_run, spread = run_maker
    cached = {"q1": 0.5, "q2": 1.0, "q3": 0.0, "q4": 2.0, "q5": 0.25, "q6": 4.0}

    def trace(qid):
        return {
            "llm_cost": {
                "llm_calls": 2,
                "llm_cache_hits": 2,
                "llm_seconds": 0.0,
                "llm_cached_seconds": cached[qid],
            }
        }

    runs = tmp_path / "runs"
    run = make_run(runs, "musique_toy", "catrag", "ca0000000001", spread, trace=trace)
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    for r in rows:
        r["reader_trace"] = {"llm_cost": {"llm_cached_seconds": 100.0}}
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    first = [spread[q][2] + 1000 * cached[q] for q in sorted(cached)]
    row = collect(runs, n_resamples=50).iloc[0]
    assert row["latency_ms_p50"] == pytest.approx(np.percentile(first, 50))
    assert row["latency_ms_p95"] == pytest.approx(np.percentile(first, 95))
