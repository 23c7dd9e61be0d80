"""`Retriever.run_metrics`: a method's own entries of metrics.json, merged by the runner.

The Neo4j spreading-activation retriever has one (n_query_timeouts, which the runner used to
count itself for every `needs_graphdb` retriever), NeuroPath adds its hop statistics and
LinearRAG its graph key (a graph of its own, not the shared KG); the rest add nothing, so their
metrics.json keys are what they were. No database needed: the hook reads the rows only.
"""

from __future__ import annotations

import textwrap

from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.retrieve.base import Retriever
from hopbench.retrieve.baselines.dense import DenseRetriever
from hopbench.retrieve.qasa.spreading_activation_neo4j import SpreadingActivationNeo4jRetriever
from hopbench.retrieve.registry import configurable_classes


def _rows(*timeouts):
    return [
        {"id": str(i), "trace": {"query_timeout": True} if t else {"mentions": []}}
        for i, t in enumerate(timeouts)
    ] + [{"id": "no-trace", "trace": None}]


def test_base_adds_nothing_and_neo4j_counts_its_timeouts():
    assert DenseRetriever().run_metrics(_rows(True)) == {}
    neo = SpreadingActivationNeo4jRetriever()
    assert neo.run_metrics(_rows(False, True, True)) == {"n_query_timeouts": 2}
    assert neo.run_metrics(_rows(False)) == {"n_query_timeouts": 0}
    assert neo.run_metrics([]) == {"n_query_timeouts": 0}


def test_only_the_database_retriever_neuropath_and_linearrag_have_metrics_of_their_own():
    """Before the hook the runner added n_query_timeouts exactly for `needs_graphdb`; besides
    those only NeuroPath (its hop statistics) and LinearRAG (its graph key) override the hook,
    so no other run's keys change."""
    from hopbench.retrieve.linearrag.retriever import LinearRAGRetriever
    from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever

    classes = [c for c in configurable_classes() if issubclass(c, Retriever)]
    assert SpreadingActivationNeo4jRetriever in classes and len(classes) > 5
    own = {c for c in classes if c.run_metrics is not Retriever.run_metrics}
    assert {c for c in classes if c.needs_graphdb} == {SpreadingActivationNeo4jRetriever}
    assert own == {SpreadingActivationNeo4jRetriever, NeuroPathRetriever, LinearRAGRetriever}


MODULE = '''
from hopbench.retrieve.base import Retrieval, Retriever


class CountingRetriever(Retriever):
    """The first k passages; counts in metrics.json the "Who" questions (a toy)."""

    def prepare(self, kg, services) -> None:
        self.ids = services.passage_ids

    def retrieve(self, question, k: int) -> Retrieval:
        return Retrieval(self.ids[:k], [1.0] * k, {"who": question.text.startswith("Who")})

    def run_metrics(self, rows):
        return {"n_who": sum(1 for r in rows if r["trace"]["who"]), "n_rows_seen": len(rows)}
'''


def test_the_runner_merges_the_hook_into_metrics(
    tmp_path, monkeypatch, data_dir, cache_dir, musique_sub
):
    code, conf = tmp_path / "code", tmp_path / "conf" / "retriever"
    code.mkdir()
    conf.mkdir(parents=True)
    (code / "counting_retriever.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(code))
    (conf / "counting.yaml").write_text(
        "name: counting\n_target_: counting_retriever.CountingRetriever\n"
    )
    base = [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "dataset=musique_sub",
        "progress=false",
    ]
    counting = load_config(
        [f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "retriever=counting", *base]
    )
    dense = load_config(["retriever=dense", *base])
    got = execute(counting)
    assert got["n_rows_seen"] == got["n_questions"] == 3
    assert got["n_who"] == sum(q.text.startswith("Who") for q in musique_sub.questions) == 1
    assert "n_query_timeouts" not in got
    d = execute(dense)
    assert "n_query_timeouts" not in d and "n_who" not in d
    assert set(got) - set(d) == {"n_who", "n_rows_seen"}
