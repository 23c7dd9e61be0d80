"""Time the Neo4j export of a cached graph, stage by stage (issue #6: 2Wiki "well under a minute").

    scripts/with-neo4j.sh python benchmarks/bench_neo4j_export.py [--dataset 2wikimultihopqa] [--cache-dir DIR]

Loads (or builds) the spaCy graph of the dataset with the default settings, then replaces the
database's graph with it via `hopbench.graphdb.export.export_graph` and prints the seconds of
each stage (clearing the previous graph, entities, passages, relations, context edges, vector
indexes). The port comes from HOPBENCH_NEO4J_PORT (default 7687).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from omegaconf import OmegaConf

from hopbench.data import load_dataset
from hopbench.embed.encoder import Encoder
from hopbench.graphdb.connection import GraphDBSettings, connect
from hopbench.graphdb.export import export_graph
from hopbench.kg import load_or_build

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="2wikimultihopqa", help="a configs/dataset/<name>.yaml")
    ap.add_argument("--cache-dir", default=str(Path.home() / ".cache" / "hopbench"))
    args = ap.parse_args()
    dcfg = OmegaConf.load(REPO / "configs" / "dataset" / f"{args.dataset}.yaml")
    OmegaConf.update(dcfg, "paths", {"data_dir": str(DATA)}, force_add=True)
    q = str(dcfg.questions_path).replace("${paths.data_dir}", str(DATA))
    c = dcfg.corpus_path and str(dcfg.corpus_path).replace("${paths.data_dir}", str(DATA))
    ds = load_dataset(dcfg.name, dcfg.format, q, c, None)
    kg = load_or_build(ds, OmegaConf.load(REPO / "configs" / "graph" / "spacy.yaml"),
                       encoder=Encoder(cache_dir=args.cache_dir), llm=None, cache_dir=args.cache_dir)
    port = int(os.environ.get("HOPBENCH_NEO4J_PORT", "7687"))
    db = connect(GraphDBSettings(uri=f"bolt://127.0.0.1:{port}", query_timeout=None))
    try:
        import neo4j._rust  # noqa: F401
        rust = True
    except ImportError:
        rust = False
    r = export_graph(db, kg)
    print(f"{args.dataset}: {kg.n_entities} entities, {kg.n_passages} passages; export {r.seconds:.1f} s "
          f"(rust packstream: {rust}; load {os.getloadavg()[0]:.2f})")
    for stage, s in r.stages.items():
        print(f"  {stage:15s} {s:7.1f} s")


if __name__ == "__main__":
    main()
