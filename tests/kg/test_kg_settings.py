"""Every graph setting has one source: kg/settings.py DEFAULTS; the graph YAMLs hold what differs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

import hopbench.harness.config_resolvers  # noqa: F401  (registers graph/schema/settings, as every composer does)
from hopbench.core.paths import CONFIG_DIR
from hopbench.harness.compose import load_config
from hopbench.kg.settings import DEFAULTS, resolve_settings

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
