"""A run-like folder of `retriever=catrag_code` made with scripted, rule-based LLM decisions:
input for `compare.py --run`, so the algorithm is compared with the authors'
code on every question of a set without spending the local model. The rules (not model output,
never scores of the method): the fact filter keeps candidates 3, 1, 2 in that order; question
NER = the capitalised word runs of the question (at most 3); a neighbour's score =
len(name) % 11; a summary request gets "a summary".

    HOPBENCH_DATA_DIR=../shared/datasets \\
        python -m benchmarks.parity.catrag.scripted_run OUT_DIR --dataset musique --graph spacy
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import yaml

from benchmarks.parity.catrag import compare as cc  # the comparison's own config composition
from hopbench.harness.compose import build_dataset, build_encoder, build_retriever
from hopbench.kg import load_or_build
from hopbench.llm.client import LLMResult
from hopbench.retrieve.base import Services


class ScriptedDecisions:
    """The rules of the module docstring, answering the prompts `catrag_code` sends."""

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        user = messages[-1]["content"]
        if schema_name == "fact_filter_demos":
            facts = json.loads(user.split("Candidate facts: ", 1)[1])["fact"]
            return {"fact": [facts[i] for i in (2, 0, 1) if i < len(facts)]}
        if schema_name == "question_entities":
            question = user.split("Question: ", 1)[1]
            return {"named_entities": re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", question)[:3]}
        raise KeyError(f"no scripted decision for {schema_name}")

    def chat(self, messages, **kw):
        names = re.findall(r'^\[(\d+)\] "(.*?)" \| LINK:', messages[-1]["content"], re.M)
        if not names:
            return LLMResult(text="a summary", usage={})
        return LLMResult(text="\n".join(f"{i} ({n}): {len(n) % 11}" for i, n in names), usage={})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "out", type=Path, help="the run-like folder to write (config.yaml, predictions.jsonl)"
    )
    ap.add_argument("--dataset", default="musique")
    ap.add_argument("--graph", default="spacy", help="spacy | openie")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--data-dir", default=os.environ.get("HOPBENCH_DATA_DIR", "../shared/datasets"))
    ap.add_argument(
        "--cache-dir",
        default=os.environ.get("HOPBENCH_CACHE_DIR", str(Path.home() / ".cache" / "hopbench")),
    )
    args = ap.parse_args(argv)
    cfg = cc.compose(args.dataset, args.limit, args.graph, args.data_dir, args.cache_dir)
    dataset, encoder = build_dataset(cfg), build_encoder(cfg)
    kg = load_or_build(dataset, cfg.graph, encoder=encoder, cache_dir=args.cache_dir)
    retriever = build_retriever(cfg)
    services = Services(dataset=dataset, encoder=encoder, llm=ScriptedDecisions(), graphdb=None)
    retriever.prepare(kg, services)
    services.encode_questions(dataset.questions)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "config.yaml").write_text(
        yaml.safe_dump(
            {"dataset": {"name": args.dataset, "limit": args.limit}, "graph": {"name": args.graph}}
        )
    )
    with open(args.out / "predictions.jsonl", "w", encoding="utf-8") as fh:
        for q in dataset.questions:
            res = retriever.retrieve(q, 10)
            fh.write(
                json.dumps(
                    {
                        "id": q.id,
                        "ranked_passage_ids": res.passage_ids,
                        "scores": list(res.scores),
                        "trace": res.trace,
                    }
                )
                + "\n"
            )
    print(
        f"{args.out}: {len(dataset.questions)} questions, graph {kg.manifest.get('graph_key')} "
        f"({kg.manifest.get('construction')})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
