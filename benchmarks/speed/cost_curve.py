"""The cost curve (issue #31): cold graph build time, CPU seconds and peak memory against corpus
size, and the per-query latency of every CPU retriever on each size.

    python -m benchmarks.speed.cost_curve [--sizes 1000,2000,4000,6000,all]

The corpora are prefixes of one seeded permutation of the union of the four bundled corpora
(MuSiQue, 2Wiki, HotpotQA, HoVer; passages deduplicated by id), so each size holds the smaller ones
and mixes the four sources; `all` is the whole union. The probe questions are the first
`--questions-per-dataset` of each dataset (their answers need not be in a small corpus: only the
time per query is read). Per size, each step runs in a child process of its own, so its imports,
model load and peak RSS are its own:

1. `hipporag2` graph (retriever=hipporag's construction), cold: empty cache folder, so spaCy
   extraction, every embedding and the graph are computed;
2. `hopbench` graph (every other graph retriever's construction) in the same cache folder: the
   extraction records and the passage vectors are reused (same texts), as for any user who builds
   the second construction of a corpus; then its description vectors (the layer QASA and QAFD's
   description-seeded runs add on first use, kg/description_layer.py), timed apart;
3. latency: each retriever prepared on its cached graph (prepare time), 5 warm-up questions, then
   one timed pass over the probe questions (k=10, no LLM).

Writes `<out>.json`, `<out>.md` and `<out>.png` (stage CPU seconds and latency against size) and a
linear fit of each stage's seconds per passage, with its extrapolation to 100,000 passages.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common.paths import REPO, module_name, results_dir

DATASETS = ("musique", "2wikimultihopqa", "hotpotqa", "hover")
RETRIEVERS = (
    "dense",
    "hipporag",
    "hipporag_hb",
    "spreading_activation",
    "spreading_activation_nogate",
    "flow_diffusion",
    "flow_diffusion_joint",
    "flow_diffusion_code",
)
K = 10
STAGES = (
    "extract",
    "embed_passages",
    "assemble",
    "describe",
    "embed_entities",
    "embed_facts",
    "synonyms",
    "save",
    "embed_descriptions",
)


GRAPH = os.environ.get("HOPBENCH_COST_CURVE_GRAPH", "spacy")  # --graph, passed on to the children


def compose(dataset: str, retriever: str, data_dir: str, cache_dir: str):
    from hopbench.harness.compose import load_config

    return load_config(
        [
            f"dataset={dataset}",
            f"retriever={retriever}",
            f"graph={GRAPH}",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
        ]
    )


def union_dataset(size: str, data_dir: str, per_dataset: int, seed: int = 0):
    """The first `size` passages of a seeded permutation of the four corpora's union, and the
    probe questions."""
    from hopbench.data.schema import Dataset
    from hopbench.harness.compose import build_dataset

    corpus, questions, seen = [], [], set()
    for name in DATASETS:
        ds = build_dataset(compose(name, "dense", data_dir, "/nonexistent"))
        for p in ds.corpus:
            if p.id not in seen:
                seen.add(p.id)
                corpus.append(p)
        questions += list(ds.questions)[:per_dataset]
    order = np.random.default_rng(seed).permutation(len(corpus))
    n = len(corpus) if size == "all" else min(int(size), len(corpus))
    return Dataset(
        name=f"union{n}", questions=questions, corpus=[corpus[i] for i in order[:n]]
    ), len(corpus)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _rss_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # spaCy workers
    return round(max(own, kids) / 1024, 1)


# ---- the children -----------------------------------------------------------------------------
def child_build(args) -> dict:
    from hopbench.harness.compose import build_encoder, build_retriever
    from hopbench.kg import load_or_build

    t0, c0 = time.perf_counter(), _cpu()
    ds, _ = union_dataset(args.size, args.data_dir, args.questions_per_dataset)
    cfg = compose("musique", args.retriever, args.data_dir, args.cache)
    retriever = build_retriever(cfg)
    encoder = build_encoder(cfg)
    t1, c1 = time.perf_counter(), _cpu()
    kg = load_or_build(ds, cfg.graph, encoder=encoder, cache_dir=args.cache, descriptions=False)
    out = {
        "construction": kg.manifest.get("construction", "hopbench"),
        "passages": kg.n_passages,
        "entities": kg.n_entities,
        "facts": kg.n_facts,
        "graph_key": kg.manifest["graph_key"],
        "load_data_s": t1 - t0,
        "cpu_load_data_s": c1 - c0,
        "build_s": time.perf_counter() - t1,
        "cpu_build_s": _cpu() - c1,
        "timings": {k: round(v, 3) for k, v in kg.manifest["timings"].items()},
        "peak_rss_mib_build": _rss_mib(),
    }
    folder = Path(args.cache) / "kg" / "graphs" / kg.manifest["graph_key"]
    out["graph_mib"] = round(
        sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20, 1
    )
    if kg.description_embeddings is None and (retriever.needs_descriptions or args.descriptions):
        t2, c2 = time.perf_counter(), _cpu()
        kg = load_or_build(ds, cfg.graph, encoder=encoder, cache_dir=args.cache, descriptions=True)
        out["descriptions_s"], out["cpu_descriptions_s"] = time.perf_counter() - t2, _cpu() - c2
        out["peak_rss_mib_with_descriptions"] = _rss_mib()
    return out


def child_latency(args) -> dict:
    from hopbench.harness.compose import build_encoder, build_retriever
    from hopbench.kg import load_or_build
    from hopbench.retrieve.base import Services

    ds, _ = union_dataset(args.size, args.data_dir, args.questions_per_dataset)
    out = {}
    encoder = None
    for name in args.retrievers.split(","):
        cfg = compose("musique", name, args.data_dir, args.cache)
        retriever = build_retriever(cfg)
        encoder = encoder or build_encoder(cfg)
        services = Services(dataset=ds, encoder=encoder, llm=None, graphdb=None)
        kg = (
            load_or_build(
                ds,
                cfg.graph,
                encoder=encoder,
                cache_dir=args.cache,
                descriptions=retriever.needs_descriptions,
            )
            if retriever.needs_graph
            else None
        )
        t = time.perf_counter()
        retriever.prepare(kg, services)
        prepare_s = time.perf_counter() - t
        questions = list(ds.questions)
        services.encode_questions(questions)
        for q in questions[:5]:
            retriever.retrieve(q, K)
        ms = []
        for q in questions:
            t = time.perf_counter()
            retriever.retrieve(q, K)
            ms.append(1000 * (time.perf_counter() - t))
        out[name] = {
            "prepare_s": round(prepare_s, 3),
            "p50_ms": round(float(np.percentile(ms, 50)), 2),
            "p90_ms": round(float(np.percentile(ms, 90)), 2),
            "mean_ms": round(float(np.mean(ms)), 2),
            "questions": len(ms),
        }
        print(f"  {name}: p50 {out[name]['p50_ms']} ms", file=sys.stderr, flush=True)
    out["peak_rss_mib"] = _rss_mib()
    return out


def run_child(mode: str, args, size: str, cache: Path, **extra) -> dict:
    out = cache / f"{mode}_{extra.get('retriever', 'all')}.json"
    cmd = [
        sys.executable,
        "-m",
        module_name(__file__),
        f"--child-{mode}",
        "--size",
        size,
        "--cache",
        str(cache),
        "--out-json",
        str(out),
        "--data-dir",
        args.data_dir,
        "--questions-per-dataset",
        str(args.questions_per_dataset),
    ]
    for k, v in extra.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),  # the child starts as this module
        "TQDM_DISABLE": "1",
        "HOPBENCH_COST_CURVE_GRAPH": GRAPH,
    }
    r = subprocess.run(cmd, env=env)
    if r.returncode:
        raise SystemExit(f"{mode} child failed for size {size} (exit {r.returncode})")
    return json.loads(out.read_text())


# ---- fit, table, figure -----------------------------------------------------------------------
def stage_rows(res: dict) -> list[dict]:
    """Per size: the CPU and wall seconds of each stage, both graphs summed, plus totals."""
    rows = []
    for s in res["sizes"]:
        row = {"passages": s["passages"]}
        for g in ("hipporag2", "hopbench"):
            b = s["builds"][g]
            for st in STAGES:
                if st in b["timings"]:
                    row[f"{g}:{st}"] = b["timings"][st]
                    row[f"{g}:cpu_{st}"] = b["timings"].get(f"cpu_{st}")
            if "descriptions_s" in b:
                row[f"{g}:embed_descriptions"] = b["descriptions_s"]
                row[f"{g}:cpu_embed_descriptions"] = b["cpu_descriptions_s"]
        rows.append(row)
    return rows


def fit_per_passage(xs: list[int], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b·x; (a, b)."""
    b, a = np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)
    return float(a), float(b)


