"""`hopbench` console script: `hopbench [hydra overrides]` runs an experiment; subcommands inspect.

    hopbench dataset=hotpotqa retriever=dense        # a run (same as python -m hopbench.run)
    hopbench report                                   # collect runs into results/
    hopbench kg-stats dataset=musique                 # knowledge-graph statistics
    hopbench kg-export dataset=musique --out x.json   # its triples as a HippoRAG 2 OpenIE file
"""

from __future__ import annotations

import importlib
import sys

# subcommand -> "module:function"; each function takes argv (list[str]) and returns an exit code.
SUBCOMMANDS = {
    "report": ("hopbench.report.collect:cli", "collect complete runs into results/ (parquet, csv, markdown)"),
    "kg-stats": ("hopbench.kg.stats:cli", "statistics of the knowledge graph of a dataset"),
    "kg-export": ("hopbench.kg.openie_file:export_cli", "write a graph's extraction as a HippoRAG 2 OpenIE file"),
    "show": ("hopbench.report.show:cli", "print one question's trace from a run"),
    "graphdb-check": ("hopbench.graphdb.check:cli", "check the configured Neo4j server and APOC, list hopbench graphs"),
    "graphdb-drop": ("hopbench.graphdb.check:drop_cli", "remove hopbench graphs from the Neo4j server"),
}


def _usage() -> str:
    lines = ["usage: hopbench [run] [hydra overrides...]   run one configuration (or -m for a sweep)",
             "       hopbench SUBCOMMAND [args...]", "", "subcommands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "Run options: `hopbench --help` lists the config groups (dataset, retriever, ...)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        target, _ = SUBCOMMANDS[argv[0]]
        module, func = target.split(":")
        try:
            fn = getattr(importlib.import_module(module), func)
        except (ImportError, AttributeError):
            print(f"hopbench: '{argv[0]}' is not available in this version", file=sys.stderr)
            return 2
        return int(fn(argv[1:]) or 0)
    if argv and argv[0] in ("commands", "subcommands"):
        print(_usage())
        return 0
    if argv and argv[0] == "run":
        argv = argv[1:]
    from hopbench.run import main as run_main

    sys.argv = [sys.argv[0]] + argv
    run_main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
