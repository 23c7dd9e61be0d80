"""Graph and extraction keys are content addresses of graphs on disk: a refactor of how they are
computed (issue #58: the one omit-default rule, hopbench.core.hash_inputs) must leave every key
byte-identical. The keys below were recorded from the code before that change."""

from __future__ import annotations

import pytest

import hopbench.harness.config_resolvers  # noqa: F401  (registers graph/schema/settings)
from hopbench.data.schema import Passage
from hopbench.harness.compose import load_config
from hopbench.kg.cache_keys import cache_keys, extraction_key
from hopbench.kg.settings import resolve_settings

EXTRACTION = "b2d70244d61719be325e035d"
RECORDED = {  # graph settings -> graph key (fp32 encoder, int8 encoder)
    "defaults": (None, "759584b5780a3928b1b614a2", "0d31501d73d66ef0b86cbd32"),
    "explicit text": (
        {"description": {"embedding": "text"}},
        "759584b5780a3928b1b614a2",
        "0d31501d73d66ef0b86cbd32",
    ),
    "composed": (
        {"description": {"embedding": "composed"}},
        "f104164782244ffac7b05f8c",
        "5aa9458543a5e1fc1950fc40",
    ),
    "hipporag2": (
        {"construction": "hipporag2"},
        "757a342c874be23945c4275e",
        "965619ca7afafe4f2c6d2a52",
    ),
    "llm descriptions": (
        {"description": {"source": "llm"}},
        "30f34099e4b19b2a42fe809f",
        "ac4ceddfe661a3f697235f90",
    ),
    "synonym": (
        {"synonym": {"threshold": 0.9}},
        "1761e51f9fecf5f7b530d83c",
        "55c8248cb97e19d6d1bd9c15",
    ),
}
BUNDLED = {  # composed configs -> graph key (int8 encoder)
    "graph=spacy": "0d31501d73d66ef0b86cbd32",
    "graph=llm": "0d31501d73d66ef0b86cbd32",
    "graph=spacy retriever=hipporag": "965619ca7afafe4f2c6d2a52",
    "graph=spacy retriever=catrag_hb": "0d31501d73d66ef0b86cbd32",
    "graph=llm retriever=flow_diffusion_code": "965619ca7afafe4f2c6d2a52",
}


class _Extractor:
    def identity(self):
        return {"extractor": "stub", "model": "m"}


class _Encoder:
    """An encoder identity that follows the batch size, as an int8 backend's does."""

    def __init__(self, int8: bool):
        self.batch_size, self.int8 = 32, int8

    @property
    def identity(self) -> str:
        return f"enc:{self.batch_size}" if self.int8 else "enc"


class _LLM:
    identity = "llm-x"


CORPUS = [Passage(id=f"p{i}", title=f"T{i}", text=f"text {i}") for i in range(3)]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_graph_and_extraction_keys_are_those_recorded_before_the_refactor(name):
    graph, fp32, int8 = RECORDED[name]
    for encoder, expected in ((_Encoder(False), fp32), (_Encoder(True), int8)):
        ex, key, _ = cache_keys(CORPUS, resolve_settings(graph), _Extractor(), encoder, _LLM())
        assert (ex, key) == (EXTRACTION, expected)
    assert extraction_key(CORPUS, _Extractor()) == EXTRACTION


@pytest.mark.parametrize("overrides", sorted(BUNDLED))
def test_the_bundled_graph_configs_keep_their_keys(overrides):
    settings = resolve_settings(load_config(overrides.split()).graph)
    assert (
        cache_keys(CORPUS, settings, _Extractor(), _Encoder(True), _LLM())[1] == BUNDLED[overrides]
    )