def build_rows(res: dict) -> list[str]:
    """The build table's rows: each size's two graphs, and the description vectors."""
    L: list[str] = []
    for s in res["sizes"]:
        for g in ("hipporag2", "hopbench"):
            b = s["builds"][g]
            L.append(
                f"| {s['passages']:,} | {g} | {b['entities']:,} | {b['facts']:,} | {b['build_s']:.1f} | "
                f"{b['cpu_build_s']:.1f} | {b['peak_rss_mib_build']:,.0f} | {b['graph_mib']:,.1f} |"
            )
        b = s["builds"]["hopbench"]
        if "descriptions_s" in b:
            L.append(
                f"| {s['passages']:,} | descriptions | | | {b['descriptions_s']:.1f} | "
                f"{b['cpu_descriptions_s']:.1f} | {b.get('peak_rss_mib_with_descriptions', 0):,.0f} | |"
            )
    return L


def latency_section(res: dict) -> list[str]:
    """Each retriever's latency per query at each size."""
    L = [
        "",
        "## Latency per query (ms; prepare = seconds to load the retriever's structures)",
        "",
        "| retriever | "
        + " | ".join(f"{s['passages']:,} p50 / p90 (prepare s)" for s in res["sizes"])
        + " |",
        "|:--|" + "--:|" * len(res["sizes"]),
    ]
    for name in res["retrievers"]:
        cells = []
        for s in res["sizes"]:
            r = s["latency"].get(name)
            cells.append(
                "–"
                if r is None
                else f"{r['p50_ms']:.1f} / {r['p90_ms']:.1f} ({r['prepare_s']:.1f})"
            )
        L.append(f"| {name} | " + " | ".join(cells) + " |")
    return L


