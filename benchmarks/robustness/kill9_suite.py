"""kill -9 at seeded points, then relaunch: the results are those of an uninterrupted run (issue #28).

    python -m benchmarks.robustness.kill9_suite --seed 0 --points 20 [--out OUT.json]

Six scenarios, each against a reference computed without interruption in folders of its own:

  llm-run     retriever=oracle reader=qa llm=server concurrency=4 on 60 MuSiQue questions, against
              a fake OpenAI-compatible server on 127.0.0.1 (plumbing only: its answers are fixed);
              killed once the server has seen a seeded number of requests
  graph       a cold knowledge-graph build (retriever=spreading_activation, empty cache folder),
              killed a seeded number of seconds into the launch
  report      `hopbench report` over the finished runs, killed a seeded time into it
  multirun    `-m top_k=3,5` (Hydra's basic launcher) with the LLM reader, killed at a seeded
              request count
  replies-import  `hopbench replies import` of the committed reply file (results/reference/
              llm_replies.jsonl.gz) into an empty response cache, killed a seeded time into it
              (a seeded fraction of the uninterrupted import's);
              the cache's tables (created_at aside) are compared with a whole import's, and each
              killed cache must pass SQLite's integrity check
  paper       `hopbench paper --no-report` over a small grid (two sub sets, a CPU row and two
              LLM rows each, the fake server), killed at a seeded request count; its runs are
              compared as the llm-run scenario's

The kill points (`--points`, spread over the scenarios in turn) are drawn from `--seed`; each
scenario is killed at each of its points in sequence and launched once more at the end to
finish. Then its predictions (lines sorted) and metrics.json are compared, byte for byte, with
the reference, after taking out what an interruption changes by design: timings, and which LLM
calls were answered from the response cache (a reply the killed process received but did not
write is a cache hit the second time). The report's tables are compared without their timing
columns. Results go to --out (JSON, default
benchmarks/robustness/results/) and a markdown beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

from benchmarks.common.fake_llm import QuietHandler

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets"))

# what an interruption may change: timings, and cache hits instead of server calls
VOLATILE_METRICS = {
    "wall_seconds",
    "finished_at",
    "loop_seconds",
    "loop_cpu_seconds",
    "questions_per_minute",
    "prepare_seconds",
    "query_encoding_ms_per_question",
    "llm_seconds",
    "llm_cached_seconds",
    "llm_cache_hits",
    "software",
}
VOLATILE_COST = {"llm_seconds", "llm_cached_seconds", "llm_cache_hits"}


class FakeLLM:
    """Answers every chat request with a fixed QA reply after `delay` seconds; counts requests."""

    def __init__(self, delay: float = 0.05):
        self.requests = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = self.request_body()
                with outer.lock:
                    outer.requests += 1
                time.sleep(delay)
                q = body["messages"][-1]["content"][-60:]
                text = json.dumps({"reasoning": "fixed", "answer": f"answer {len(q)}"})
                self.send_reply(text, prompt_tokens=10, completion_tokens=3)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a killed client resets its connections: expected here

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def run_cmd(root: Path, cache: Path, *extra: str, multirun: bool = False) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hopbench.run",
        *(["-m"] if multirun else []),
        f"paths.data_dir={DATA}",
        f"paths.runs_dir={root / 'runs'}",
        f"paths.cache_dir={cache}",
        "progress=false",
        f"hydra.run.dir={root / 'hydra'}",
        f"hydra.sweep.dir={root / 'sweep'}",
        *extra,
    ]


def launch(cmd: list[str], cwd: Path, kill=None) -> dict:
    """Run `cmd`; `kill(proc, t0)` returns True when it is time for SIGKILL. Also kills whatever
    the process started (its process group)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    killed = False
    while proc.poll() is None:
        if kill is not None and kill(proc, t0):
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.02)
    err = proc.communicate()[1].decode(errors="replace")
    return {
        "killed": killed,
        "rc": proc.returncode,
        "seconds": round(time.monotonic() - t0, 1),
        "stderr_tail": err[-500:] if proc.returncode not in (0, -9) else "",
    }


VOLATILE_KEYS = {"latency_ms", "latency_s", "cached", "timings", *VOLATILE_COST}


