"""The import layering, one folder per tier: the entry points import the library, never the reverse.

    entry points   hopbench.run (Hydra), hopbench.cli (console script), hopbench.commands.* (the
                   subcommands' command-line side)
    assembly       hopbench.harness.*: runner (execute), compose (config -> objects), question_loop,
                   run_store, run_config, method_info, run_migration, paper, config_resolvers
    library        data, embed, llm, kg, graphdb, retrieve, read, evaluate, report, in the
                   order of LIBRARY_ORDER below (a package imports only those of lower levels)
    foundation     hopbench.core.*: paths, records, fallback_field, errors, atomic, locks, ...

Read from the source with `ast` (nothing is imported), so a lazy import inside a function
counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "hopbench"
ENTRY_POINTS = {"hopbench.run", "hopbench.cli"}
COMMANDS = "hopbench.commands"  # the subcommands, imported only by hopbench.cli
ASSEMBLY = {"hopbench.harness"}
FOUNDATION = {"hopbench.core"}
LIBRARY = ("data", "embed", "llm", "kg", "graphdb", "retrieve", "read", "evaluate", "report")
# The library's order, lowest first: a package imports only packages of a lower level, never one
# of its own level or above (so the services below never know a method, and a method's rule is
# handed down to them as an argument). Only top-level packages count: retrieve/'s subfolders
# are all "retrieve".
LIBRARY_ORDER = (
    ("data",),  # benchmark files -> questions and passages
    ("evaluate", "embed", "llm", "graphdb"),  # scoring; encoders, LLM clients, the Neo4j store
    ("kg", "read", "report"),  # graphs from a corpus; readers; the report of what runs wrote
    ("retrieve",),  # the methods: graphs, encoders, LLMs and stores put together
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports (`import a.b`, `from a.b import c` gives a.b and a.b.c)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


MODULES = {_module_name(p): _imports(p) for p in sorted(SRC.rglob("*.py"))}


def _hits(imported: set[str], targets: set[str]) -> set[str]:
    return {m for m in imported for t in targets if m == t or m.startswith(t + ".")}


def test_the_walk_sees_the_package():
    assert {"hopbench.run", "hopbench.cli", "hopbench.harness.runner", "hopbench.kg.stats"} <= set(
        MODULES
    )
    assert "hopbench.harness.runner" in MODULES["hopbench.run"]


@pytest.mark.parametrize("module", sorted(set(MODULES) - ENTRY_POINTS))
def test_no_module_imports_an_entry_point(module):
    assert not _hits(MODULES[module], ENTRY_POINTS), f"{module} imports an entry point"


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if m.split(".")[1:2] and m.split(".")[1] in LIBRARY)
)
def test_the_library_does_not_import_the_assembly(module):
    assert not _hits(MODULES[module], ASSEMBLY), f"{module} imports the run assembly"


def _level(package: str) -> int:
    return next(i for i, level in enumerate(LIBRARY_ORDER) if package in level)


def test_the_order_names_every_library_package_once():
    named = [p for level in LIBRARY_ORDER for p in level]
    assert sorted(named) == sorted(LIBRARY)


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if m.split(".")[1:2] and m.split(".")[1] in LIBRARY)
)
def test_the_library_imports_only_lower_levels(module):
    """A wrong-way import (a service importing a method, a peer importing a peer) fails here."""
    own = module.split(".")[1]
    wrong = sorted(
        m
        for m in MODULES[module]
        if m.startswith("hopbench.")
        and m.split(".")[1:2]
        and m.split(".")[1] in LIBRARY
        and m.split(".")[1] != own
        and _level(m.split(".")[1]) >= _level(own)
    )
    assert not wrong, f"{module} ({own}, level {_level(own)}) imports {wrong}"


def _module_edges(path: Path) -> set[str]:
    """The package's modules a file imports; `from pkg import sub` is an edge to `pkg.sub` only
    (importing a submodule runs the package's __init__, which is not a dependency on its names)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.add(full if full in MODULES else node.module)
    return out & set(MODULES)


def test_no_import_circle():
    """No module reaches itself through imports, lazy ones included (a circle forces an import
    inside a function and hides which module owns what)."""
    import networkx as nx

    graph = nx.DiGraph()
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        graph.add_node(module)
        graph.add_edges_from((module, m) for m in _module_edges(path) if m != module)
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("hopbench.report")))
def test_the_report_reads_what_runs_wrote_not_the_methods(module):
    """The report knows a method only through its runs' records (metrics.json's `graph` and
    `method`): it imports neither the retrievers nor the graph builder."""
    assert not _hits(MODULES[module], {"hopbench.retrieve", "hopbench.kg"}), (
        f"{module} imports a method"
    )


def test_every_module_is_in_its_tier_folder():
    """Only the entry points live at the top; everything else sits in a tier's folder."""
    tiers = {"commands", "harness", "core", *LIBRARY}
    loose = sorted(f"hopbench.{f.stem}" for f in SRC.glob("*.py") if f.stem != "__init__")
    loose = [m for m in loose if m not in ENTRY_POINTS]
    assert not loose, f"modules outside a tier folder: {loose}"
    assert {m.split(".")[1] for m in MODULES if m.count(".") >= 2} <= tiers


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("hopbench.core.")))
def test_the_foundation_imports_no_other_tier(module):
    others = {"hopbench.harness", *ENTRY_POINTS, *(f"hopbench.{p}" for p in LIBRARY)}
    assert not _hits(MODULES[module], others), f"{module} imports above the foundation"


@pytest.mark.parametrize("module", sorted(set(MODULES) - ENTRY_POINTS))
def test_only_the_console_script_imports_the_subcommands(module):
    """Commands parse arguments and print; nothing below the entry points depends on them."""
    if module.startswith(COMMANDS):
        return
    assert not _hits(MODULES[module], {COMMANDS}), f"{module} imports a subcommand's command line"
