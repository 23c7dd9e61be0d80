"""What checking a graph's checksums costs at load (issue #28, item 5).

    python -m benchmarks.speed.cache_checksums [--graph FOLDER] [--repeats 5]

The graph (default: the largest cached graph under ~/.cache/hopbench/kg/graphs) is copied to a
temporary folder and written again by `save_graph`, so it carries checksums; then, with the
files in the page cache, `load_graph` (verify + parse) and `checksum.verify` alone are timed
(median of --repeats). The ratio is load with checks / load without (= load - verify).
Also the embedding cache: `checksum.load_npy` against a plain `np.load` of the same array.
Results: benchmarks/speed/results/cache_checksums.{json,md}.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common.paths import results_dir
from hopbench.core import checksum
from hopbench.kg.store import load_graph, save_graph


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    root = Path.home() / ".cache" / "hopbench" / "kg" / "graphs"
    graph = (
        Path(args.graph)
        if args.graph
        else max(root.iterdir(), key=lambda p: sum(f.stat().st_size for f in p.iterdir()))
    )
    manifest = json.loads((graph / "manifest.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        folder = save_graph(load_graph_readonly(graph), Path(tmp) / "g")
        size = sum(f.stat().st_size for f in folder.iterdir())
        sums = json.loads((folder / "manifest.json").read_text())["checksums"]
        load_graph(folder)  # warm the page cache
        t_load = _median(lambda: load_graph(folder), args.repeats)
        t_verify = _median(lambda: checksum.verify(folder, sums), args.repeats)
        kg = load_graph(folder)
        arr = kg.passage_embeddings if kg.passage_embeddings.size else kg.entity_embeddings
        npy = Path(tmp) / "e.npy"
        checksum.save_npy(npy, arr)
        plain = Path(tmp) / "plain.npy"
        with open(plain, "wb") as fh:
            np.save(fh, arr)
        t_npy_checked = _median(lambda: checksum.load_npy(npy), args.repeats)
        t_npy_plain = _median(lambda: np.load(plain), args.repeats)
        t_npy_bytes = _median(lambda: np.load(io.BytesIO(plain.read_bytes())), args.repeats)
    out = {
        "graph": str(graph),
        "dataset": manifest.get("dataset"),
        "graph_bytes": size,
        "load_with_checks_s": t_load,
        "verify_s": t_verify,
        "ratio_with_over_without": t_load / (t_load - t_verify),
        "npy_bytes": int(arr.nbytes),
        "npy_checked_s": t_npy_checked,
        "npy_plain_s": t_npy_plain,
        "npy_ratio": t_npy_checked / t_npy_plain,
        "npy_plain_from_bytes_s": t_npy_bytes,
        "repeats": args.repeats,
        "load_average": os.getloadavg(),
    }
    res = results_dir(__file__)
    (res / "cache_checksums.json").write_text(json.dumps(out, indent=2) + "\n")
    (res / "cache_checksums.md").write_text(
        "# Cost of cache checksums at load (issue #28 item 5)\n\n"
        f"`python -m benchmarks.speed.cache_checksums --repeats {args.repeats}`; {checksum.ALGORITHM} "
        f"digests. Machine shared with other helpers' jobs, load average {out['load_average']}.\n\n"
        f"| what | bytes | with checks (s) | checks alone / plain (s) | ratio |\n|---|---|---|---|---|\n"
        f"| graph load ({out['dataset']}, {graph.name}) | {size} | {t_load:.3f} | {t_verify:.3f} | "
        f"{out['ratio_with_over_without']:.2f} |\n"
        f"| embedding .npy | {out['npy_bytes']} | {t_npy_checked:.4f} | {t_npy_plain:.4f} (np.load) | "
        f"{out['npy_ratio']:.2f} |\n"
    )
    print(json.dumps(out, indent=2))


def load_graph_readonly(folder: Path):
    """Load a cached graph without adding checksums to its manifest (a shared cache)."""
    import hopbench.kg.store as store

    saved = store._add_checksums
    store._add_checksums = lambda *a: None
    try:
        return load_graph(folder)
    finally:
        store._add_checksums = saved


if __name__ == "__main__":
    main()
