"""`hopbench` console script: `hopbench [hydra overrides]` runs an experiment; subcommands inspect.

    hopbench dataset=hotpotqa retriever=dense        # a run (same as python -m hopbench.run)
    hopbench report                                   # collect runs into results/
    hopbench kg-stats dataset=musique                 # knowledge-graph statistics
    hopbench kg-export dataset=musique --out x.json   # its triples as a HippoRAG 2 OpenIE file
    hopbench replies export --out r.jsonl.gz          # the LLM replies runs used (and `import`)
    hopbench paper --plan-only                        # the whole comparison grid and its plan
    hopbench export out/set && hopbench import out/set  # runs as a `datasets` dataset, and back

An entry point, like `hopbench.run`: the subcommands that compose a run config (kg-stats,
kg-export, graphdb-check, graphdb-drop) are here, over `hopbench.harness.compose` and the library;
`report`, `show` and `replies` are in hopbench/commands/ (the same tier), `paper` and `migrate` in
the harness. No module below the entry points imports this one.
"""

from __future__ import annotations

import json
import sys

from hopbench.core.private import private_umask


# Each subcommand: a function that imports its module when called (so `hopbench report` never
# loads torch) and runs its `main(argv)`; written out, not as strings, so the imports are
# visible to tests/test_layering.py like any other.
def _report(argv: list[str]) -> int:
    from hopbench.commands import report

    return report.main(argv)


def _show(argv: list[str]) -> int:
    from hopbench.commands import show

    return show.main(argv)


def _replies(argv: list[str]) -> int:
    from hopbench.commands import replies

    return replies.main(argv)


def _export(argv: list[str]) -> int:
    from hopbench.commands import run_sets

    return run_sets.export_main(argv)


def _import(argv: list[str]) -> int:
    from hopbench.commands import run_sets

    return run_sets.import_main(argv)


def _claims(argv: list[str]) -> int:
    from hopbench.commands import claims

    return claims.main(argv)


def _paper(argv: list[str]) -> int:
    from hopbench.harness.paper.command import cli

    return cli(argv)


def _migrate(argv: list[str]) -> int:
    from hopbench.harness import run_migration

    return run_migration.cli(argv)


SUBCOMMANDS = {
    "report": (_report, "collect complete runs into results/ (parquet, csv, markdown)"),
    "kg-stats": (lambda argv: kg_stats(argv), "statistics of the knowledge graph of a dataset"),
    "kg-export": (
        lambda argv: kg_export(argv),
        "write a graph's extraction as a HippoRAG 2 OpenIE file",
    ),
    "paper": (
        _paper,
        "the whole comparison grid: print its plan, run it within an LLM budget, "
        "then the report (--plan-only, --help)",
    ),
    "show": (_show, "print one question's trace from a run"),
    "replies": (
        _replies,
        "export the LLM replies runs used to a file, or import one into the response cache",
    ),
    "export": (_export, "write runs as a Hugging Face `datasets` dataset (parquet + card)"),
    "import": (_import, "write the runs of an exported set into a runs folder"),
    "claims": (_claims, "test each method's headline claim on the reference rows (claims.md)"),
    "migrate": (_migrate, "upgrade run folders and result tables written by older versions"),
    "graphdb-check": (
        lambda argv: graphdb_check(argv),
        "check the configured Neo4j server and APOC, list hopbench graphs",
    ),
    "graphdb-drop": (
        lambda argv: graphdb_drop(argv),
        "remove hopbench graphs from the Neo4j server",
    ),
}


