"""Spreading activation on 2Wiki with different description vectors swapped into ONE graph.

    OMP_NUM_THREADS=1 nice python -m benchmarks.studies.description_embeddings \\
        [--questions 200] [--sentences SENT_EMB.npy] [variant,variant,...]

Loads the reference 2Wiki graph (graph=spacy, torch; built if missing), then for each variant
replaces `kg.description_embeddings`, re-prepares the retriever and scores the first N questions
(Recall@2/5, FCR@5). Variants compose the entity name vector, its first max_facts fact vectors
(sum or mean), the vector of the passage of its first mention (`pas`) and, with --sentences
(an (E, d) array of first-mention sentence vectors, row order = entities), that sentence
(`sent`). `text` is the stored description vectors (the reference). Why: to see which cheap
composition, if any, can stand in for encoding the description texts.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from benchmarks.speed.retrievers import compose_cfg
from hopbench.evaluate.score import aggregate, score_question
from hopbench.harness.compose import build_dataset, build_encoder, build_retriever
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("variants", nargs="?", default="")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--sentences", type=Path, default=None)
    ap.add_argument("--max-facts", type=int, default=4)
    args = ap.parse_args()
    cfg = compose_cfg(
        "2wikimultihopqa", "spreading_activation", [f"dataset.limit={args.questions}"]
    )
    ds, enc = build_dataset(cfg), build_encoder(cfg)
    kg = load_or_build(ds, cfg.graph, encoder=enc, cache_dir=cfg.paths.cache_dir)
    text = kg.description_embeddings.copy()
    n_ent, ctx = kg.n_entities, kg.context.tocsc()
    first = np.array([ctx.indices[ctx.indptr[e] : ctx.indptr[e + 1]].min() for e in range(n_ent)])
    facts: list[list[int]] = [[] for _ in range(n_ent)]
    for f, s in enumerate(kg.fact_subject):
        if len(facts[s]) < args.max_facts:
            facts[s].append(f)
    for f, o in enumerate(kg.fact_object):
        if len(facts[o]) < args.max_facts:
            facts[o].append(f)
    fsum = np.zeros_like(kg.entity_embeddings)
    nf = np.zeros(n_ent)
    for e, fs in enumerate(facts):
        if fs:
            fsum[e], nf[e] = kg.fact_embeddings[fs].sum(0), len(fs)
    name, pas = kg.entity_embeddings, kg.passage_embeddings[first]
    fmean = fsum / np.maximum(nf, 1)[:, None]
    variants = {
        "text": text,
        "name": name,
        "name+fsum+pas (composed)": unit(name + fsum + pas),
        "name+fsum": unit(name + fsum),
        "name+fmean": unit(name + fmean),
        "name+fmean+0.5pas": unit(name + fmean + 0.5 * pas),
        "name+fsum+0.5pas": unit(name + fsum + 0.5 * pas),
        "2name+fsum+pas": unit(2 * name + fsum + pas),
    }
    if args.sentences:
        sent = np.load(args.sentences)
        variants.update(
            {
                "name+fsum+sent": unit(name + fsum + sent),
                "name+fsum+sent+pas": unit(name + fsum + sent + pas),
                "name+fmean+sent": unit(name + fmean + sent),
                "name+sent": unit(name + sent),
            }
        )
    chosen = args.variants.split(",") if args.variants else list(variants)
    retriever = build_retriever(cfg)
    services = Services(dataset=ds, encoder=enc, llm=None, graphdb=None)
    for key in chosen:
        kg.description_embeddings = variants[key]
        retriever.prepare(kg, services)
        rows = [
            {
                "latency_ms": 0.0,
                "metrics": score_question(q, retriever.retrieve(q, 10).passage_ids, None),
            }
            for q in ds.questions
        ]
        m = aggregate(rows)
        print(
            f"{key:28s} recall@2 {m['recall@2']:.4f} recall@5 {m['recall@5']:.4f} fcr@5 {m['fcr@5']:.4f}  "
            f"mean cosine to text {float((variants[key] * text).sum(1).mean()):.3f}  "
            f"[load {'%.1f %.1f %.1f' % os.getloadavg()}]",
            flush=True,
        )


if __name__ == "__main__":
    main()
