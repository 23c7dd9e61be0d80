"""The run hash names the method by its registry name, not by the Python path of its class
(issue #58): moving a retriever class to another module changes no run's hash."""

from __future__ import annotations

from types import SimpleNamespace

from omegaconf import OmegaConf

from hopbench.harness.compose import build_retriever, load_config
from hopbench.harness.run_store import config_hash
from hopbench.harness.runner import semantic_config

DATASET = SimpleNamespace(fingerprint="f" * 64)


def _hash(cfg, retriever) -> str:
    return config_hash(semantic_config(cfg, DATASET, retriever))


def test_moving_a_retriever_class_changes_no_run_hash():
    cfg = load_config(["retriever=hipporag_hb", "llm=local"])
    retriever = build_retriever(cfg)
    moved = OmegaConf.merge(
        cfg, {"retriever": {"_target_": "elsewhere.hipporag.HippoRAGRetriever"}}
    )
    assert _hash(moved, retriever) == _hash(cfg, retriever)
    node = semantic_config(cfg, DATASET, retriever)["retriever"]
    assert "_target_" not in node and node["class"] == "HippoRAGRetriever"


def test_another_class_under_the_same_config_is_another_run():
    cfg = load_config(["retriever=dense"])
    dense = build_retriever(cfg)
    other = build_retriever(load_config(["retriever=oracle"]))
    assert _hash(cfg, dense) != _hash(cfg, other)


def test_a_class_outside_hopbench_is_named_by_its_import_path():
    from hopbench.retrieve.registry import registry_name

    class Mine:
        pass

    assert (
        registry_name(Mine)
        == f"{__name__}.test_a_class_outside_hopbench_is_named_by_its_import_path.<locals>.Mine"
    )
