"""What the bundled llama.cpp server gains from answering several requests at once (issue #17).

    python -m benchmarks.speed.local_batching [--prompts 4] [--slots 4]

Real QA reader prompts (MuSiQue subset questions, 5 passages each, the `qa` prompt),
sent to the local model twice, each time to a fresh server whose slots hold only the shared
instructions (from one other question's prompt each, as in a long run): one at a time to a
1-slot server, then all at once to a server with --slots slots. For each
pass: wall seconds, and the server's own timings summed over requests (prompt tokens
evaluated per second, tokens generated per second). It also says how many replies of the
batched pass are identical to the one-at-a-time ones: llama.cpp does not decode a batch
bit-identically to one sequence, so at temperature 0 a reply can change with concurrency.

Why this exists: a whole run at concurrency 4 gains far less than 4x on a 2-core CPU, and the
split into prompt evaluation (no faster in a batch) and generation (faster) says why.
Results: benchmarks/speed/results/local_batching.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
import urllib.request
from pathlib import Path

from benchmarks.common.args import add_data_and_cache_args
from benchmarks.common.paths import results_dir
from hopbench.core.atomic import write_json, write_text
from hopbench.harness.compose import build_dataset, load_config
from hopbench.llm.local_model import ensure_model
from hopbench.llm.local_server import LocalServer
from hopbench.llm.prompts import qa

RESULTS = results_dir(__file__)


def prompts(data_dir: str, n: int) -> list[list[dict]]:
    """The reader's prompt for the first n questions: their gold passages, filled up to the
    reader's 5 with the next questions' gold passages (a prompt the size a run sends)."""
    ds = build_dataset(
        load_config([f"paths.data_dir={data_dir}", "dataset=musique", f"dataset.limit={n + 5}"])
    )
    pool = [pid for q in ds.questions for pid in q.gold_passage_ids]
    out = []
    for q in ds.questions[:n]:
        pids = list(q.gold_passage_ids[:5])
        pids += [p for p in pool if p not in pids][: 5 - len(pids)]
        out.append(qa.messages(q.text, [ds.passage(p) for p in pids]))
    return out


def ask(base_url: str, messages: list[dict], out: dict, i: int, max_tokens: int = 256) -> None:
    body = {
        "model": "local",
        "messages": messages,
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": max_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": qa.SCHEMA_NAME, "schema": qa.SCHEMA},
        },
    }
    req = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=3600) as r:
        d = json.loads(r.read())
    out[i] = (d["choices"][0]["message"]["content"], d.get("timings") or {})


def concurrently(base_url: str, batch: list[list[dict]], out: dict, max_tokens: int = 256) -> None:
    ts = [
        threading.Thread(target=ask, args=(base_url, m, out, i, max_tokens))
        for i, m in enumerate(batch)
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def one_pass(
    model: Path, batch: list[list[dict]], warm: list[list[dict]], slots: int, threads: int
) -> dict:
    """The batch on a fresh server whose every slot first saw one other question's prompt (so
    each holds the shared instructions in its KV cache, as in a long run), timed."""
    srv = LocalServer(model, n_ctx=8192, n_threads=threads, n_parallel=slots)
    concurrently(srv.base_url, warm[:slots], {}, max_tokens=1)
    out: dict = {}
    t0 = time.perf_counter()
    if slots == 1:
        for i, m in enumerate(batch):
            ask(srv.base_url, m, out, i)
    else:
        concurrently(srv.base_url, batch, out)
    wall = time.perf_counter() - t0
    srv.stop()
    tm = [out[i][1] for i in range(len(batch))]
    prompt_n = sum(t.get("prompt_n", 0) for t in tm)
    gen_n = sum(t.get("predicted_n", 0) for t in tm)
    return {
        "slots": slots,
        "wall_s": round(wall, 1),
        "prompt_tokens": prompt_n,
        "generated_tokens": gen_n,
        "tokens_per_s": round((prompt_n + gen_n) / wall, 1),
        # per-request server times overlap in a batch: tokens over wall is the throughput
        "prompt_tok_per_s_per_request": round(
            prompt_n / max(1e-9, sum(t.get("prompt_ms", 0) for t in tm) / 1000), 1
        ),
        "gen_tok_per_s_per_request": round(
            gen_n / max(1e-9, sum(t.get("predicted_ms", 0) for t in tm) / 1000), 1
        ),
        "replies": [out[i][0] for i in range(len(batch))],
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    add_data_and_cache_args(ap)
    args = ap.parse_args()
    model = ensure_model(args.cache_dir)
    every = prompts(args.data_dir, args.prompts + args.slots)
    batch, warm = every[: args.prompts], every[args.prompts :]
    serial = one_pass(model, batch, warm, 1, args.threads)
    print({k: v for k, v in serial.items() if k != "replies"}, flush=True)
    batched = one_pass(model, batch, warm, args.slots, args.threads)
    print({k: v for k, v in batched.items() if k != "replies"}, flush=True)
    same = sum(a == b for a, b in zip(serial["replies"], batched["replies"]))
    result = {
        "prompts": args.prompts,
        "slots": args.slots,
        "threads": args.threads,
        "speedup": round(serial["wall_s"] / batched["wall_s"], 2),
        "identical_replies": same,
        "serial": serial,
        "batched": batched,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_json(RESULTS / "local_batching.json", result)
    rows = [serial, batched]
    cols = [
        "slots",
        "wall_s",
        "prompt_tokens",
        "generated_tokens",
        "tokens_per_s",
        "prompt_tok_per_s_per_request",
        "gen_tok_per_s_per_request",
        "load",
    ]
    md = [
        f"# Local model: {args.prompts} QA prompts one at a time vs {args.slots} at once",
        "",
        f"`python -m benchmarks.speed.local_batching --prompts {args.prompts} --slots {args.slots}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, n_threads {args.threads}.",
        "",
        "| " + " | ".join(cols) + " |",
        "|" + "---|" * len(cols),
    ]
    md += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    md += [
        "",
        f"Speedup of the batched pass: {result['speedup']}x. Batched replies identical to the "
        f"one-at-a-time ones: {same}/{args.prompts}.",
    ]
    for i, (a, b) in enumerate(zip(serial["replies"], batched["replies"])):
        if a != b:
            md += [
                "",
                f"Prompt {i}, one at a time: `{a[:200]}`",
                f"Prompt {i}, batched: `{b[:200]}`",
            ]
    write_text(RESULTS / "local_batching.md", "\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
