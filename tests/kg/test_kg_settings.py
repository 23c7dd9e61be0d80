"""Every graph setting has one source: kg/settings.py DEFAULTS; the graph YAMLs hold what differs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

import hopbench.harness.config_resolvers  # noqa: F401  (registers graph/schema/settings, as every composer does)
from hopbench.core.errors import HopbenchError
from hopbench.core.paths import CONFIG_DIR
from hopbench.harness.compose import load_config
from hopbench.kg.settings import (
    DEFAULTS,
    _as_plain_dict,
    _check_choices,
    _merged_over_defaults,
    resolve_settings,
)

GRAPHS = sorted(
    p.stem for p in (Path(CONFIG_DIR) / "graph").glob("*.yaml") if "_global_" not in p.read_text()
)  # spacy_fast is a profile over spacy


def _differs(own: dict, defaults: dict, where: str) -> list[str]:
    same = []
    for key, value in own.items():
        if isinstance(value, dict) and isinstance(defaults.get(key), dict):
            same += _differs(value, defaults[key], f"{where}{key}.")
        elif key in defaults and value == defaults[key] and key != "extractor":
            same.append(where + key)
    return same


@pytest.mark.parametrize("graph", GRAPHS)
def test_a_graph_yaml_repeats_no_default(graph):
    own = yaml.safe_load((Path(CONFIG_DIR) / "graph" / f"{graph}.yaml").read_text())
    own.pop("defaults")
    assert _differs(own, DEFAULTS, "graph.") == []


@pytest.mark.parametrize("graph", GRAPHS)
def test_the_composed_graph_config_names_every_setting(graph):
    cfg = load_config([f"graph={graph}", "paths.data_dir=/data"])
    node = OmegaConf.to_container(cfg.graph, resolve=True)
    assert set(node) == set(DEFAULTS)  # so graph.synonym.threshold=0.9 needs no '+'
    assert resolve_settings(cfg.graph)["extractor"] == graph


# resolve_settings' steps (#58): each refuses its own kind of mistake


def test_the_node_becomes_a_plain_dict_without_its_name():
    node = OmegaConf.create(
        {"name": "spacy", "spacy": {"batch_size": 8, "n_process": "${.batch_size}"}}
    )
    assert _as_plain_dict(node) == {"spacy": {"batch_size": 8, "n_process": 8}}
    assert _as_plain_dict(None) == {}


def test_merging_keeps_the_other_defaults_and_refuses_unknown_or_flat_nested_keys():
    out = _merged_over_defaults({"synonym": {"threshold": 0.9}})
    assert out["synonym"] == {**DEFAULTS["synonym"], "threshold": 0.9}
    assert DEFAULTS["synonym"]["threshold"] == 0.8  # DEFAULTS itself untouched
    with pytest.raises(HopbenchError, match=r"graph\.synonym\.treshold is not a setting"):
        _merged_over_defaults({"synonym": {"treshold": 0.9}})
    with pytest.raises(HopbenchError, match=r"graph\.synonym must be a mapping"):
        _merged_over_defaults({"synonym": 0.9})


@pytest.mark.parametrize(
    "change, message",
    [
        ({"construction": "other"}, r"graph\.construction must be one of"),
        ({"openie": {"path": None}, "extractor": "openie"}, r"needs graph\.openie\.path"),
        ({"synonym": {"threshold": 0.0}}, r"graph\.synonym\.threshold must be in \(0, 1\]"),
        ({"description": {"source": "llm", "embedding": "composed"}}, r"composed ignores"),
    ],
)
def test_each_choice_check_names_the_setting(change, message):
    with pytest.raises(HopbenchError, match=message):
        _check_choices(_merged_over_defaults(change))
