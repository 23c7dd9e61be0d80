"""Local LLM speed: prompt and generation tokens/s, and QA-reader latency per question.

    python -m benchmarks.speed.llm [--data-dir ../shared/datasets] [--questions 3] [--threads 2]

Raw model speed comes from llama.cpp's own timings on requests sent straight to the
in-process server (prompt cache off, so every prompt token is processed). The reader is then
timed end to end (prompt building, HTTP, JSON-schema decoding, validation; response cache
off) on the gold passages of real MuSiQue questions, and compared with the reference time
the raw rates predict for the same token counts: the ratio is the reader's overhead.
The machine's load average is printed too: on a shared 2-core machine it explains most spread.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.request
from pathlib import Path

import numpy as np

from hopbench.data import load_dataset
from hopbench.llm.client import LLMClient
from hopbench.llm.local_model import default_cache_dir, ensure_model
from hopbench.llm.local_server import shared_server
from hopbench.llm.prompts.passages import format_passages
from hopbench.read import QAReader


def _post(url: str, body: dict) -> tuple[dict, float]:
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=1800) as r:
        out = json.loads(r.read())
    return out, time.perf_counter() - t


def raw_speed(base_url: str, prompt_text: str, gen_tokens: int, repeats: int) -> dict:
    """Prompt tokens/s (max_tokens=1) and generation tokens/s (fixed length, EOS ignored)."""
    url = base_url + "/chat/completions"
    prompt_rates, gen_rates, n_prompt = [], [], 0
    for i in range(repeats):
        msgs = [{"role": "user", "content": f"[run {i}]\n{prompt_text}\n\nSummarise the passages."}]
        out, _ = _post(
            url, {"messages": msgs, "max_tokens": 1, "cache_prompt": False, "temperature": 0}
        )
        prompt_rates.append(out["timings"]["prompt_per_second"])
        n_prompt = out["timings"]["prompt_n"]
        out, _ = _post(
            url,
            {
                "messages": [{"role": "user", "content": f"[run {i}] Count from 1 to 500."}],
                "max_tokens": gen_tokens,
                "ignore_eos": True,
                "cache_prompt": False,
                "temperature": 0,
            },
        )
        gen_rates.append(out["timings"]["predicted_per_second"])
    return {
        "prompt_tokens": n_prompt,
        "prompt_tok_s": float(np.median(prompt_rates)),
        "prompt_tok_s_all": [round(r, 1) for r in prompt_rates],
        "gen_tokens": gen_tokens,
        "gen_tok_s": float(np.median(gen_rates)),
        "gen_tok_s_all": [round(r, 1) for r in gen_rates],
    }


def reader_latency(base_url: str, ds, n: int, speed: dict) -> dict:
    llm = LLMClient(base_url=base_url, model="local", identity="bench", cache=None, name="local")
    reader = QAReader().bind(llm)
    rows = []
    for q in ds.questions[:n]:
        passages = [ds.passage(pid) for pid in q.gold_passage_ids]
        t = time.perf_counter()
        out = reader.answer(q, passages)
        wall = time.perf_counter() - t
        calls = out.trace["calls"]
        pt = sum(c["prompt_tokens"] for c in calls)
        ct = sum(c["completion_tokens"] for c in calls)
        reference = pt / speed["prompt_tok_s"] + ct / speed["gen_tok_s"]
        rows.append(
            {
                "id": q.id,
                "seconds": round(wall, 2),
                "prompt_tokens": pt,
                "completion_tokens": ct,
                "reference_seconds": round(reference, 2),
                "ratio_to_reference": round(wall / reference, 3),
                "answer": out.answer,
            }
        )
    secs = [r["seconds"] for r in rows]
    llm.close()
    return {
        "questions": rows,
        "seconds_mean": float(np.mean(secs)),
        "seconds_p50": float(np.median(secs)),
        "ratio_to_reference_mean": float(np.mean([r["ratio_to_reference"] for r in rows])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default="../shared/datasets")
    ap.add_argument("--cache-dir", default=str(default_cache_dir()))
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--gen-tokens", type=int, default=64)
    args = ap.parse_args()
    data = Path(args.data_dir)
    ds = load_dataset(
        "musique",
        "musique",
        data / "musique/musique_train.json",
        data / "musique/musique_train_corpus.json",
        limit=args.questions,
    )
    load_before = os.getloadavg()
    t = time.perf_counter()
    model = ensure_model(args.cache_dir)
    verify_s = time.perf_counter() - t
    t = time.perf_counter()
    server = shared_server(model, n_ctx=8192, n_threads=args.threads, n_parallel=1, verbosity=0)
    start_s = time.perf_counter() - t
    sample = format_passages([ds.passage(pid) for pid in ds.questions[0].gold_passage_ids])
    speed = raw_speed(server.base_url, sample, args.gen_tokens, args.repeats)
    reader = reader_latency(server.base_url, ds, args.questions, speed)
    print(
        json.dumps(
            {
                "model": model.name,
                "threads": args.threads,
                "sha256_verify_s": round(verify_s, 2),
                "server_start_s": round(start_s, 2),
                "raw": speed,
                "reader": reader,
                "loadavg_before": load_before,
                "loadavg_after": os.getloadavg(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
