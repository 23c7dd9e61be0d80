"""Retriever settings have one source (hopbench.retrieve.registry): the constructor."""

from __future__ import annotations

import inspect

import pytest
from omegaconf import OmegaConf

from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import build_retriever, load_config
from hopbench.retrieve.catrag.catrag import CatRAGRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever, HippoRAGSeeding
from hopbench.retrieve.qafd.flow_diffusion_code import QAFDCodeRetriever
from hopbench.retrieve.qafd.flow_diffusion_joint import JointFlowDiffusionRetriever
from hopbench.retrieve.registry import settings


def _retriever_cfg(name: str, *overrides: str) -> dict:
    cfg = load_config([f"retriever={name}", *overrides])
    return OmegaConf.to_container(cfg.retriever, resolve=True)


def test_settings_are_the_keyword_defaults_and_those_passed_on():
    s = settings(HippoRAGRetriever)
    assert s["damping"] == 0.5 and s["ppr_tol"] == 1e-10
    seeding = inspect.signature(HippoRAGSeeding.__init__).parameters
    assert s["seeding"]["top_phrases"] == seeding["top_phrases"].default  # the nested node
    assert settings(CatRAGRetriever)["damping"] == 0.5  # passed on by **hipporag


def test_pinned_and_unlisted_settings_are_not_in_the_schema():
    assert "graph_construction" not in settings(HippoRAGRetriever)  # unlisted
    assert "llm_name" not in settings(HippoRAGRetriever)["seeding"]  # the host's, passed on
    for host in (CatRAGRetriever, QAFDCodeRetriever):  # HippoRAG 2's seeds, pinned
        assert "method" not in settings(host)["seeding"]
    assert "method" not in settings(JointFlowDiffusionRetriever)["hipporag_seeding"]


def test_every_host_holds_the_seeding_as_an_object_built_from_its_node():
    """One pattern (issue #58): a nested node, held as `HippoRAGSeeding`, for every host."""
    for name, attr in (
        ("hipporag", "seeding"),
        ("hipporag1", "seeding"),
        ("catrag", "seeding"),
        ("flow_diffusion_code", "seeding"),
        ("flow_diffusion_joint", "hipporag_seeding"),
    ):
        cfg = load_config([f"retriever={name}", "llm=local", f"retriever.{attr}.top_phrases=7"])
        cfg.retriever.seeding = (
            "hipporag" if name == "flow_diffusion_joint" else cfg.retriever.seeding
        )
        seeding = getattr(build_retriever(cfg), attr)
        assert isinstance(seeding, HippoRAGSeeding) and seeding.top_phrases == 7, name
        assert seeding.llm_name == "local", name  # the host's llm_name, passed on
    assert build_retriever(load_config(["retriever=hipporag1"])).seeding.method == "hipporag1"
    code = build_retriever(load_config(["retriever=flow_diffusion_code"])).seeding
    assert (code.linking_top_k, code.method) == (10, "hipporag2")


def test_a_key_the_seeding_does_not_have_is_refused_naming_it():
    with pytest.raises(HopbenchError, match=r"retriever\.seeding\.top_phrase is not a setting"):
        HippoRAGRetriever(seeding={"top_phrase": 3})
    with pytest.raises(HopbenchError, match=r"retriever\.seeding\.method is not a setting"):
        CatRAGRetriever(llm_name="local", seeding={"method": "hipporag1"})  # pinned
    with pytest.raises(HopbenchError, match="must be a mapping"):
        HippoRAGRetriever(seeding="hipporag1")  # the flat setting of before issue #58


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
