"""LinearRAGRetriever: the named configs, the dense fallback, the zeroed resets."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.linearrag.graph import build_graph, prefixed_texts
from hopbench.retrieve.linearrag.ner import CorpusEntities
from hopbench.retrieve.linearrag.retriever import LinearRAGRetriever


@pytest.mark.parametrize(
    "name, expected",
    [
        ("linearrag", (3, 0.5, 1.5, 1)),  # their LinearRAGConfig
        ("linearrag_musique", (5, 0.1, 2.0, 4)),  # their run.sh blocks
        ("linearrag_2wiki", (3, 0.4, 0.05, 1)),
        ("linearrag_hotpotqa", (3, 0.4, 0.05, 1)),
        ("linearrag_cli", (3, 0.4, 2.0, 3)),  # run.py's argparse
    ],
)
def test_named_configs_hold_their_values(name, expected):
    from hydra import compose, initialize_config_dir

    import hopbench.harness.config_resolvers  # noqa: F401
    from hopbench.core.paths import CONFIG_DIR
    from hopbench.harness.compose import build_retriever

    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"retriever={name}"])
    r = build_retriever(cfg)
    assert isinstance(r, LinearRAGRetriever) and cfg.retriever.name == name
    got = (r.max_iterations, r.iteration_threshold, r.passage_ratio, r.top_k_sentence)
    assert got == expected
    assert (r.passage_node_weight, r.damping, r.use_vectorized_retrieval) == (0.05, 0.5, False)


def unit(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def tiny() -> LinearRAGRetriever:
    texts = prefixed_texts(["Ann met Bob.", "Bob left.", "Nobody here."])
    ner = CorpusEntities(
        [["Ann", "Bob"], ["Bob"], []], {"Ann met Bob.": ["Ann", "Bob"], "Bob left.": ["Bob"]}
    )
    g = build_graph(texts, ner)
    r = LinearRAGRetriever(iteration_threshold=0.5)
    r.use_index(
        g,
        passage_embeddings=np.stack([unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)]),
        entity_embeddings=np.stack([unit(1, 0, 0), unit(0, 1, 0)]),
        sentence_embeddings=np.stack([unit(1, 1, 0), unit(0, 1, 0)]),
        passage_ids=["p0", "p1", "p2"],
    )
    return r


def test_no_question_entity_gives_the_dense_ranking():
    r = tiny()
    res = r.rank(unit(0, 0.2, 1), [], None, 3)
    assert res.passage_ids == ["p2", "p1", "p0"]
    np.testing.assert_allclose(res.scores[0], unit(0, 0.2, 1)[2], rtol=0, atol=1e-7)
    assert res.trace["fallback"]


def test_negative_seed_weights_are_zeroed_before_ppr():
    r = tiny()
    q = unit(0, 1, 0.1)
    d = r.score_question(q, ["zed"], np.stack([unit(-1, -0.1, 0)]))
    # the nearest entity, "Bob", has a negative cosine: its raw weight is negative, its reset 0
    assert d["trace"]["seeds"][0][0] == "Bob" and d["reset_raw"][1] < 0
    assert np.all(d["ppr"] >= 0) and np.isclose(d["ppr"].sum(), 1.0, rtol=0, atol=1e-12)
    res = r.ranking(d, 3)
    assert res.passage_ids[0] == "p1" and "fallback" not in res.trace


def test_a_warm_ner_cache_gives_the_cold_sentence_order(tmp_path, monkeypatch):
    """Sentence order numbers the graph's sentences: the cache must not sort it (#56)."""
    import hopbench.retrieve.linearrag.retriever as mod

    cold = CorpusEntities(
        [["Zed", "Ann"], ["Bob"]], {"Zed saw Ann.": ["Zed", "Ann"], "Bob.": ["Bob"]}
    )
    monkeypatch.setattr(mod, "run_corpus_ner", lambda nlp, texts: cold)
    monkeypatch.setattr(LinearRAGRetriever, "_nlp", lambda self: None)
    monkeypatch.setattr(mod, "ner_key", lambda model, texts: "k")
    r = LinearRAGRetriever()
    first = r._corpus_ner(["a", "b"], tmp_path)
    monkeypatch.setattr(mod, "run_corpus_ner", lambda nlp, texts: pytest.fail("cache unread"))
    warm = r._corpus_ner(["a", "b"], tmp_path)
    assert first is cold
    assert list(warm.sentence_entities) == ["Zed saw Ann.", "Bob."]
    assert warm.sentence_entities == cold.sentence_entities
    assert warm.passage_entities == cold.passage_entities
    texts = prefixed_texts(["Zed saw Ann.", "Bob."])
    a, b = build_graph(texts, cold), build_graph(texts, warm)
    assert (a.sentences, a.entities) == (b.sentences, b.entities)


@pytest.mark.slow
def test_certified_ppr_stop_returns_the_default_top10(musique_dataset, encoder):
    """`ppr_stop=certified_topk` (issue #59) on the 100 MuSiQue questions with
    linearrag_musique's settings: the top 10 of the default solve, scores within the bound."""
    import copy

    from hopbench.retrieve.base import Services
    from tests.retrieve.hipporag.test_hipporag_ppr_stop import certified_scores_agree

    r = LinearRAGRetriever(max_iterations=5, iteration_threshold=0.1, passage_ratio=2.0)
    r.prepare(None, Services(dataset=musique_dataset, encoder=encoder))
    cut = copy.copy(r)
    cut.ppr_stop = "certified_topk"
    certified = 0
    for q in musique_dataset.questions:
        a, b = r.retrieve(q, 10), cut.retrieve(q, 10)
        assert b.passage_ids == a.passage_ids, q.id
        certified += certified_scores_agree(a, b)
    assert certified > 80, certified
