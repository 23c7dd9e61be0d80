"""graph.description.embedding=composed: description vectors composed from the name, fact and
passage vectors, checked against an independent loop on the real MuSiQue sub-corpus graph."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.kg import load_or_build
from hopbench.kg.cache_keys import cache_keys
from hopbench.kg.extraction_run import make_extractor
from hopbench.kg.settings import resolve_settings

COMPOSED = {"description": {"embedding": "composed"}}


def _independent(kg, max_facts: int) -> np.ndarray:
    """Per entity, with plain loops over the stored graph: its first `max_facts` facts (as
    subject first, then as object, in fact order), the first passage that holds it (context
    edges or, for an entity only in a dropped triple, nothing else to find), and its name."""
    ctx = kg.context.tocsc()
    n_fact = len(kg.fact_relation)
    out = np.zeros_like(kg.entity_embeddings, dtype=np.float64)
    for e in range(kg.n_entities):
        subj = [f for f in range(n_fact) if kg.fact_subject[f] == e]
        obj = [f for f in range(n_fact) if kg.fact_object[f] == e]
        facts = (subj[:max_facts] + obj)[:max_facts]
        rows = ctx.indices[ctx.indptr[e] : ctx.indptr[e + 1]]
        first = int(rows.min())
        parts = [kg.entity_embeddings[e], *kg.fact_embeddings[facts], kg.passage_embeddings[first]]
        mean = np.mean(np.asarray(parts, dtype=np.float64), axis=0)
        out[e] = mean / np.linalg.norm(mean)
    return out


def test_composed_descriptions_match_an_independent_computation(
    musique_sub, musique_kg, encoder, cache_dir
):
    kg = load_or_build(musique_sub, COMPOSED, encoder=encoder, cache_dir=cache_dir)
    assert kg.manifest["graph_key"] != musique_kg.manifest["graph_key"]
    assert kg.manifest["settings"]["description"]["embedding"] == "composed"
    # everything but the description vectors is the reference graph's
    assert kg.entity_descriptions == musique_kg.entity_descriptions
    for name in ("entity_embeddings", "fact_embeddings", "passage_embeddings"):
        np.testing.assert_array_equal(getattr(kg, name), getattr(musique_kg, name))
    assert (kg.synonym != musique_kg.synonym).nnz == 0
    assert (
        kg.context.sum(axis=0) > 0
    ).all()  # every entity has a passage (else the check below lies)
    ref = _independent(kg, max_facts=4)
    assert (
        kg.description_embeddings.shape == ref.shape
        and kg.description_embeddings.dtype == np.float32
    )
    np.testing.assert_allclose(kg.description_embeddings, ref, atol=1e-5)
    # and it really differs from encoding the description text
    cos = (kg.description_embeddings * musique_kg.description_embeddings).sum(axis=1)
    assert cos.max() < 0.9999 and np.median(cos) > 0.5


def test_max_facts_bounds_the_composed_facts(musique_sub, encoder, cache_dir):
    cfg = {"description": {"embedding": "composed", "max_facts": 1}}
    kg = load_or_build(musique_sub, cfg, encoder=encoder, cache_dir=cache_dir)
    np.testing.assert_allclose(kg.description_embeddings, _independent(kg, max_facts=1), atol=1e-5)


def test_text_is_the_default_and_keeps_the_historical_hash(musique_sub, encoder):
    settings = resolve_settings(None)
    assert settings["description"]["embedding"] == "text"
    ex = make_extractor(settings)
    _, key, inputs = cache_keys(list(musique_sub.corpus), settings, ex, encoder)
    assert (
        "embedding" not in inputs["description"]
    )  # graphs built before the setting keep their key
    explicit = resolve_settings({"description": {"embedding": "text"}})
    assert cache_keys(list(musique_sub.corpus), explicit, ex, encoder)[1] == key
    composed = resolve_settings(COMPOSED)
    assert cache_keys(list(musique_sub.corpus), composed, ex, encoder)[1] != key


def test_bad_description_embedding_settings_are_refused():
    with pytest.raises(HopbenchError, match="graph.description.embedding must be one of"):
        resolve_settings({"description": {"embedding": "average"}})
    with pytest.raises(HopbenchError, match="source=llm"):
        resolve_settings({"description": {"embedding": "composed", "source": "llm"}})
