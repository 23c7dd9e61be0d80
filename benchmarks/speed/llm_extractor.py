"""LLM OpenIE throughput with the local model: the `graph=llm` extractor on N real passages.

    python -m benchmarks.speed.llm_extractor [--passages 20] [--cache-dir DIR]

Passages: the first N of the MuSiQue corpus.

Two LLM calls per passage (NER, then NER-conditioned triples), as HippoRAG 2 does. The
response cache is OFF, so every call reaches the model and the figure is real throughput;
the spaCy extractor runs on the same passages in the same process as the reference.
Writes benchmarks/speed/results/llm_extractor.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks.common.paths import REPO, results_dir
from hopbench.data import load_dataset
from hopbench.kg.llm_extractor import LLMExtractor
from hopbench.llm.client import LLMClient
from hopbench.llm.local_model import QWEN_CODER_1_5B, default_cache_dir, ensure_model
from hopbench.llm.local_server import shared_server

DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=20)
    ap.add_argument("--cache-dir", default=str(default_cache_dir()))
    ap.add_argument("--out", type=Path, default=results_dir(__file__) / "llm_extractor")
    args = ap.parse_args()

    ds = load_dataset(
        "musique",
        "musique",
        DATA / "musique" / "musique_train.json",
        DATA / "musique" / "musique_train_corpus.json",
        None,
    )
    passages = ds.corpus[: args.passages]
    model = ensure_model(args.cache_dir, QWEN_CODER_1_5B)
    server = shared_server(model, n_ctx=8192, n_threads=2, n_parallel=1, verbosity=0)
    llm = LLMClient(
        name="local",
        base_url=server.base_url,
        model=model.name,
        identity=f"gguf-sha256:{QWEN_CODER_1_5B.sha256}",
        cache=None,
        max_tokens=1024,
    )
    ex = LLMExtractor(llm)
    load = os.getloadavg()
    t0 = time.perf_counter()
    out = list(ex.extract(passages))
    llm_s = time.perf_counter() - t0

    from hopbench.kg.spacy_extractor import SpacyExtractor

    sp = SpacyExtractor()
    list(sp.extract(passages[:2]))  # load the pipeline outside the timing
    t1 = time.perf_counter()
    ref = list(sp.extract(passages))
    spacy_s = time.perf_counter() - t1

    st = llm.stats_dict()
    res = {
        "passages": len(passages),
        "dataset": "musique",
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "llm_seconds": round(llm_s, 1),
        "llm_passages_per_s": round(len(passages) / llm_s, 4),
        "llm_seconds_per_passage": round(llm_s / len(passages), 2),
        "llm_calls": st["llm_calls"],
        "prompt_tokens": st["llm_prompt_tokens"],
        "completion_tokens": st["llm_completion_tokens"],
        "format_retries": st["llm_format_retries"],
        "failed_passages": sum(o.status == "failed" for o in out),
        "llm_triples": sum(len(o.triples) for o in out),
        "llm_entities": sum(len(o.entities) for o in out),
        "spacy_seconds": round(spacy_s, 3),
        "spacy_triples": sum(len(o.triples) for o in ref),
        "spacy_entities": sum(len(o.entities) for o in ref),
        "ratio_llm_over_spacy_time": round(llm_s / max(spacy_s, 1e-9), 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(res, indent=2) + "\n")
    md = [
        "# LLM extractor throughput (local Qwen2.5-Coder-1.5B Q4_K_M, 2 threads, response cache off)",
        "",
        f"`python -m benchmarks.speed.llm_extractor --passages {args.passages}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {res['load_before']} -> {res['load_after']})",
        "",
        "| figure | value |",
        "|---|---|",
    ] + [f"| {k} | {v} |" for k, v in res.items()]
    args.out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
