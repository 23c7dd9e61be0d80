"""A run-like folder of `retriever=neuropath` made with scripted replies that walk the
reference's branches (second hops, out-of-range and negative ids, a missing key, unreadable and
empty NER): input for `compare.py --synthetic`, to check the two sides agree
on branches the local model rarely reaches. The replies are not model output, and the lists
are never scores of the method.

    python -m benchmarks.parity.neuropath.scripted_run OUT_DIR musique
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

from omegaconf import OmegaConf

from hopbench.harness.compose import build_dataset, build_encoder, load_config
from hopbench.kg import load_or_build
from hopbench.retrieve.base import Services
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever
from hopbench.retrieve.question import question_mentions


class ScriptedTracker:
    """Question i gets outcome kind i % 8 (see `chat`)."""

    def __init__(self):
        self.n, self.q, self.i = 0, None, 0

    def start(self, q):
        self.q, self.n, self.i = q, 0, self.i + 1

    def chat(self, messages, *, schema=None, schema_name="", max_tokens=None, temperature=None):
        kind = self.i % 8
        if schema_name == "neuropath_ner":
            text = json.dumps(
                {"named_entities": [] if kind == 7 else question_mentions(self.q.text)[:3]}
            )
            text = "not json" if kind == 6 else text
        else:
            body = (
                messages[-1]["content"].split("Paths:\n", 1)[1].split("\nOutput:")[0].splitlines()
            )
            tagged = [int(line.split(":")[0]) for line in body if "<expandable>" in line]
            self.n += 1
            if self.n == 1:
                valid = tagged[:2]
                if kind == 1:
                    valid = valid + [len(body) + 3]  # out of range: the reference drops all
                if kind == 2:
                    valid = [-1] + valid[:1]  # negative id: counts from the end
                rep = {
                    "current_chain": f"c1 {kind}",
                    "valid_ids": valid,
                    "expansion_requirements": "" if kind == 5 else "find the next step",
                    "need_expand_ids": tagged[1:2] if kind == 3 else tagged[:3],
                    "continue": 0 if kind == 4 else 1,
                }
                text = json.dumps(rep, indent=2)
            else:
                rep = {
                    "current_chain": "c2",
                    "valid_ids": (tagged[:2] + [0]) if tagged else [0],
                    "expansion_requirements": "",
                    "need_expand_ids": [],
                    "continue": 0,
                }
                if kind == 3:
                    del rep["expansion_requirements"]  # missing key at hop 2
                text = "Here you go: " + json.dumps(rep)
        return SimpleNamespace(text=text, cached=False, latency_s=0.0, error=None, usage={})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the run-like folder to write")
    ap.add_argument("dataset", help="a dataset config (musique, 2wikimultihopqa, ...)")
    ap.add_argument("overrides", nargs="*", help="more Hydra overrides, e.g. dataset.limit=20")
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("HOPBENCH_DATA_DIR", "../shared/datasets"),
        help="the benchmark files (default $HOPBENCH_DATA_DIR)",
    )
    args = ap.parse_args(argv)
    out = args.out
    cfg = load_config(
        [
            f"dataset={args.dataset}",
            "retriever=neuropath",
            "llm=local",
            "dataset.limit=100",
            f"paths.data_dir={args.data_dir}",
            *args.overrides,
        ]
    )
    dataset, enc = build_dataset(cfg), build_encoder(cfg)
    kg = load_or_build(
        dataset, cfg.graph, encoder=enc, cache_dir=cfg.paths.cache_dir, descriptions=False
    )  # NeuroPath reads no description vectors
    llm = ScriptedTracker()
    r = NeuroPathRetriever(handling=cfg.retriever.handling, prompts=cfg.retriever.prompts)
    r.prepare(kg, Services(dataset=dataset, encoder=enc, llm=llm, graphdb=None))
    out.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, out / "config.yaml")
    with open(out / "predictions.jsonl", "w") as f:
        for q in dataset.questions:
            llm.start(q)
            res = r.retrieve(q, 10)
            f.write(
                json.dumps(
                    {
                        "id": q.id,
                        "question": q.text,
                        "ranked_passage_ids": res.passage_ids,
                        "trace": res.trace,
                    }
                )
                + "\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
