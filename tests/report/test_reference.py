"""Reference results: a user's report never overwrites them and shows them beside its own rows;
--update-reference merges runs into them without losing rows whose run folders are gone."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from hopbench.commands.report import main as cli
from hopbench.core.errors import HopbenchError
from hopbench.report.collect import write_everything


@pytest.fixture
def reference(toy_runs, tmp_path):
    """A reference folder made from the toy runs, whose run folders then disappear (another
    machine's runs)."""
    ref = tmp_path / "reference"
    write_everything(
        toy_runs, ref, n_resamples=200, figures=False, reference_dir=ref, update_reference=True
    )
    shutil.rmtree(toy_runs)
    return ref


def _update_reference(runs, reference):
    """hopbench report --update-reference of the runs in `runs` into `reference`."""
    write_everything(
        runs, None, n_resamples=200, figures=False, reference_dir=reference, update_reference=True
    )


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_user_report_leaves_the_reference_intact_and_shows_it_beside(
    reference, tmp_path, run_factory
):
    make_run, DENSE = run_factory
    before = _snapshot(reference)
    runs = tmp_path / "my-runs"
    make_run(runs, "musique_toy", "dense", "e0000000000b", DENSE, reader="none")
    make_run(runs, "hotpot_toy", "dense", "e0000000000c", DENSE, reader="none")
    out = tmp_path / "results"
    df, _ = write_everything(runs, out, n_resamples=200, figures=False, reference_dir=reference)
    assert _snapshot(reference) == before
    assert set(df["config_hash"]) == {"e0000000000b", "e0000000000c"}
    table = pd.read_csv(out / "leaderboard.csv")
    assert sorted(zip(table["source"], table["config_hash"])) == [
        ("reference", "5a0000000001"),
        ("reference", "d0000000000a"),
        ("runs", "e0000000000b"),
        ("runs", "e0000000000c"),
    ]
    md = (out / "leaderboard.md").read_text()
    assert "## Reference results" in md and md.index("e0000000000b") < md.index(
        "## Reference results"
    )
    assert md.index("## Reference results") < md.index("5a0000000001")


def test_report_refuses_to_write_into_the_reference(reference, tmp_path, run_factory):
    make_run, DENSE = run_factory
    runs = tmp_path / "my-runs"
    make_run(runs, "musique_toy", "dense", "e0000000000b", DENSE)
    with pytest.raises(HopbenchError, match="holds the committed reference results"):
        write_everything(runs, reference, n_resamples=200, figures=False, reference_dir=reference)
    assert (
        cli(
            [
                "--runs-dir",
                str(runs),
                "--results-dir",
                str(reference),
                "--reference-dir",
                str(reference),
                "--no-figures",
                "--resamples",
                "200",
            ]
        )
        == 2
    )


def test_update_reference_replaces_its_own_run_and_keeps_the_others(
    reference, tmp_path, run_factory
):
    make_run, DENSE = run_factory
    runs = tmp_path / "new-runs"
    rerun = {
        q: (["nothing"], ans, lat) for q, (ranked, ans, lat) in DENSE.items()
    }  # same run, new numbers
    make_run(runs, "musique_toy", "dense", "d0000000000a", rerun)
    make_run(runs, "hover_toy", "dense", "f0000000000d", DENSE)
    old = pd.read_parquet(reference / "leaderboard.parquet")
    _update_reference(runs, reference)
    new = pd.read_parquet(reference / "leaderboard.parquet")
    assert sorted(new["config_hash"]) == ["5a0000000001", "d0000000000a", "f0000000000d"]
    kept = new[new["config_hash"] == "5a0000000001"].iloc[0]
    assert kept["recall@5"] == old[old["config_hash"] == "5a0000000001"].iloc[0]["recall@5"]
    replaced = new[new["config_hash"] == "d0000000000a"].iloc[0]
    assert (
        replaced["recall@5"] == 0.0 < old[old["config_hash"] == "d0000000000a"].iloc[0]["recall@5"]
    )
    assert set(pd.read_parquet(reference / "breakdown.parquet")["config_hash"]) == set(
        new["config_hash"]
    )


def test_report_and_show_find_runs_under_HOPBENCH_RUNS_DIR(toy_runs, tmp_path, monkeypatch, capsys):
    from hopbench.commands import show

    monkeypatch.setenv("HOPBENCH_RUNS_DIR", str(toy_runs))
    monkeypatch.setenv("HOPBENCH_RESULTS_DIR", str(tmp_path / "out"))
    assert cli(["--no-figures", "--resamples", "200", "--no-reference"]) == 0
    assert set(pd.read_csv(tmp_path / "out" / "leaderboard.csv")["config_hash"]) == {
        "d0000000000a",
        "5a0000000001",
    }
    assert show.main(["d0000000000a", "q1", "--no-corpus"]) == 0
    assert "q1" in capsys.readouterr().out


def test_a_rerun_under_a_new_hash_supersedes_the_stale_row(reference, tmp_path, run_factory):
    """A config key added since (with its default) changes every hash: the rerun of the same
    settings replaces the old row instead of standing beside it; other settings stay."""
    make_run, DENSE = run_factory
    runs = tmp_path / "new-runs"
    make_run(
        runs,
        "musique_toy",
        "spreading_activation",
        "5b0000000009",
        DENSE,
        params={"depth": 2, "decay": 0.5},
    )
    make_run(
        runs,
        "musique_toy",
        "spreading_activation",
        "5c0000000009",
        DENSE,
        params={"depth": 3, "decay": 0.5},
    )
    _update_reference(runs, reference)
    new = pd.read_parquet(reference / "leaderboard.parquet")
    assert sorted(new["config_hash"]) == ["5b0000000009", "5c0000000009", "d0000000000a"]


def test_retire_drops_the_named_rows_and_refuses_unknown_hashes(
    reference, tmp_path, run_factory, capsys
):
    make_run, DENSE = run_factory
    runs = tmp_path / "new-runs"
    make_run(runs, "hover_toy", "dense", "f0000000000d", DENSE)
    args = [
        "--runs-dir",
        str(runs),
        "--reference-dir",
        str(reference),
        "--update-reference",
        "--no-figures",
        "--resamples",
        "200",
    ]
    before = _snapshot(reference)
    assert cli([*args, "--retire", "0123456789ab"]) == 2  # names no row: nothing changes
    assert "no reference row has this config hash" in capsys.readouterr().err
    assert _snapshot(reference) == before
    assert (
        cli(
            [
                "--runs-dir",
                str(runs),
                "--results-dir",
                str(tmp_path / "out"),
                "--retire",
                "5a0000000001",
                "--no-figures",
                "--resamples",
                "200",
            ]
        )
        == 2
    )  # only with --update-reference
    assert cli([*args, "--retire", "5a0000000001"]) == 0
    new = pd.read_parquet(reference / "leaderboard.parquet")
    assert sorted(new["config_hash"]) == ["d0000000000a", "f0000000000d"]
    assert set(pd.read_parquet(reference / "breakdown.parquet")["config_hash"]) == set(
        new["config_hash"]
    )


def test_the_same_settings_on_another_graph_is_another_row(reference, tmp_path, run_factory):
    """A spaCy-graph run and an OpenIE-graph run of the same settings stand side by side: an update
    with one of them keeps the other (the leaderboard row and its breakdown rows), while a rerun on
    the same graph still supersedes its stale row."""
    make_run, DENSE = run_factory

    def merge(config_hash, graph):
        runs = tmp_path / config_hash
        make_run(
            runs,
            "musique_toy",
            "spreading_activation",
            config_hash,
            DENSE,
            params={"depth": 2, "decay": 0.5},
            llm={"graph": graph},
        )
        _update_reference(runs, reference)
        new = pd.read_parquet(reference / "leaderboard.parquet")
        assert set(pd.read_parquet(reference / "breakdown.parquet")["config_hash"]) == set(
            new["config_hash"]
        )
        sa = new[new["retriever"] == "spreading_activation"]
        return sorted(zip(sa["config_hash"], sa["graph"]))

    merge("0e0000000001", "openie")
    assert merge("5e0000000002", "spacy") == [("0e0000000001", "openie"), ("5e0000000002", "spacy")]
    assert merge("5e0000000003", "spacy") == [("0e0000000001", "openie"), ("5e0000000003", "spacy")]


def test_an_update_keeps_the_breakdown_of_every_row_it_keeps(reference, tmp_path, run_factory):
    """Breakdown rows have no parameters: they leave with their run's leaderboard row, never
    because another run of the same method was merged."""
    make_run, DENSE = run_factory
    runs = tmp_path / "new-runs"
    make_run(
        runs,
        "musique_toy",
        "spreading_activation",
        "5f0000000004",
        DENSE,
        params={"depth": 4, "decay": 0.9},
    )
    _update_reference(runs, reference)
    new = pd.read_parquet(reference / "leaderboard.parquet")
    assert {"5a0000000001", "5f0000000004"} <= set(new["config_hash"])
    assert set(pd.read_parquet(reference / "breakdown.parquet")["config_hash"]) == set(
        new["config_hash"]
    )


def test_an_update_without_the_baseline_run_says_its_row_is_unpaired(
    reference, tmp_path, run_factory, caplog
):
    make_run, DENSE = run_factory
    runs = tmp_path / "new-runs"
    make_run(runs, "musique_toy", "spreading_activation", "5a0000000002", DENSE)
    with caplog.at_level("WARNING", logger="hopbench.report.collect"):
        _update_reference(runs, reference)
    assert "musique_toy / spreading_activation / 5a0000000002: no dense run" in caplog.text
    make_run(runs, "musique_toy", "dense", "d0000000000b", DENSE)
    caplog.clear()
    with caplog.at_level("WARNING", logger="hopbench.report.collect"):
        _update_reference(runs, reference)
    assert "no dense run" not in caplog.text
