"""The hand-written retriever tables name exactly the configs there are: every
configs/retriever/*.yaml is in the config-group table of docs/run.md, and every retriever either
table (docs/run.md's config groups, docs/retrievers.md's Graph retrievers) names has a config.
docs/retrievers.md's generated table: tests/harness/test_retriever_table.py."""

from __future__ import annotations

import re
from pathlib import Path

from hopbench.core.paths import CONFIG_DIR

DOCS = Path(CONFIG_DIR).parent / "docs"
RUN_PAGE = DOCS / "run.md"
RETRIEVERS_PAGE = DOCS / "retrievers.md"
CONFIGS = {p.stem for p in (Path(CONFIG_DIR) / "retriever").glob("*.yaml")}


def _group_row() -> str:
    return next(
        line for line in RUN_PAGE.read_text().splitlines() if line.startswith("| `retriever` |")
    )


def _graph_table_names() -> set[str]:
    text = RETRIEVERS_PAGE.read_text().split("## Graph retrievers", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    return {re.match(r"\| `([^`]+)`", row).group(1) for row in rows}


def test_every_retriever_config_is_in_the_config_group_table():
    named = set(re.findall(r"`([a-z0-9_]+)`", _group_row().split("|")[2]))
    missing = sorted(CONFIGS - named)
    assert not missing, f"docs/run.md's `retriever` row of the config-group table lacks {missing}"
    assert not named - CONFIGS, (
        f"docs/run.md names retrievers with no config: {sorted(named - CONFIGS)}"
    )


def test_graph_retrievers_table_names_only_configs():
    stale = sorted(_graph_table_names() - CONFIGS)
    assert not stale, (
        f"docs/retrievers.md's Graph retrievers table names retrievers with no config: {stale}"
    )
