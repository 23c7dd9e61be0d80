"""The tables name a run's folder relative to the runs folder (`<dataset>/<retriever>/<hash>`).

Why: an absolute path names the machine the report ran on; a committed table would carry it,
and it would be wrong on every other checkout. `hopbench show` reads both forms.
"""

from pathlib import Path

import pandas as pd

from hopbench.core.paths import run_folder_cell
from hopbench.report.collect import collect
from hopbench.report.show import find_run


def test_the_leaderboard_names_each_run_relative_to_the_runs_folder(toy_runs):
    df = collect(toy_runs.resolve(), n_resamples=200)
    assert list(df["run_dir"]) == [
        "musique_toy/dense/d0000000000a",
        "musique_toy/spreading_activation/5a0000000001",
    ]


def test_the_cell_of_an_absolute_or_relative_folder_is_its_last_three_parts():
    assert run_folder_cell(Path("/srv/x/runs/musique/dense/abc")) == "musique/dense/abc"
    assert run_folder_cell("runs/musique/dense/abc") == "musique/dense/abc"


def test_show_finds_a_run_from_either_form_of_the_cell(toy_runs, monkeypatch):
    folder = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    assert find_run("musique_toy/dense/d0000000000a", toy_runs) == folder
    assert find_run(str(folder.resolve()), toy_runs) == folder.resolve()


def test_no_committed_table_has_an_absolute_run_folder():
    reference = Path(__file__).resolve().parents[2] / "results" / "reference"
    tables = [pd.read_csv(p) for p in sorted(reference.glob("*.csv"))]
    tables += [pd.read_parquet(p) for p in sorted(reference.glob("*.parquet"))]
    cells = [c for t in tables if "run_dir" in t for c in t["run_dir"].dropna()]
    assert cells, "no run_dir column found in results/reference"
    absolute = [c for c in cells if Path(c).is_absolute() or len(Path(c).parts) != 3]
    assert not absolute, absolute[:5]
