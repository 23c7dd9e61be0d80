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
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (hopbench tests)", "language": "python"}))
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
    NotebookClient(nb, timeout=180, kernel_name=kernel,
                   resources={"metadata": {"path": str(EXPERIMENTS)}}).execute()
    return nb


def _outputs(nb) -> tuple[str, int]:
    """All text/plain and stream output, and the number of PNG images."""
    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                pytest.fail(f"{out['ename']}: {out['evalue']}")
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
    assert "p_fcr@5" in text and "0.25" in text  # the paired McNemar p-value
    assert "NeuroPath" in text or "HippoRAG 2" in text  # published rows next to ours
    assert images >= 2  # recall@k curves and quality vs latency


def test_sensitivity_notebook_runs_on_fixture_results(results, python3_kernel):
    nb = _execute("sensitivity.ipynb", python3_kernel)
    text, images = _outputs(nb)
    assert "5 runs with ['param.depth', 'param.decay']" in text
    assert "95.8" in text and "56.9" in text  # depth 3 vs depth 1 in the grid
    assert images >= 2  # metric vs depth/decay, latency vs depth