def normalise_row(row):
    """The row without what an interruption changes by design: timings, and whether an LLM
    reply came from the cache (anywhere in it: a trace's `calls` record both per call)."""
    if isinstance(row, dict):
        return {k: normalise_row(v) for k, v in row.items() if k not in VOLATILE_KEYS}
    if isinstance(row, list):
        return [normalise_row(v) for v in row]
    return row


def snapshot(runs: Path) -> dict[str, str]:
    """{run folder relative to runs: normalised predictions + metrics as one canonical text}."""
    out = {}
    for metrics in sorted(runs.glob("*/*/*/metrics.json")):
        run = metrics.parent
        lines = sorted(
            json.dumps(normalise_row(json.loads(line)), sort_keys=True, ensure_ascii=False)
            for line in (run / "predictions.jsonl").read_text().splitlines()
            if line.strip()
        )
        m = {
            k: v
            for k, v in json.loads(metrics.read_text()).items()
            if k not in VOLATILE_METRICS
            and not k.endswith(
                (
                    "_seconds_per_question",
                    "_cache_hits_per_question",
                    "_seconds_uncached_per_question",
                )
            )
            and not k.startswith("latency_ms")
        }
        out[str(run.relative_to(runs))] = "\n".join(lines) + "\n" + json.dumps(m, sort_keys=True)
    return out


def incomplete(runs: Path) -> list[str]:
    """Run folders with a config and no metrics (not the runner's .hydra output folders)."""
    return [
        str(p.parent.relative_to(runs))
        for p in runs.glob("*/*/*/config.yaml")
        if not (p.parent / "metrics.json").exists()
        and not any(part.startswith(".") for part in p.relative_to(runs).parts)
    ]


def by_requests(server: FakeLLM, n: int):
    start = server.requests
    return lambda proc, t0: server.requests - start >= n


def by_seconds(s: float):
    return lambda proc, t0: time.monotonic() - t0 >= s


def scenario_runs(name: str, work: Path, points: list, server: FakeLLM) -> dict:
    """llm-run, graph or multirun: reference, then the killed series, then the comparison."""
    llm = [
        "retriever=oracle",
        "reader=qa",
        "llm=server",
        f"llm.base_url={server.base_url}",
        "llm.model=kill9",
        "dataset=musique",
        "dataset.limit=60",
        "concurrency=4",
    ]
    if name == "llm-run":
        extra, multi = llm, False
    elif name == "multirun":
        extra, multi = [*llm, "top_k=3,5"], True
    else:  # a cold graph build: nothing cached but the models
        extra, multi = ["dataset=musique_sub", "retriever=spreading_activation"], False
    ref, test = work / f"{name}-reference", work / f"{name}-killed"
    for d in (ref, test):
        d.mkdir(parents=True)
    r = launch(run_cmd(ref, ref / "cache", *extra, multirun=multi), ref)
    if r["rc"] != 0:
        return {"scenario": name, "error": f"reference failed: {r}"}
    if (
        name != "graph"
    ):  # the corpus/question vectors, not the LLM replies: the kills need the server
        shutil.copytree(ref / "cache" / "embeddings", test / "cache" / "embeddings")
    kills = []
    for p in points:
        kill = by_seconds(p) if name == "graph" else by_requests(server, p)
        res = launch(run_cmd(test, test / "cache", *extra, multirun=multi), test, kill)
        kills.append({"point": p, **res})
    final = launch(run_cmd(test, test / "cache", *extra, multirun=multi), test)
    return runs_verdict(name, r, kills, final, ref, test)


def report_tables(results: Path) -> dict[str, str]:
    """The report's csv tables without their timing columns."""
    import pandas as pd

    out = {}
    for csv in sorted(results.glob("*.csv")):
        df = pd.read_csv(csv)
        drop = [
            c
            for c in df.columns
            if any(
                s in c for s in ("seconds", "finished_at", "latency", "per_minute", "cache_hits")
            )
        ]
        out[csv.name] = df.drop(columns=drop).to_csv(index=False)
    return out


