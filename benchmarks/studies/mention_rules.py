"""Question-mention rules compared on real questions: retrieval quality per method.

    OMP_NUM_THREADS=1 python -m benchmarks.studies.mention_rules \
        [--datasets musique hotpotqa 2wikimultihopqa] [--questions 200]

`phrases` = every spaCy named entity and noun chunk (`question.question_phrases`, the
rule before 2026-11-30); `mentions` = the entity reading (`question_mentions`: non-numeric
entities and noun chunks with a proper noun or number, stripped like the KG's entities).
Each method runs unchanged except for which function gives its mentions, on the first N
questions whose gold passages are in the corpus. Quality only; latency is in bench_retrievers.
Results: benchmarks/studies/results/mention_rules.{json,md}.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import hopbench.retrieve.hipporag.hipporag as hipporag_module
import hopbench.retrieve.qafd.flow_diffusion as flow_module
from benchmarks.common.paths import REPO
from benchmarks.speed.retrievers import compose_cfg, load_avg
from hopbench.core.atomic import write_json, write_text
from hopbench.evaluate.score import score_question
from hopbench.harness.compose import build_dataset, build_encoder, build_retriever
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services
from hopbench.retrieve.question import question_mentions, question_phrases  # noqa

RULES = {"phrases": question_phrases, "mentions": question_mentions}
METHODS = ["spreading_activation", "spreading_activation_nogate", "hipporag1", "flow_diffusion"]
METRICS = ("recall@2", "recall@5", "fcr@5")


def run_method(r, name: str, rule, qs) -> list[dict]:
    if name.startswith("spreading"):
        out = []
        for q in qs:
            mentions = rule(q.text)
            r.vectors.warm([m for m in mentions if r.kg.entity_index(m) is None])
            out.append(r.retrieve_with_mentions(q, mentions, 10))
        return out
    # the graph methods read their mentions from a module-level name: swap it for this rule
    saved = hipporag_module.question_mentions, flow_module.question_phrases
    hipporag_module.question_mentions = flow_module.question_phrases = rule
    try:
        return [r.retrieve(q, 10) for q in qs]
    finally:
        hipporag_module.question_mentions, flow_module.question_phrases = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["musique", "hotpotqa", "2wikimultihopqa"])
    ap.add_argument("--questions", type=int, default=200)
    args = ap.parse_args()
    out = {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "questions": args.questions,
        "results": [],
    }
    for ds_name in args.datasets:
        cfg = compose_cfg(ds_name, "dense")
        ds = build_dataset(cfg)
        encoder = build_encoder(cfg)
        kg = load_or_build(ds, cfg.graph, encoder=encoder, cache_dir=cfg.paths.cache_dir)
        services = Services(dataset=ds, encoder=encoder)
        qs = [q for q in ds.questions if q.retrieval_scorable][: args.questions]
        services.encode_questions(qs)
        n_generic = sum(not question_mentions(q.text) for q in qs)
        for name in METHODS:
            r = build_retriever(compose_cfg(ds_name, name))
            r.prepare(kg, services)
            for rule_name, rule in RULES.items():
                got = run_method(r, name, rule, qs)
                rows = [score_question(q, g.passage_ids, None) for g, q in zip(got, qs)]
                res = {
                    "dataset": ds_name,
                    "method": name,
                    "rule": rule_name,
                    "questions": len(qs),
                    "no_specific_mention": n_generic,
                    **{m: 100 * float(np.mean([x[m] for x in rows])) for m in METRICS},
                }
                out["results"].append(res)
                print(res, f"[load {load_avg()}]", flush=True)
    write_json(REPO / "benchmarks/studies/results/mention_rules.json", out)
    write_text(REPO / "benchmarks/studies/results/mention_rules.md", render(out))
    print(render(out))


def render(o: dict) -> str:
    lines = [
        "# Question-mention rules",
        "",
        f"`OMP_NUM_THREADS=1 python -m benchmarks.studies.mention_rules --questions "
        f"{o['questions']}` ({o['started']}). First N questions with all gold passages in the corpus; "
        "percentages. `phrases`: every spaCy entity and noun chunk (the rule before 2026-11-30, "
        "still flow diffusion's keywords); `mentions`: the entity reading (rule 1 of "
        "`activation_rules`, now used by spreading activation, HippoRAG 1 seeding, CatRAG's "
        "`ner: spacy` and NeuroPath's fallback).",
        "",
        "| dataset | method | rule | R@2 | R@5 | FCR@5 |",
        "|---|---|---|---|---|---|",
    ]
    for r in o["results"]:
        lines.append(
            f"| {r['dataset']} | {r['method']} | {r['rule']} | {r['recall@2']:.1f} | "
            f"{r['recall@5']:.1f} | {r['fcr@5']:.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