def _usage() -> str:
    lines = [
        "usage: hopbench [run] [hydra overrides...]   run one configuration (or -m for a sweep)",
        "       hopbench SUBCOMMAND [args...]",
        "",
        "subcommands:",
    ]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += [
        "",
        "Run options: `hopbench --help` lists the config groups (dataset, retriever, ...).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    private_umask()  # what any subcommand writes is the user's only (hopbench.core.private)
    if argv and argv[0] in SUBCOMMANDS:
        command, _ = SUBCOMMANDS[argv[0]]
        return int(command(argv[1:]) or 0)
    if argv and argv[0] in ("commands", "subcommands"):
        print(_usage())
        return 0
    if argv and argv[0] == "run":
        argv = argv[1:]
    from hopbench.run import entry as run_main

    sys.argv = [sys.argv[0]] + argv
    run_main()
    return 0


def _config_errors() -> tuple[type[Exception], ...]:
    """What a bad override or setting raises while a config is composed and its objects built."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from hopbench.core.errors import HopbenchError

    return HopbenchError, HydraException, OmegaConfBaseException


# ---- kg-stats, kg-export -------------------------------------------------------------------
def kg_stats(argv: list[str]) -> int:
    """Compose the run config from Hydra overrides, load or build the graph, print its statistics."""
    from hopbench.harness.compose import (
        build_dataset,
        build_encoder,
        build_graph,
        build_llm,
        load_config,
    )
    from hopbench.kg import stats

    as_json = "--json" in argv
    overrides = [a for a in argv if a != "--json"]
    if any(a in ("-h", "--help") for a in overrides):
        print(stats.__doc__)
        return 0
    try:
        cfg = load_config(overrides)
        dataset = build_dataset(cfg)
        llm = (
            build_llm(cfg)
            if cfg.graph.get("extractor") == "llm"
            or cfg.graph.get("description", {}).get("source") == "llm"
            else None
        )
        kg = build_graph(cfg, dataset, build_encoder(cfg), llm)
    except _config_errors() as exc:
        print(f"hopbench kg-stats: error: {exc}", file=sys.stderr)
        return 2
    s = stats.graph_stats(kg)
    s["dataset"] = dataset.name
    s["graph_key"] = kg.manifest.get("graph_key")
    print(
        json.dumps(s, indent=2)
        if as_json
        else f"{dataset.name} graph {s['graph_key']}\n" + stats.format_stats(s)
    )
    return 0


KG_EXPORT_USAGE = """`hopbench kg-export [overrides] --out FILE`: a graph's extraction as a HippoRAG 2 OpenIE file.

    hopbench kg-export dataset=musique graph=spacy --out musique_spacy_openie.json
    hopbench kg-export dataset=musique graph=llm llm=local --out musique_qwen_openie.json

Writes {"docs": [{"idx": "chunk-<md5>", "passage", "extracted_entities", "extracted_triples"}],
"avg_ent_chars", "avg_ent_words"}, one record per corpus passage (passage = title + "\\n" + text),
from the cached extraction (extracting what is not cached yet). HippoRAG 2 loads it as its
openie_results_ner_*.json; hopbench loads it with graph=openie graph.openie.path=FILE.
The format has no failure status: passages whose extraction failed are written with no
entities or triples (counted on stderr).
"""


def kg_export(argv: list[str]) -> int:
    from hopbench.core.atomic import atomic_path
    from hopbench.harness.compose import build_dataset, build_llm, load_config
    from hopbench.kg.extraction_run import extract_corpus, make_extractor
    from hopbench.kg.openie_file import openie_document
    from hopbench.kg.settings import resolve_settings

    if any(a in ("-h", "--help") for a in argv):
        print(KG_EXPORT_USAGE)
        return 0
    out, overrides, it = None, [], iter(argv)
    for a in it:
        if a == "--out":
            out = next(it, None)
        elif a.startswith("--out="):
            out = a.split("=", 1)[1]
        else:
            overrides.append(a)
    if not out:
        print(
            "hopbench kg-export: error: --out FILE is required\n\n" + KG_EXPORT_USAGE,
            file=sys.stderr,
        )
        return 2
    try:
        cfg = load_config(overrides)
        dataset = build_dataset(cfg)
        settings = resolve_settings(cfg.graph)
        llm = build_llm(cfg) if settings["extractor"] == "llm" else None
        extractor = make_extractor(settings, llm)
        corpus = list(dataset.corpus)
        if hasattr(extractor, "check_corpus"):
            extractor.check_corpus(corpus)
        records = extract_corpus(corpus, extractor, cfg.paths.cache_dir)
    except _config_errors() as exc:
        print(f"hopbench kg-export: error: {exc}", file=sys.stderr)
        return 2
    doc = openie_document(corpus, records)
    with atomic_path(out, suffix=".json") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
    failed = sum(records[p.id].status != "ok" for p in corpus)
    n_triples = sum(len(d["extracted_triples"]) for d in doc["docs"])
    n_ents = sum(len(d["extracted_entities"]) for d in doc["docs"])
    print(
        f"wrote {out}: {len(doc['docs'])} passages of {dataset.name}, {n_triples} triples, "
        f"{n_ents} entities (extractor {settings['extractor']})"
    )
    if failed:
        print(
            f"hopbench kg-export: {failed} passages whose extraction failed are written with no "
            "entities or triples (the format has no failure status)",
            file=sys.stderr,
        )
    return 0


# ---- graphdb-check, graphdb-drop -----------------------------------------------------------
def _graphdb_settings(overrides: list[str]):
    from omegaconf import OmegaConf

    from hopbench.graphdb.connection import GraphDBSettings
    from hopbench.harness.compose import load_config

    cfg = load_config(overrides)
    return GraphDBSettings.from_config(OmegaConf.to_container(cfg.graphdb, resolve=True))


def graphdb_check(argv: list[str]) -> int:
    """`hopbench graphdb-check [graphdb overrides]` (see `hopbench.graphdb.check`)."""
    from hopbench.core.errors import HopbenchError
    from hopbench.graphdb.check import describe, describe_graphs
    from hopbench.graphdb.connection import connect

    settings = _graphdb_settings(argv)
    try:
        print(describe(settings))
        with connect(settings) as db:
            print("\n".join(describe_graphs(db)))
    except HopbenchError as exc:
        print(f"hopbench: error: {exc}", file=sys.stderr)
        return 2
    return 0


def graphdb_drop(argv: list[str]) -> int:
    """`hopbench graphdb-drop NAMESPACE... | --all | --legacy [graphdb overrides]`."""
    from hopbench.core.errors import HopbenchError
    from hopbench.graphdb.connection import connect
    from hopbench.graphdb.inventory import drop_graph, list_graphs
    from hopbench.graphdb.legacy import drop_legacy_graph
    from hopbench.graphdb.namespace import Namespace

    overrides = [a for a in argv if "=" in a]
    words = [a for a in argv if "=" not in a]
    flags = {w for w in words if w.startswith("--")}
    names = [w for w in words if not w.startswith("--")]
    if flags - {"--all", "--legacy"} or not (names or flags):
        print(
            "usage: hopbench graphdb-drop NAMESPACE... | --all | --legacy [graphdb.uri=...]\n"
            "(`hopbench graphdb-check` lists the namespaces)",
            file=sys.stderr,
        )
        return 2
    try:
        namespaces = [Namespace(n) for n in names]
        with connect(_graphdb_settings(overrides)) as db:
            if "--all" in flags:
                namespaces += [Namespace(g["namespace"]) for g in list_graphs(db)["graphs"]]
            missing = 0
            for ns in dict.fromkeys(namespaces):
                if drop_graph(db, ns):
                    print(f"dropped hopbench graph {ns.id}")
                else:
                    print(f"hopbench: no graph {ns.id} in this database", file=sys.stderr)
                    missing += 1
            if "--legacy" in flags:
                n = drop_legacy_graph(db)
                print(
                    f"dropped the legacy hopbench graph: {n['entities']:,} entities, "
                    f"{n['passages']:,} passages"
                )
    except HopbenchError as exc:
        print(f"hopbench: error: {exc}", file=sys.stderr)
        return 2
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
