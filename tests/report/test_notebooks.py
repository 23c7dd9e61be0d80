"""The notebooks in experiments/ run headless (nbclient) on results built from hand-made runs."""

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hopbench.report.collect import write_everything

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


@pytest.fixture
def python3_kernel(tmp_path, monkeypatch):
    """A 'python3' kernelspec that runs this very interpreter (first on JUPYTER_PATH)."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (hopbench tests)",
                "language": "python",
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "python3"


@pytest.fixture
def results(sweep_runs, tmp_path, monkeypatch):
    out = tmp_path / "results"
    write_everything(sweep_runs, out, n_resamples=300, figures=False)
    monkeypatch.setenv("HOPBENCH_RESULTS_DIR", str(out))
    return out


def _execute(name: str, kernel: str) -> nbformat.NotebookNode:
    nb = nbformat.read(EXPERIMENTS / name, as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name=kernel, resources={"metadata": {"path": str(EXPERIMENTS)}}
    ).execute()
    return nb


def _outputs(nb) -> tuple[str, int]:
    """All text/plain and stream output, and the number of PNG images; fails on an error and on
    anything written to stderr (warnings)."""
    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                pytest.fail(f"{out['ename']}: {out['evalue']}")
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                pytest.fail(f"the notebook wrote to stderr: {out['text']}")
            text.append(out.get("text", ""))
            data = out.get("data", {})
            text.append(data.get("text/plain", ""))
            images += "image/png" in data
    return "\n".join(text), images


def test_leaderboard_notebook_runs_on_fixture_results(results, python3_kernel):
    nb = _execute("leaderboard.ipynb", python3_kernel)
    text, images = _outputs(nb)
    assert str(results.resolve()) in text
    assert "6 runs on 1 datasets" in text
    assert "95.8 [" in text and "spreading_activation" in text  # the table with intervals
    assert (
        "decay=0.5 depth=2" in text and "defaults" in text
    )  # parameters as differences from defaults
    assert "p_adj" in text and "0.25" in text and "▲" in text  # McNemar p, corrected p, direction
    assert "NeuroPath" in text or "HippoRAG 2" in text  # published rows next to ours
    assert images == 2  # recall@k curves and quality vs latency (one dataset, one reader)


def test_sensitivity_notebook_runs_on_fixture_results(results, python3_kernel):
    nb = _execute("sensitivity.ipynb", python3_kernel)
    text, images = _outputs(nb)
    # the sweep fixture: depth 1/3 x decay 0.3/0.7, and a lone depth=2 decay=0.5 run that matches
    # no other run's settings, so it is in no sweep
    assert "2 sweeps over 4 runs" in text
    assert "depth over [1, 3], one line per decay=0.3; decay=0.7" in text
    assert "decay over [0.3, 0.7], one line per depth=1; depth=3" in text
    grid = text[
        text.index("decay           0.3") :
    ]  # one 2 x 2 grid (the transpose is not repeated)
    assert grid.split("\n")[1].split()[:2] == ["depth=1", "56.9"] and "95.8" in grid.split("\n")[2]
    assert text.count("0.3         0.7") == 1 and "depth=1.0" not in text and "1.0 " not in grid
    assert images == 4  # recall@5 vs depth and vs decay, latency vs depth and vs decay


def test_leaderboard_notebook_loads_a_published_run_set(
    results, toy_runs, tmp_path, monkeypatch, python3_kernel
):
    from hopbench.report.run_set_export import export_run_set

    out, _ = export_run_set(toy_runs, tmp_path / "published", n_resamples=200)
    monkeypatch.setenv("HOPBENCH_RUN_SET", str(out))
    text, _ = _outputs(_execute("leaderboard.ipynb", python3_kernel))
    assert "6 published runs, 36 predictions with their traces" in text  # the sweep runs too
    assert "5a0000000001" in text and "no run set" not in text
