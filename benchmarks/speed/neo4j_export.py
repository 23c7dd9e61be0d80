"""Time the Neo4j export of a cached graph, stage by stage (issue #6: 2Wiki "well under a minute").

    scripts/with-neo4j.sh python -m benchmarks.speed.neo4j_export [--dataset 2wikimultihopqa]
        [--reference ../main/src/hopbench/graphdb/export.py] [--rounds 1] [--out results.json]

Loads (or builds) the spaCy graph of the dataset with the default settings, puts it in the
database once (untimed, so there is always a previous graph to replace), then for each round
and each implementation times

* ``replace``: `export_graph` over the previous graph (the clear included), per stage;
* ``clear``: `clear_graph` alone, then ``into_empty``: `export_graph` into the emptied database.

`--reference` names another checkout's ``export.py`` (e.g. main's, before a change): it is
loaded under another module name and timed in the same run, alternating with this tree's, so
both see the same machine load. An ``export.py`` from before per-graph namespaces (no
``namespace_of``) writes plain ``:Entity``/``:Passage`` beside this tree's namespaced copy;
each implementation's contents are counted in its own labels. The port comes from
HOPBENCH_NEO4J_PORT (default 7687).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

from omegaconf import OmegaConf

from benchmarks.common.paths import REPO
from hopbench.core.atomic import write_json
from hopbench.data import load_dataset
from hopbench.embed.encoder import Encoder
from hopbench.graphdb import export as current
from hopbench.graphdb.connection import GraphDBSettings, connect
from hopbench.kg import load_or_build
from hopbench.retrieve.qasa.activation_rules import relation_matrix

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


PAIR_COUNTS = partial(relation_matrix, edges="pairs")  # QASA's rule, as its retriever passes it


class WithPairCounts:
    """An export module whose `ensure_exported`/`export_graph` get QASA's pair rule when they
    take one (today's export is given the rule; a reference tree's may compute it itself)."""

    def __init__(self, module) -> None:
        self.module = module

    def __getattr__(self, name: str):
        attr = getattr(self.module, name)
        if name in ("ensure_exported", "export_graph") and (
            "pair_counts" in inspect.signature(attr).parameters
        ):
            return partial(attr, pair_counts=PAIR_COUNTS)
        return attr


def load_reference(path: str, k: int):
    spec = importlib.util.spec_from_file_location(f"hopbench_export_reference_{k}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def load_graph_of(dataset: str, cache_dir: str):
    dcfg = OmegaConf.load(REPO / "configs" / "dataset" / f"{dataset}.yaml")
    OmegaConf.update(dcfg, "paths", {"data_dir": str(DATA)}, force_add=True)
    q = str(dcfg.questions_path).replace("${paths.data_dir}", str(DATA))
    c = dcfg.corpus_path and str(dcfg.corpus_path).replace("${paths.data_dir}", str(DATA))
    ds = load_dataset(dcfg.name, dcfg.format, q, c, None)
    return load_or_build(
        ds,
        OmegaConf.load(REPO / "configs" / "graph" / "spacy.yaml"),
        encoder=Encoder(cache_dir=cache_dir),
        llm=None,
        cache_dir=cache_dir,
    )


def where(impl, kg) -> tuple[str, str, list[str]]:
    """The entity label, passage label and vector index names `impl` exports `kg` under:
    the graph's namespace (this tree), or the unprefixed schema of export.py before namespaces."""
    if hasattr(impl, "namespace_of"):
        ns = impl.namespace_of(kg)
        return ns.entity, ns.passage, [ns.entity_index, ns.passage_index]
    return "Entity", "Passage", [impl.ENTITY_INDEX, impl.PASSAGE_INDEX]


def clear(impl, db, kg) -> None:
    if hasattr(impl, "namespace_of"):
        impl.clear_graph(db, impl.namespace_of(kg))
    else:
        impl.clear_graph(db)


