"""Runs QAFD-RAG's own ``run_igraph_qafd`` (Tarzanagh/QAFD-RAG ``src/passage_entity/graph_adapter.py``)
on the inputs `compare.py` wrote; started by it inside a virtual environment with
igraph. Not part of hopbench: it imports no hopbench module.

    PYTHONPATH=<repository> <venv>/bin/python -m benchmarks.parity.qafd.worker OFFICIAL_SRC WORK_DIR

WORK_DIR holds `graph.npz` (node count, the igraph edges in HippoRAG 2's insertion order with
their weights, the passage vertices), `nodes.npy` (each vertex's float32 vector: entity name
or passage), `questions.npz` (per question the seed weights over all vertices, as HippoRAG 2's
reset gives them, and the float32 question vector) and `settings.json` (the settings of
hopbench's `flow_diffusion_code` config, weight scheme included, passed to the call as they
are). The authors' file is loaded as it is; nothing in it is replaced. Writes
`official.json` (per question the top passages, their scores and the time of the call) and
`official_x.npy` (x at every vertex per question).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

TOP = 20


def load_adapter(src: Path):
    path = src / "src" / "passage_entity" / "graph_adapter.py"
    spec = importlib.util.spec_from_file_location("qafd_graph_adapter", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    import igraph as ig

    src, work = Path(sys.argv[1]), Path(sys.argv[2])
    ga = load_adapter(src)
    settings = json.loads((work / "settings.json").read_text())
    z = np.load(work / "graph.npz")
    n = int(z["n"])
    g = ig.Graph(n=n, edges=list(zip(z["src"].tolist(), z["dst"].tolist())), directed=False)
    g.es["weight"] = z["weight"].tolist()
    names = [f"node-{i}" for i in range(n)]
    g.vs["name"] = names
    name_to_idx = {nm: i for i, nm in enumerate(names)}
    passages = z["passages"].tolist()
    nodes = np.load(work / "nodes.npy")
    node_emb = {nm: nodes[i] for i, nm in enumerate(names)}
    qz = np.load(work / "questions.npz")
    seed_idx, seed_val, seed_ptr, queries = qz["idx"], qz["val"], qz["ptr"], qz["queries"]

    kept: dict = {}
    run = ga.IGraphQAFD.run

    def keep_x(self, *a, **kw):  # the x the call ranks by (read only)
        out = run(self, *a, **kw)
        kept["x"] = np.array(out, dtype=np.float64)
        return out

    ga.IGraphQAFD.run = keep_x

    def seed_weights(i: int) -> np.ndarray:
        sw = np.zeros(n)
        sl = slice(seed_ptr[i], seed_ptr[i + 1])
        sw[seed_idx[sl]] = seed_val[sl]
        return sw

    def diffuse(i: int, sw: np.ndarray):
        """The authors' call for question i, with the settings compare.py read from the config."""
        return ga.run_igraph_qafd(
            graph=g,
            node_name_to_idx=name_to_idx,
            passage_node_idxs=passages,
            source_weights=sw,
            node_embeddings=node_emb,
            query_embedding=queries[i],
            alpha=settings["alpha"],
            epsilon=settings["epsilon"],
            max_iterations=settings["max_iterations"],
            step_size=settings["step_size"],
            weight_scheme=settings["weight_scheme"],
            use_node_degree=True,
            random_seed=settings["random_seed"],
        )

    rows, xs = [], []
    for i in range(len(queries)):
        sw = seed_weights(i)
        t = time.perf_counter()
        ids, scores = diffuse(i, sw)
        ms = 1000 * (time.perf_counter() - t)
        rows.append(
            {
                "top": [int(v) for v in ids[:TOP]],
                "scores": [float(s) for s in scores[:TOP]],
                "ms": ms,
            }
        )
        xs.append(kept["x"])
    order_check = None
    if settings.get(
        "order_check"
    ):  # the same questions again, last first: does a result depend on the ones before?
        same = 0
        for i in reversed(range(len(queries))):
            diffuse(i, seed_weights(i))
            same += bool(np.array_equal(kept["x"], xs[i]))
        order_check = {"questions": len(queries), "x_identical_in_reverse_order": same}
    np.save(work / "official_x.npy", np.stack(xs))
    from importlib import metadata

    versions = {p: metadata.version(p) for p in ("igraph", "numpy")}
    (work / "official.json").write_text(
        json.dumps({"questions": rows, "versions": versions, "order_check": order_check})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
