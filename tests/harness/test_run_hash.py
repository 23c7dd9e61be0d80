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


# the reference row musique / dense / qa (results/reference/leaderboard.csv, config_hash), as
# `make paper` composes it
DENSE_QA_REFERENCE = "f10fde263b39"
DENSE_QA_OVERRIDES = [
    "dataset=musique",
    "retriever=dense",
    "graph=spacy",
    "reader=qa",
    "llm=local",
    "llm.replay_failed=true",
]


def _reference_hash(ref, dataset, retriever, reader) -> str:
    import csv

    with open(ref, newline="", encoding="utf-8") as fh:
        rows = [
            r["config_hash"]
            for r in csv.DictReader(fh)
            if (r["dataset"], r["retriever"], r["reader"]) == (dataset, retriever, reader)
        ]
    assert len(rows) == 1
    return rows[0]


def test_a_reader_at_its_defaults_keeps_the_reference_hash(data_dir):
    """reader.context_tokens (issue #57) is left out of the hash at null: the reference row's
    hash is unchanged; a budget is another run."""
    from hopbench.harness.paper.reference import REFERENCE_LEADERBOARD
    from hopbench.harness.runner import plan

    assert _reference_hash(REFERENCE_LEADERBOARD, "musique", "dense", "qa") == DENSE_QA_REFERENCE
    base = [*DENSE_QA_OVERRIDES, f"paths.data_dir={data_dir}"]
    cfg = load_config(base)
    assert cfg.reader.context_tokens is None
    assert plan(cfg).config_hash == DENSE_QA_REFERENCE
    assert (
        plan(load_config([*base, "reader.context_tokens=1024"])).config_hash != DENSE_QA_REFERENCE
    )


def test_a_retriever_setting_added_at_its_neutral_value_keeps_earlier_hashes():
    """`ppr_stop` (issue #59) came after the reference runs: at "tol" it is left out of the
    hash (`Retriever.added_defaults`), so a config without the key (an earlier run's) hashes
    the same; the certified stop is another run."""
    for name in ("hipporag", "catrag", "linearrag"):
        cfg = load_config([f"retriever={name}", "llm=local"])
        retriever = build_retriever(cfg)
        assert cfg.retriever.ppr_stop == "tol"
        assert "ppr_stop" not in semantic_config(cfg, DATASET, retriever)["retriever"]
        earlier = OmegaConf.create(OmegaConf.to_container(cfg))
        del earlier.retriever["ppr_stop"]
        assert _hash(earlier, retriever) == _hash(cfg, retriever), name
        cut = load_config([f"retriever={name}", "llm=local", "retriever.ppr_stop=certified_topk"])
        assert _hash(cut, build_retriever(cut)) != _hash(cfg, retriever), name
