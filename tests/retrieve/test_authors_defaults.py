"""Every default of each method's retriever configs against the authors' values (issue #55).

docs/methods/<method>.md holds a table "Defaults against the authors" (format:
tests/retrieve/authors_table.py): per config and setting, hopbench's default, the authors' value
with its commit and file:line, and a note wherever they differ. Here each config is composed
as a run would compose it and every setting is compared with its row, so a changed default, a
new setting or a removed row fails until the table says why. A variant config (one whose
defaults list names another retriever config) needs rows only for what it changes: the
parent's rows cover the rest.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml
from hydra.utils import get_class
from omegaconf import OmegaConf

from hopbench.core.paths import CONFIG_DIR
from hopbench.harness.compose import load_config
from tests.retrieve.authors_table import COLUMNS, HEADING, Row, TableError, read_table, same_value

DOCS = Path(__file__).resolve().parents[2] / "docs" / "methods"
RETRIEVER_CONFIGS = Path(CONFIG_DIR) / "retriever"
PLUMBING = {"name", "_target_", "llm_name"}  # not settings: registry name, class, ${llm.name}

# The configs each method's table must cover (its own and its named variants).
METHODS = {
    "hipporag": ["hipporag", "hipporag_hb", "hipporag1"],
    "qasa": [
        "spreading_activation",
        "spreading_activation_nogate",
        "spreading_activation_neo4j",
        "spreading_activation_neo4j_nogate",
    ],
    "qafd": [
        "flow_diffusion_code",
        "flow_diffusion",
        "flow_diffusion_bench",
        "flow_diffusion_official_prompts",
        "flow_diffusion_joint",
    ],
    "catrag": ["catrag", "catrag_code", "catrag_hb"],
    "neuropath": [
        "neuropath",
        "neuropath_official_prompts",
        "neuropath_one_shot",
        "neuropath_robust",
    ],
    "linearrag": [
        "linearrag",
        "linearrag_musique",
        "linearrag_2wiki",
        "linearrag_hotpotqa",
        "linearrag_cli",
    ],
}
CASES = [(m, c) for m, configs in METHODS.items() for c in configs]


def unlisted_defaults(node: dict) -> dict[str, object]:
    """The class's `unlisted` settings (kept out of the schema so old run hashes stand) with
    their constructor defaults: still settings, so a changed default must fail here too."""
    cls = get_class(node["_target_"])
    params = inspect.signature(cls.__init__).parameters
    return {
        name: params[name].default
        for name in getattr(cls, "unlisted", ())
        if name in params and name not in node
    }


def settings_of(config: str) -> dict[str, object]:
    """The composed retriever config's settings as dotted paths (nested nodes flattened), with
    the class's unlisted settings at their constructor defaults."""
    node = OmegaConf.to_container(load_config([f"retriever={config}"]).retriever, resolve=False)
    node = {**node, **unlisted_defaults(node)}
    out: dict[str, object] = {}

    def walk(prefix: str, value: object) -> None:
        if isinstance(value, dict):
            for key, sub in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), sub)
        elif prefix not in PLUMBING:
            out[prefix] = value

    walk("", node)
    return out


def lineage(config: str) -> list[str]:
    """The config, then the retriever configs it builds on (its defaults list), nearest first."""
    chain = [config]
    while True:
        raw = yaml.safe_load((RETRIEVER_CONFIGS / f"{chain[-1]}.yaml").read_text()) or {}
        parents = [
            d
            for d in raw.get("defaults", [])
            if isinstance(d, str) and d != "_self_" and not d.startswith("schema/")
        ]
        if not parents:
            return chain
        chain.append(parents[0])


def rows_for(config: str, rows: list[Row]) -> dict[str, Row]:
    """Setting -> the row that documents it for `config`: its own row, else the nearest parent's."""
    out: dict[str, Row] = {}
    for name in reversed(lineage(config)):
        out.update({r.setting: r for r in rows if name in r.configs})
    return out


@pytest.mark.parametrize(("method", "config"), CASES, ids=[f"{m}-{c}" for m, c in CASES])
def test_defaults_against_the_authors(method, config):
    rows = read_table(DOCS / f"{method}.md")
    documented = rows_for(config, rows)
    settings = settings_of(config)
    problems = [
        f"{config}: {path} = {value!r} has no row in docs/methods/{method}.md"
        for path, value in settings.items()
        if path not in documented
    ]
    problems += [
        f"{config}: {path} = {value!r}, but {documented[path].where} says "
        f"{documented[path].hopbench!r}"
        for path, value in settings.items()
        if path in documented and not same_value(value, documented[path].hopbench)
    ]
    problems += [
        f"{r.where}: {config} has no setting {r.setting}"
        for r in rows
        if config in r.configs and r.setting not in settings
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_table_names_only_known_configs(method):
    """A row for a config this test does not compose would never be checked."""
    rows = read_table(DOCS / f"{method}.md")
    stray = [r.where for r in rows if not set(r.configs) <= set(METHODS[method])]
    assert not stray, f"rows for configs outside {METHODS[method]}: {stray}"


HEADER = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"


def _table(tmp_path, *rows: str) -> Path:
    doc = tmp_path / "m.md"
    doc.write_text(f"# m\n\n## {HEADING}\n\n{HEADER}" + "".join(r + "\n" for r in rows))
    return doc


def test_a_difference_without_a_note_is_refused(tmp_path):
    sha = "a" * 40
    doc = _table(tmp_path, f"| x | `damping` | 0.5 | 0.85 | {sha} | a.py:3 |  |")
    with pytest.raises(TableError, match=r"m\.md:7: column note"):
        read_table(doc)
    ok = _table(tmp_path, f"| x | `damping` | 0.5 | 0.85 | {sha} | a.py:3 | the paper's value |")
    assert read_table(ok)[0].differs


def test_the_authors_value_needs_its_commit_and_line(tmp_path):
    doc = _table(tmp_path, "| x | `damping` | 0.5 | 0.5 | 17e5372 | a.py:3 |  |")
    with pytest.raises(TableError, match="column commit"):
        read_table(doc)
    doc = _table(tmp_path, f"| x | `damping` | 0.5 | 0.5 | {'b' * 40} | a.py |  |")
    with pytest.raises(TableError, match="column file:line"):
        read_table(doc)


def test_values_compare_as_typed(tmp_path):
    doc = _table(tmp_path, "| x | `tol` | 1e-10 | — | — | — | hopbench's stopping rule |")
    (row,) = read_table(doc)
    assert row.hopbench == 1e-10 and not row.has_authors and row.differs
    assert same_value(1e-10, 1.0e-10) and not same_value(True, 1) and not same_value(5, 5.5)