def markdown(res: dict) -> str:
    L = [
        "# Cost curve: cold graph build and query latency against corpus size (issue #31)",
        "",
        f"`{res['command']}`, started {res['started']} UTC, load average {res['loadavg_start']} "
        f"before and {res['loadavg_end']} after; {res['cpus']} cores, embedding backend "
        f"`{res['backend']}`, `graph={res.get('graph', 'spacy')}`"
        f"{' (the default profile)' if res.get('graph', 'spacy') == 'spacy' else ''}. Corpora: "
        "prefixes of one seeded permutation of "
        f"the union of the four bundled corpora ({res['union_passages']:,} distinct passages); "
        f"latency over {res['questions']} probe questions (k = {K}, one pass after 5 warm-up "
        "questions, no LLM). Each build and each latency pass ran in a process of its own.",
        "",
        "## Build",
        "",
        "`hipporag2`: cold (empty cache). `hopbench`: the second graph of the same corpus (extraction "
        "records and passage vectors reused). `descriptions`: the hopbench graph's description "
        "vectors, added on first use by QASA / QAFD (kg/description_layer.py).",
        "",
        "| passages | graph | entities | facts | wall s | CPU s | peak RSS MiB | on disk MiB |",
        "|--:|:--|--:|--:|--:|--:|--:|--:|",
    ]
    L += build_rows(res)
    L += ["", "Wall seconds per stage (both graphs; `hb:` = the hopbench graph):", ""]
    rows = stage_rows(res)
    cols = [c for c in rows[-1] if c != "passages" and ":cpu_" not in c]
    L += [
        "| passages | "
        + " | ".join(c.replace("hipporag2:", "h2:").replace("hopbench:", "hb:") for c in cols)
        + " |",
        "|--:|" + "--:|" * len(cols),
    ]
    for r in rows:
        L.append(f"| {r['passages']:,} | " + " | ".join(f"{r.get(c, 0):.1f}" for c in cols) + " |")
    L += [
        "",
        "## Extrapolation (linear fit of CPU seconds per stage on the measured sizes)",
        "",
        "| stage | CPU ms per passage | at 100,000 passages (CPU h) | who takes it over |",
        "|:--|--:|--:|:--|",
    ]
    for stage, (a, b) in res["fit"].items():
        who = (
            "a GPU / embedding server (`embedding=server`)"
            if "embed" in stage
            else "extraction by shards (a cluster)"
            if "extract" in stage
            else "this machine"
        )
        L.append(f"| {stage} | {1000 * b:.1f} | {(a + b * 100_000) / 3600:.2f} | {who} |")
    L += latency_section(res)
    L += ["", f"Figure: `{Path(res['figure']).name}`.", ""]
    return "\n".join(L)


