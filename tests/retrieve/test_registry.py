"""Retriever settings have one source (hopbench.retrieve.registry): the constructor."""

from __future__ import annotations

import inspect

from omegaconf import OmegaConf

from hopbench.harness.compose import load_config
from hopbench.retrieve.catrag.catrag import CatRAGRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever, HippoRAGSeeding
from hopbench.retrieve.registry import settings


def _retriever_cfg(name: str, *overrides: str) -> dict:
    cfg = load_config([f"retriever={name}", *overrides])
    return OmegaConf.to_container(cfg.retriever, resolve=True)


def test_settings_are_the_keyword_defaults_and_those_passed_on():
    s = settings(HippoRAGRetriever)
    assert s["damping"] == 0.5 and s["ppr_tol"] == 1e-10
    seeding = inspect.signature(HippoRAGSeeding.__init__).parameters
    assert s["top_phrases"] == seeding["top_phrases"].default  # passed on by **seeding_settings


def test_pinned_and_unlisted_settings_are_not_in_the_schema():
    assert "graph_construction" not in settings(HippoRAGRetriever)  # unlisted
    assert set(CatRAGRetriever.pinned) & set(settings(CatRAGRetriever)) == set()


def test_a_composed_config_holds_every_setting_and_an_unlisted_one_only_where_set():
    hipporag = _retriever_cfg("hipporag", "llm=none")
    expected = settings(HippoRAGRetriever)
    assert {k: hipporag[k] for k in expected if k != "llm_name"} == {
        k: v for k, v in expected.items() if k != "llm_name"
    }
    assert hipporag["graph_construction"] == "hipporag2"
    assert _retriever_cfg("hipporag_hb")["graph_construction"] == "hopbench"
    assert _retriever_cfg("catrag", "llm=none")["graph_construction"] == "hipporag2"
    assert _retriever_cfg("catrag_hb", "llm=none")["graph_construction"] == "hopbench"
    for other in ("hipporag1",):
        assert "graph_construction" not in _retriever_cfg(other, "llm=none")
    assert _retriever_cfg("flow_diffusion_code")["graph_construction"] == "hipporag2"


def test_the_graph_construction_follows_the_retriever():
    for name, construction in (
        ("hipporag", "hipporag2"),
        ("hipporag_hb", "hopbench"),
        ("flow_diffusion_code", "hipporag2"),
        ("catrag", "hipporag2"),
        ("catrag_code", "hipporag2"),
        ("catrag_hb", "hopbench"),
        ("dense", "hopbench"),
    ):
        cfg = load_config([f"retriever={name}"])
        assert cfg.graph.construction == construction, name
