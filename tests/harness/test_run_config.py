"""A run's names become folders under runs_dir: they must not lead anywhere else."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute


def _overrides(tmp_path, data_dir, cache_dir, *extra):
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'a' / 'b' / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique_sub",
        *extra,
    ]


def _written_outside(tmp_path) -> list:
    runs = tmp_path / "a" / "b" / "runs"
    return [p for p in tmp_path.rglob("*") if p.is_file() and runs not in p.parents]


@pytest.mark.parametrize(
    "override",
    [
        "dataset.name=../../x",
        "dataset.name=<tmp>/escape",
        "retriever.name=../..",
        "retriever.name=..",
        "dataset.name=.",
        "dataset.name=a/b",
        "dataset.name=.hidden",
        "dataset.name=''",
        "retriever.name=a\\b",
    ],
)
def test_names_that_would_leave_runs_dir_are_refused(tmp_path, data_dir, cache_dir, override):
    override = override.replace("<tmp>", str(tmp_path))  # an absolute path
    with pytest.raises(HopbenchError, match=r"must be a single folder name"):
        execute(load_config(_overrides(tmp_path, data_dir, cache_dir, override)))
    assert _written_outside(tmp_path) == []
    assert not (tmp_path / "a" / "b" / "runs").exists()


def test_a_climbing_name_is_one_line_and_exit_2(tmp_path, data_dir, cache_dir, child_env):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "hopbench.run",
            *_overrides(tmp_path, data_dir, cache_dir, "dataset.name=../../x"),
        ],
        cwd=tmp_path,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2
    errors = [line for line in res.stderr.splitlines() if line.startswith("hopbench: error:")]
    assert errors == [
        "hopbench: error: dataset.name must be a single folder name (letters, digits and "
        "_ . + -, not starting with '.'; it names the run's folder under runs_dir), got '../../x'"
    ]
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "a" / "x").exists() and not list(tmp_path.glob("a/x/**/*"))


@pytest.mark.parametrize("name", ["musique_sub", "2wikimultihopqa", "my-data.v2", "a+b"])
def test_ordinary_names_pass(tmp_path, data_dir, cache_dir, name):
    from hopbench.harness.run_config import check_run_config

    check_run_config(load_config(_overrides(tmp_path, data_dir, cache_dir, f"dataset.name={name}")))
