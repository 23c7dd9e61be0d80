"""Throughput of LLM-bound runs at concurrency 1..N (issue #17).

    python -m benchmarks.speed.concurrency fake  [--latency 0.2] [--levels 1,2,4,8,16,32,64]
    python -m benchmarks.speed.concurrency local [--questions 4] [--levels 1,2,4]

`fake`: a whole run (`retriever=dense reader=qa llm=server`, response cache off, a new run
folder each time) against an OpenAI-compatible server written here (its own process, Nagle
off) that answers every request after a fixed latency, with unlimited parallelism. The ideal is concurrency / latency
questions per second (one reader call per question); the ratio measured / ideal says how much
the harness itself costs. Questions: 2Wiki's first max(100, 8 x concurrency).

`local`: the bundled local model (llama.cpp, Qwen2.5-Coder-1.5B on this machine's cores),
questions per minute for `retriever=dense reader=qa` and `retriever=catrag reader=qa` at each
level, all in one process, response cache off, on the first --questions MuSiQue questions; with
the tokens the server evaluated per second (`local_batching.py` says why that barely
moves on a CPU).

Results go to benchmarks/speed/results/concurrency_<mode>.{json,md}; the machine's load average is
recorded beside each figure (on a shared 2-core machine it explains most of the spread).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import tempfile
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

from benchmarks.common.args import add_data_and_cache_args, add_out_dir_arg
from benchmarks.common.fake_llm import QuietHandler
from benchmarks.common.paths import results_dir
from hopbench.core.atomic import write_json, write_text
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute

RESULTS = results_dir(__file__)


def _serve(latency: float, port_out) -> None:
    """The server process: /v1/chat/completions after `latency` s, a thread per request."""

    class Handler(QuietHandler):
        disable_nagle_algorithm = True  # headers and body must not wait for a delayed ACK

        def do_POST(self):
            body = self.request_body()
            time.sleep(latency)
            question = body["messages"][-1]["content"][-60:]
            text = json.dumps({"reasoning": "fixed", "answer": question})
            self.send_reply(text, prompt_tokens=100, completion_tokens=10)

    ThreadingHTTPServer.request_queue_size = 256
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    port_out.put(httpd.server_address[1])
    httpd.serve_forever()


class FixedLatencyServer:
    """The fixed-latency server in a process of its own, so it takes no CPU (and no GIL) from
    the harness it measures."""

    def __init__(self, latency: float):
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        self._proc = ctx.Process(target=_serve, args=(latency, q), daemon=True)
        self._proc.start()
        self.base_url = f"http://127.0.0.1:{q.get(timeout=60)}/v1"

    def close(self) -> None:
        self._proc.terminate()
        self._proc.join(10)


def _cfg(runs: Path, data_dir: str, cache_dir: str, overrides: list[str]):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "llm.cache=false",
            *overrides,
        ]
    )


def fake(args) -> dict:
    srv = FixedLatencyServer(args.latency)
    rows = []
    try:
        for c in args.levels:
            n = max(100, 8 * c)
            with tempfile.TemporaryDirectory() as runs:
                m = execute(
                    _cfg(
                        Path(runs),
                        args.data_dir,
                        args.cache_dir,
                        [
                            "dataset=2wikimultihopqa",
                            f"dataset.limit={n}",
                            "retriever=dense",
                            "reader=qa",
                            "llm=server",
                            f"llm.base_url={srv.base_url}",
                            "llm.model=fixed",
                            f"concurrency={c}",
                        ],
                    )
                )
                cpu = m["loop_cpu_seconds"]  # this process: harness and client, not the server
            qps = m["questions_per_minute"] / 60
            ideal = c / args.latency
            # the harness's own CPU per question in the loop: what caps throughput on a
            # busy machine, where the run gets only part of a core
            rows.append(
                {
                    "concurrency": c,
                    "questions": n,
                    "q_per_s": round(qps, 2),
                    "ideal_q_per_s": round(ideal, 2),
                    "ratio": round(qps / ideal, 3),
                    "loop_s": round(m["loop_seconds"], 2),
                    "cpu_ms_per_q": round(1000 * cpu / n, 2),
                    "load": round(os.getloadavg()[0], 2),
                }
            )
            print(rows[-1], flush=True)
    finally:
        srv.close()
    return {"mode": "fake", "latency_s": args.latency, "rows": rows}


def local(args) -> dict:
    rows = []
    for retriever in ("dense", "catrag"):
        for c in args.levels:
            with tempfile.TemporaryDirectory() as runs:
                t0 = time.perf_counter()
                m = execute(
                    _cfg(
                        Path(runs),
                        args.data_dir,
                        args.cache_dir,
                        [
                            "dataset=musique",
                            f"dataset.limit={args.questions}",
                            f"retriever={retriever}",
                            "reader=qa",
                            "llm=local",
                            f"concurrency={c}",
                        ],
                    )
                )
            tokens = m["llm_prompt_tokens"] + m["llm_completion_tokens"]
            # tokens the server evaluated per second of the loop: on a compute-bound server this,
            # not questions per minute, is what concurrency could raise
            rows.append(
                {
                    "retriever": retriever,
                    "concurrency": c,
                    "questions": args.questions,
                    "q_per_min": round(m["questions_per_minute"], 3),
                    "llm_calls": m["llm_calls"],
                    "prompt_tokens": m["llm_prompt_tokens"],
                    "completion_tokens": m["llm_completion_tokens"],
                    "tokens_per_s": round(tokens / m["loop_seconds"], 1),
                    "wall_s": round(time.perf_counter() - t0, 1),
                    "load": round(os.getloadavg()[0], 2),
                }
            )
            print(rows[-1], flush=True)
    for r in rows:
        base = next(b for b in rows if b["retriever"] == r["retriever"] and b["concurrency"] == 1)
        r["speedup"] = round(r["q_per_min"] / base["q_per_min"], 2)
    return {"mode": "local", "rows": rows}


def markdown(result: dict) -> str:
    rows = result["rows"]
    cols = list(rows[0])
    out = [
        f"# Concurrency benchmark ({result['mode']})",
        "",
        f"`python -m benchmarks.speed.concurrency {result['mode']}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
    ]
    if result["mode"] == "fake":
        out.append(
            f"Server latency {result['latency_s']} s per request, unlimited parallelism; "
            "ideal = concurrency / latency."
        )
    out += ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["fake", "local"])
    ap.add_argument("--levels", default=None, help="comma-separated concurrency levels")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--questions", type=int, default=4)
    add_data_and_cache_args(ap)
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args()
    args.levels = [
        int(x)
        for x in (args.levels or ("1,2,4,8,16,32,64" if args.mode == "fake" else "1,2,4")).split(
            ","
        )
    ]
    result = fake(args) if args.mode == "fake" else local(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_json(args.out_dir / f"concurrency_{args.mode}.json", result)
    write_text(args.out_dir / f"concurrency_{args.mode}.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