def scenario_report(work: Path, points: list) -> dict:
    runs = work / "llm-run-reference" / "runs"
    cmd = [
        sys.executable,
        "-m",
        "hopbench.cli",
        "report",
        "--runs-dir",
        str(runs),
        "--no-figures",
        "--no-reference",
        "--resamples",
        "200",
    ]
    ref, test = work / "report-reference", work / "report-killed"
    r = launch([*cmd, "--results-dir", str(ref)], work)
    if r["rc"] != 0:
        return {"scenario": "report", "error": f"reference failed: {r}"}
    kills = [
        {"point": p, **launch([*cmd, "--results-dir", str(test)], work, by_seconds(p))}
        for p in points
    ]
    final = launch([*cmd, "--results-dir", str(test)], work)
    a, b = report_tables(ref), report_tables(test)
    leftovers = sorted(str(p.relative_to(test)) for p in test.rglob("*") if p.name.endswith(".tmp"))
    return {
        "scenario": "report",
        "kills": kills,
        "final_rc": final["rc"],
        "tables": sorted(a),
        "identical": a == b and bool(a),
        "differing": sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)),
        "tmp_files_left": leftovers,
    }


REPLY_FILE = REPO / "results" / "reference" / "llm_replies.jsonl.gz"
# the cache's tables as an import leaves them, without the time each row was written
CACHE_TABLES = {
    "responses": "key, model_identity, request, response_text, prompt_tokens, completion_tokens, "
    "latency_s",
    "checksums": "key, digest",
    "failed_replies": "key, model_identity, response_text, prompt_tokens, completion_tokens, "
    "latency_s, truncated",
}


def cache_rows(cache: Path) -> dict[str, list]:
    import sqlite3

    db = cache / "llm" / "responses.sqlite"
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        return {
            t: conn.execute(f"SELECT {cols} FROM {t} ORDER BY key").fetchall()
            for t, cols in CACHE_TABLES.items()
        }


