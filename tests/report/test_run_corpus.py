"""The report registers a run's corpus from its config.yaml (R@Nt needs token counts), and
leaves R@Nt out, without failing, when the run's files are not at hand."""

from __future__ import annotations

from hopbench.data import load_dataset
from hopbench.evaluate import token_budget
from hopbench.evaluate.metric_registry import Outcome, score
from hopbench.report.run_corpus import register_run_corpus


def test_a_runs_corpus_is_registered_from_its_config(data_dir):
    ds = {
        "name": "musique_sub",
        "format": "musique",
        "questions_path": str(data_dir / "musique/musique_qa_sub.json"),
        "corpus_path": str(data_dir / "musique/musique_sub_corpus.json"),
        "limit": 3,
    }
    assert register_run_corpus({"dataset": ds})
    q = load_dataset(**ds).questions[0]
    ranked = list(q.gold_passage_ids)
    assert token_budget.known(ranked) is not None
    scores = score(Outcome.of(q, ranked, None))
    assert scores["recall@2048t"] == 1.0  # two to four short passages: all fit in 2048 tokens


def test_a_run_whose_files_are_gone_gets_no_token_metrics(tmp_path):
    gone = {"name": "x", "format": "musique", "questions_path": str(tmp_path / "none.json")}
    assert not register_run_corpus({"dataset": gone})
    assert not register_run_corpus({"dataset": {"name": "toy", "format": "musique"}})
    assert not register_run_corpus({})