def figure(res: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [s["passages"] for s in res["sizes"]]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    rows = stage_rows(res)
    for stage in res["fit"]:
        ys = [r.get(stage.replace(":", ":cpu_"), 0) or 0 for r in rows]
        a1.plot(xs, ys, marker="o", label=stage)
    a1.set_xlabel("passages")
    a1.set_ylabel("CPU seconds")
    a1.set_title("Cold build: CPU seconds per stage")
    a1.legend(fontsize=7)
    for name in res["retrievers"]:
        a2.plot(xs, [s["latency"][name]["p50_ms"] for s in res["sizes"]], marker="o", label=name)
    a2.set_yscale("log")
    a2.set_xlabel("passages")
    a2.set_ylabel("p50 ms per query")
    a2.set_title("Query latency")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def fit(res: dict) -> dict:
    rows = stage_rows(res)
    xs = [r["passages"] for r in rows]
    out = {}
    for key in rows[-1]:
        if ":cpu_" not in key:
            continue
        ys = [r.get(key) for r in rows]
        if all(y is not None for y in ys) and max(ys) > 1.0:
            out[key.replace(":cpu_", ":")] = fit_per_passage(xs, ys)
    return out


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument(
        "--sizes", default="1000,2000,4000,6000,all", help="passages per corpus, or all (the union)"
    )
    ap.add_argument("--retrievers", default=",".join(RETRIEVERS))
    ap.add_argument(
        "--graph",
        default="spacy",
        help="the graph config: spacy (the default profile: "
        "torch fp32, text-encoded descriptions) or spacy_fast (int8 ONNX, composed descriptions)",
    )
    ap.add_argument("--questions-per-dataset", type=int, default=25)
    ap.add_argument("--data-dir", default=os.environ.get("HOPBENCH_DATA_DIR", "../shared/datasets"))
    ap.add_argument(
        "--work-dir",
        default=None,
        help="cache folders of the builds (default "
        "<HOPBENCH_CACHE_DIR or ~/.cache/hopbench>/bench-cost-curve; emptied per size)",
    )
    ap.add_argument("--out", default=str(results_dir(__file__) / "cost_curve"))
    ap.add_argument(
        "--render-only", action="store_true", help="rewrite <out>.md and .png from <out>.json"
    )
    ap.add_argument(
        "--latency-only",
        action="store_true",
        help="add --retrievers' latency to <out>.json, on the graphs a full run left in --work-dir",
    )
    for mode in ("build", "latency"):
        ap.add_argument(f"--child-{mode}", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--size", help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--out-json", help=argparse.SUPPRESS)
    ap.add_argument("--retriever", help=argparse.SUPPRESS)
    ap.add_argument("--descriptions", action="store_true", help=argparse.SUPPRESS)
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    global GRAPH
    GRAPH = args.graph if not (args.child_build or args.child_latency) else GRAPH
    if args.child_build or args.child_latency:
        res = child_build(args) if args.child_build else child_latency(args)
        Path(args.out_json).write_text(json.dumps(res, indent=1), encoding="utf-8")
        return 0
    out = Path(args.out)
    cache_root = Path(
        os.environ.get("HOPBENCH_CACHE_DIR", str(Path.home() / ".cache" / "hopbench"))
    )
    work = Path(args.work_dir or cache_root / "bench-cost-curve")
    if args.render_only or args.latency_only:
        res = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    if args.latency_only:
        GRAPH = res.get("graph", "spacy")
        for s in res["sizes"]:
            lat = run_child(
                "latency", args, s["size"], work / f"size_{s['size']}", retrievers=args.retrievers
            )
            s["latency"].update({k: v for k, v in lat.items() if k != "peak_rss_mib"})
        res["retrievers"] += [r for r in args.retrievers.split(",") if r not in res["retrievers"]]
        out.with_suffix(".json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    elif not args.render_only:
        import torch

        from hopbench.harness.compose import build_encoder

        _, n_union = union_dataset("all", args.data_dir, args.questions_per_dataset)
        res = {
            "command": "python -m benchmarks.speed.cost_curve " + " ".join(sys.argv[1:]),
            "started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
            "loadavg_start": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "graph": GRAPH,
            "backend": build_encoder(compose("musique", "dense", args.data_dir, str(work))).backend,
            "union_passages": n_union,
            "questions": 4 * args.questions_per_dataset,
            "retrievers": args.retrievers.split(","),
            "sizes": [],
        }
        for size in args.sizes.split(","):
            cache = work / f"size_{size}"
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir(parents=True)
            print(f"== size {size}", file=sys.stderr, flush=True)
            builds = {}
            for g, retriever in (("hipporag2", "hipporag"), ("hopbench", "spreading_activation")):
                builds[g] = run_child("build", args, size, cache, retriever=retriever)
                print(f"  {g}: {builds[g]['build_s']:.1f} s", file=sys.stderr, flush=True)
            lat = run_child("latency", args, size, cache, retrievers=args.retrievers)
            res["sizes"].append(
                {
                    "size": size,
                    "passages": builds["hipporag2"]["passages"],
                    "builds": builds,
                    "latency": {k: v for k, v in lat.items() if k != "peak_rss_mib"},
                    "latency_peak_rss_mib": lat["peak_rss_mib"],
                    "loadavg": [round(x, 2) for x in os.getloadavg()],
                }
            )
            res["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
            res["fit"] = fit(res) if len(res["sizes"]) > 1 else {}
            out.parent.mkdir(parents=True, exist_ok=True)
            out.with_suffix(".json").write_text(
                json.dumps(res, indent=1), encoding="utf-8"
            )  # after every size
    res["figure"] = str(out.with_suffix(".png"))
    res["fit"] = fit(res)
    figure(res, out.with_suffix(".png"))
    text = markdown(res)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