def contents(db, impl, kg) -> dict:
    """Counts that must not depend on the implementation."""
    q = db.query
    entity, passage, indexes = where(impl, kg)
    return {
        "entities": q(f"MATCH (e:{entity}) RETURN count(e) AS n")[0]["n"],
        "passages": q(f"MATCH (p:{passage}) RETURN count(p) AS n")[0]["n"],
        "relates_to": q(f"MATCH (:{entity})-[r:RELATES_TO]->() RETURN count(r) AS n")[0]["n"],
        "mentions": q(f"MATCH (:{passage})-[r:MENTIONS]->() RETURN count(r) AS n")[0]["n"],
        "vector_indexes_online": q(
            "SHOW VECTOR INDEXES YIELD name, state WHERE state = 'ONLINE' "
            "AND name IN $names RETURN count(*) AS n",
            {"names": indexes},
        )[0]["n"],
    }


def show(label: str, seconds: float, stages: dict, load: float) -> None:
    print(f"  {label:22s} total {seconds:6.1f} s   (load {load:.2f})")
    print("    " + "  ".join(f"{k} {v:.1f}" for k, v in stages.items()))


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="2wikimultihopqa", help="a configs/dataset/<name>.yaml")
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "hopbench"))
    ap.add_argument(
        "--reference",
        action="append",
        default=[],
        help="export.py of another checkout, timed in the same run (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", help="write the figures as JSON here")
    return ap


def main() -> None:
    ap = parser()
    args = ap.parse_args()

    kg = load_graph_of(args.dataset, args.cache_dir)
    port = int(os.environ.get("HOPBENCH_NEO4J_PORT", "7687"))
    db = connect(GraphDBSettings(uri=f"bolt://127.0.0.1:{port}", query_timeout=None))
    try:
        import neo4j._rust  # noqa: F401

        rust = True
    except ImportError:
        rust = False
    impls = [("this tree", WithPairCounts(current))]
    for k, path in enumerate(args.reference):
        impls.insert(k, (f"reference {path}", WithPairCounts(load_reference(path, k))))
    print(
        f"{args.dataset}: {kg.n_entities} entities, {kg.n_passages} passages; rust packstream: {rust}; "
        f"{os.cpu_count()} cpus; {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}"
    )
    for _, impl in impls:  # a previous graph for the first "replace" of each implementation
        impl.ensure_exported(db, kg)

    runs = []
    for rnd in range(args.rounds):
        for name, impl in impls:
            print(f"round {rnd + 1}, {name}:")
            load = os.getloadavg()[0]
            r = impl.export_graph(db, kg)
            show("replace (with clear)", r.seconds, r.stages, load)
            runs.append(
                {
                    "round": rnd + 1,
                    "impl": name,
                    "case": "replace",
                    "seconds": round(r.seconds, 3),
                    "stages": r.stages,
                    "load1": load,
                    "contents": contents(db, impl, kg),
                }
            )
            load = os.getloadavg()[0]
            t = time.perf_counter()
            clear(impl, db, kg)
            clear_s = time.perf_counter() - t
            r = impl.export_graph(db, kg)
            print(f"  {'clear alone':22s} total {clear_s:6.1f} s")
            show("into empty database", r.seconds, r.stages, load)
            runs.append(
                {
                    "round": rnd + 1,
                    "impl": name,
                    "case": "into_empty",
                    "seconds": round(r.seconds, 3),
                    "clear_alone": round(clear_s, 3),
                    "stages": r.stages,
                    "load1": load,
                    "contents": contents(db, impl, kg),
                }
            )
    distinct = {str(run["contents"]) for run in runs}
    print(
        f"database contents identical across all runs: {len(distinct) == 1} {runs[-1]['contents']}"
    )
    for name, _ in impls:
        for case in ("replace", "into_empty"):
            secs = sorted(
                run["seconds"] for run in runs if run["impl"] == name and run["case"] == case
            )
            print(
                f"{name:55s} {case:11s} min {secs[0]:6.1f} s  max {secs[-1]:6.1f} s  ({len(secs)} runs)"
            )
    if args.out:
        write_json(
            args.out,
            {
                "dataset": args.dataset,
                "entities": kg.n_entities,
                "passages": kg.n_passages,
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "rust_packstream": rust,
                "runs": runs,
            },
        )


if __name__ == "__main__":
    main()
