"""Adding a retriever takes a module and a config (docs/add-a-method.md): a toy retriever from a
temporary folder, found through `hydra.searchpath` as docs/run.md documents for your own configs,
runs end to end on the MuSiQue subset and appears in the report."""

from __future__ import annotations

import csv
import textwrap

from hopbench.cli import main as cli_main
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute

MODULE = '''
from hopbench.retrieve.base import Retrieval, Retriever


class ToyRetriever(Retriever):
    """Every stride-th passage from the end of the corpus (a toy, not a method)."""

    def __init__(self, *, stride: int = 1) -> None:
        self.stride = stride

    def prepare(self, kg, services) -> None:
        self.ids = services.passage_ids

    def retrieve(self, question, k: int) -> Retrieval:
        ids = self.ids[::-self.stride][:k]
        return Retrieval(ids, [1.0 / (i + 1) for i in range(len(ids))], {"stride": self.stride})
'''

CONFIG = """\
name: toy
_target_: toy_retriever.ToyRetriever
stride: 1
"""


def test_a_toy_retriever_from_a_config_folder_runs_and_is_reported(
    tmp_path, monkeypatch, data_dir, cache_dir
):
    code = tmp_path / "code"
    code.mkdir()
    (code / "toy_retriever.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(code))
    (tmp_path / "conf" / "retriever").mkdir(parents=True)
    (tmp_path / "conf" / "retriever" / "toy.yaml").write_text(CONFIG)
    runs, results = tmp_path / "runs", tmp_path / "results"
    cfg = load_config(
        [
            f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
            "retriever=toy",
            "retriever.stride=2",
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={cache_dir}",
            "dataset=musique_sub",
            "progress=false",
        ]
    )
    metrics = execute(cfg)
    assert metrics["retriever"] == "toy" and metrics["n_questions"] == 3
    assert (
        cli_main(
            ["report", "--runs-dir", str(runs), "--results-dir", str(results), "--no-reference"]
        )
        == 0
    )
    rows = list(csv.DictReader((results / "leaderboard.csv").open()))
    assert [(r["dataset"], r["retriever"]) for r in rows] == [("musique_sub", "toy")]
    assert rows[0]["params"] == "stride=2"
    assert "toy" in (results / "leaderboard.md").read_text()