def cache_health(cache: Path) -> dict:
    """Rows written so far, and SQLite's own check of the file a kill left."""
    import sqlite3

    db = cache / "llm" / "responses.sqlite"
    if not db.exists():
        return {"rows": 0, "integrity": "no file yet"}
    with sqlite3.connect(db) as conn:
        (ok,) = conn.execute("PRAGMA integrity_check").fetchone()
        try:
            (rows,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        except sqlite3.OperationalError:  # killed before the table was made
            rows = 0
    return {"rows": rows, "integrity": ok}


def scenario_replies_import(work: Path, points: list) -> dict:
    """Import the committed reply file, killed at seeded fractions of a whole import's time (the
    reference's), then once more to finish."""
    ref, test = work / "import-reference" / "cache", work / "import-killed" / "cache"

    def cmd(cache: Path) -> list[str]:
        return [sys.executable, "-m", "hopbench.cli", "replies", "import", str(REPLY_FILE)] + [
            "--cache-dir",
            str(cache),
        ]

    r = launch(cmd(ref), work)
    if r["rc"] != 0:
        return {"scenario": "replies-import", "error": f"reference failed: {r}"}
    kills = []
    for p in points:
        at = round(p * r["seconds"], 1)
        res = launch(cmd(test), work, by_seconds(at))
        kills.append({"point": at, **res, "after": cache_health(test)})
    final = launch(cmd(test), work)
    a, b = cache_rows(ref), cache_rows(test)
    return {
        "scenario": "replies-import",
        "reference_seconds": r["seconds"],
        "kills": kills,
        "final_rc": final["rc"],
        "rows_compared": {t: len(v) for t, v in a.items()},
        "identical": a == b and bool(a.get("responses")),
        "differing": sorted(t for t in CACHE_TABLES if a.get(t) != b.get(t)),
        "incomplete_after": [
            k["after"] for k in kills if k["after"]["integrity"] not in ("ok", "no file yet")
        ],
    }


PAPER_GRID = """
paper: {llm_questions: 3, llm: server, max_llm_hours: null, default_seconds_per_question: 60,
        default_calls_per_question: 1, replies: null}
datasets:
  musique_sub: {graphs: [spacy], reader: qa}
  2wikimultihopqa_sub: {graphs: [spacy], reader: qa}
cpu:
  - retriever: dense
llm:
  - {retriever: oracle, reader: dataset}
  - {retriever: dense, reader: dataset}
sweeps: []
"""


def scenario_paper(work: Path, points: list, server: FakeLLM) -> dict:
    """`hopbench paper` over a small grid, killed at seeded request counts, then to the end."""
    grid = work / "paper-grid.yaml"
    grid.write_text(PAPER_GRID)

    def cmd(root: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "hopbench.cli",
            "paper",
            "--grid",
            str(grid),
            "--no-report",
            f"paths.data_dir={DATA}",
            f"paths.runs_dir={root / 'runs'}",
            f"paths.cache_dir={root / 'cache'}",
            "progress=false",
            f"llm.base_url={server.base_url}",
            "llm.model=kill9",
        ]

    ref, test = work / "paper-reference", work / "paper-killed"
    for d in (ref, test):
        d.mkdir(parents=True)
    r = launch(cmd(ref), ref)
    if r["rc"] != 0:
        return {"scenario": "paper", "error": f"reference failed: {r}"}
    shutil.copytree(ref / "cache" / "embeddings", test / "cache" / "embeddings")
    kills = []
    for p in points:
        res = launch(cmd(test), test, by_requests(server, p))
        kills.append({"point": p, **res, "runs_complete": len(snapshot(test / "runs"))})
    final = launch(cmd(test), test)
    return runs_verdict("paper", r, kills, final, ref, test)


def runs_verdict(name: str, r: dict, kills: list, final: dict, ref: Path, test: Path) -> dict:
    """A scenario whose output is run folders: the killed side's runs, once finished, against the
    reference's (byte for byte after snapshot()'s clean-up), and what was left incomplete."""
    a, b = snapshot(ref / "runs"), snapshot(test / "runs")
    return {
        "scenario": name,
        "reference_seconds": r["seconds"],
        "kills": kills,
        "final_rc": final["rc"],
        "runs_compared": sorted(a),
        "identical": a == b and bool(a),
        "differing": sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)),
        "incomplete_after": incomplete(test / "runs"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--scenarios", default="llm-run,graph,report,multirun,replies-import,paper")
    ap.add_argument(
        "--out", default=str(REPO / "benchmarks" / "robustness" / "results" / "kill9_suite.json")
    )
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    names = args.scenarios.split(",")
    # seeded kill points, dealt to the scenarios in turn: request counts (LLM runs, paper),
    # seconds into the launch (graph build, report, replies import)
    points: dict[str, list] = {n: [] for n in names}
    for i in range(args.points):
        n = names[i % len(names)]
        if n == "replies-import":  # a fraction of the whole import's time (known once it ran)
            points[n].append(round(rng.uniform(0.3, 0.95), 2))
        elif n in ("llm-run", "multirun", "paper"):
            # paper: ~10 requests in all, so a point past a launch's remaining ones lands nowhere
            points[n].append(rng.randint(1, 4 if n == "paper" else 10))
        else:
            points[n].append(round(rng.uniform(2.0, 40.0 if n == "graph" else 8.0), 1))
    server = FakeLLM()
    work = Path(tempfile.mkdtemp(prefix="hopbench-kill9-"))
    t0 = time.monotonic()
    results = []
    try:
        for n in names:
            if n == "report":
                if "llm-run" not in names:
                    continue
                results.append(scenario_report(work, points[n]))
            elif n == "replies-import":
                results.append(scenario_replies_import(work, points[n]))
            elif n == "paper":
                results.append(scenario_paper(work, points[n], server))
            else:
                results.append(scenario_runs(n, work, points[n], server))
            print(json.dumps(results[-1])[:2000], flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    n_kills = sum(1 for r in results for k in r.get("kills", []) if k["killed"])
    summary = {
        "seed": args.seed,
        "points": args.points,
        "kills_landed": n_kills,
        "all_identical": all(r.get("identical") for r in results),
        "minutes": round((time.monotonic() - t0) / 60, 1),
        "load_average": os.getloadavg(),
        "scenarios": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    lines = [
        f"# kill -9 suite (seed {args.seed}, {args.points} points, {n_kills} kills landed)",
        "",
        f"`python -m benchmarks.robustness.kill9_suite --seed {args.seed} --points {args.points} "
        f"--scenarios {args.scenarios}`; "
        f"{summary['minutes']} min, load average at the end {summary['load_average']}.",
        "",
        "| scenario | kill points | kills landed | identical after relaunch | incomplete / .tmp left |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        ks = r.get("kills", [])
        left = r.get("incomplete_after", r.get("tmp_files_left", []))
        lines.append(
            f"| {r['scenario']} | {[k['point'] for k in ks]} | {sum(k['killed'] for k in ks)} | "
            f"{r.get('identical', r.get('error'))} | {left} |"
        )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "scenarios"}))
    sys.exit(0 if summary["all_identical"] else 1)


if __name__ == "__main__":
    main()
