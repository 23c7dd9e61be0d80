"""Cold index build, hopbench against the official HippoRAG 2 package, same corpus and triples (issue #31).

    HOPBENCH_DATA_DIR=../shared/datasets nice python -m benchmarks.parity.hipporag.index_build \\
        [--datasets musique,2wikimultihopqa] [--repeats 1] [--limit-passages N] \\
        [--venv <repo>/.cache/official-hipporag] [--out benchmarks/parity/hipporag/results/index_official]

Per dataset (`--datasets`; the configs' corpora: MuSiQue 1,890 passages, 2Wiki 6,119):

1. Triples: hopbench's spaCy extraction (`graph=spacy`). With --cold-extraction (the default) it
   runs first in a child process on a NEW empty cache folder, so its time is a cold one (spaCy
   model load included, `graph.spacy.n_process` workers); the log is then put into the shared
   extraction cache (--cache-dir) if that has none. The official package gets the triples as its
   OpenIE file, so extraction is reported apart and is in neither TOTAL.
2. hopbench, cold, in a child process of its own (imports, model load and peak RSS its own): a
   new cache folder holding only the extraction log, then
   `load_or_build(dataset, cfg.graph, encoder=build_encoder(cfg), cache_dir=<new>)` composed as
   `retriever=hipporag graph=spacy` runs it (graph.construction=hipporag2, description vectors
   deferred as the hipporag retriever reads none; --descriptions embeds them too). The
   all-MiniLM-L6-v2 model is loaded before the build and timed as "model load".
3. The official package, cold: `index_worker.py` in its virtual environment
   (hipporag==2.0.0a4 --no-deps plus pins, made once by compare.ensure_venv):
   `HippoRAG(global_config=cfg).index(docs)` on a new save_dir with force_index_from_scratch,
   the OpenIE file holding every passage, all-MiniLM-L6-v2 through sentence-transformers on the
   CPU with the package's default embedding batch size (16; --official-batch-size).
4. --repeats N alternates hopbench, official, hopbench, official, ...; tables give medians.

Both children: the machine's default threads (no OMP/MKL/OPENBLAS_NUM_THREADS set by this
script), PYTHONHASHSEED=0, TQDM_DISABLE=1, TOKENIZERS_PARALLELISM=false, OPENAI_API_KEY=sk-offline.
Per stage: wall seconds (time.perf_counter) and CPU seconds (os.times, user+system, children
included); "whole process" is measured by this script around the child (start-up, imports,
reading inputs, build, exit). The graphs are compared by their counts: vertices, entity and
passage nodes, facts, igraph edges (HippoRAG adds one per directed entry) and distinct node pairs.

Writes <out>.json and <out>.md (--render-only rewrites the .md from the .json). Work folders
(corpus text: never in the repository) go under --work-dir, default <cache-dir>/bench-index; the
build folders are deleted after each build unless --keep.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np  # noqa: F401  (before the compare module: BLAS starts with the default threads)
import scipy.sparse as sp

from benchmarks.common import args as common_args
from benchmarks.common.paths import REPO, module_name, results_dir
from benchmarks.common.report import render_only, write_json_and_md
from benchmarks.common.timing import loadavg
from benchmarks.common.versions import THREAD_VARS, package_versions, thread_settings

WORKER = Path(__file__).resolve().parent / "index_worker.py"
LLM_NAME = "bypassed"  # the worker's BaseConfig.llm_name (names the OpenIE file it reads)
CHILD_ENV = {
    "PYTHONHASHSEED": "0",
    "TQDM_DISABLE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OPENAI_API_KEY": "sk-offline",
}
DEFAULT_VENV = str(REPO / ".cache" / "official-hipporag")  # gitignored, as compare.py
OFFICIAL_BATCH = 16  # hipporag BaseConfig.embedding_batch_size default


def coh():
    """benchmarks.parity.hipporag.compare, imported without its one-thread default leaking into
    this process's environment (which the children inherit)."""
    saved = {v: os.environ.get(v) for v in THREAD_VARS}
    from benchmarks.parity.hipporag import compare

    for v, old in saved.items():
        if old is None:
            os.environ.pop(v, None)
        else:
            os.environ[v] = old
    return compare


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Clock:
    """Wall and CPU seconds since it was made."""

    def __init__(self):
        self.w, self.c = time.perf_counter(), cpu_seconds()

    def done(self) -> dict:
        return {"wall": time.perf_counter() - self.w, "cpu": cpu_seconds() - self.c}


def peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# ---- the dataset, its extraction -----------------------------------------------------------------
def composed(dataset: str, args, cache_dir) -> object:
    import hopbench.harness.compose  # noqa: F401  (registers the resolvers and schemas the configs use)

    return coh().compose(dataset, "spacy", "hipporag", args.data_dir, str(cache_dir))


def load_corpus_dataset(cfg, limit: int | None):
    """The dataset of `cfg`, its corpus cut to the first `limit` passages (questions unchanged:
    the build reads only the corpus)."""
    from hopbench.harness.compose import build_dataset

    ds = build_dataset(cfg)
    return dataclasses.replace(ds, corpus=list(ds.corpus)[:limit]) if limit else ds


def extraction_log(corpus, cfg) -> tuple[str, str]:
    """(extraction key, log path relative to a cache folder) as `load_or_build` names it."""
    from hopbench.harness.compose import build_encoder
    from hopbench.kg.cache_keys import cache_keys
    from hopbench.kg.extraction_run import make_extractor
    from hopbench.kg.settings import resolve_settings

    settings = resolve_settings(cfg.graph)
    key = cache_keys(corpus, settings, make_extractor(settings), build_encoder(cfg))[0]
    return key, f"kg/extractions/{key}.jsonl"


def child_extract(args) -> int:
    """--child-extract: extract the corpus into the (new) cache folder --child-cache, timed."""
    clock = Clock()
    from hopbench.kg.extraction_run import extract_corpus, make_extractor
    from hopbench.kg.settings import resolve_settings

    cfg = composed(args.child_dataset, args, args.child_cache)
    corpus = list(load_corpus_dataset(cfg, args.limit_passages).corpus)
    setup = clock.done()
    settings = resolve_settings(cfg.graph)
    extractor = make_extractor(settings)
    clock = Clock()
    records = extract_corpus(corpus, extractor, args.child_cache)
    t = clock.done()
    key, rel = extraction_log(corpus, cfg)
    out = {
        "extract": t,
        "setup": setup,
        "passages": len(corpus),
        "records": len(records),
        "triples": sum(len(r.triples) for r in records.values()),
        "key": key,
        "log": rel,
        "spacy": settings["spacy"],
        "peak_rss_mib": peak_rss_mib(),
        "peak_rss_children_mib": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        ),
    }
    Path(args.child_out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


def write_official_inputs(
    work: Path, corpus, records, model_path: str, batch_size: int, max_seq_length
) -> int:
    """The worker's inputs: the OpenIE file and docs.json (as compare.export_inputs
    writes them; no vectors: the worker embeds) and index_config.json. Returns the number of docs."""
    from hopbench.kg.openie_file import openie_document

    doc = openie_document(corpus, records)
    work.mkdir(parents=True, exist_ok=True)
    (work / f"openie_results_ner_{LLM_NAME}.json").write_text(json.dumps(doc), encoding="utf-8")
    docs = [d["passage"] for d in doc["docs"]]
    (work / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    (work / "index_config.json").write_text(
        json.dumps(
            {
                "model_path": model_path,
                "embedding_batch_size": batch_size,
                "max_seq_length": max_seq_length,
            }
        ),
        encoding="utf-8",
    )
    return len(docs)


# ---- hopbench's cold build (child) -------------------------------------------------------------------
def child_hopbench(args) -> int:
    """--child-hopbench: a cold `load_or_build` in the cache folder --child-cache, timed per stage."""
    clock = Clock()
    import hopbench.kg.descriptions  # noqa: F401  (the probes' modules, imported in the timing)
    import hopbench.kg.graph_vectors  # noqa: F401
    import hopbench.kg.hipporag2  # noqa: F401
    from hopbench.harness.compose import build_encoder
    from hopbench.kg import load_or_build
    from hopbench.kg.settings import resolve_settings

    imports = clock.done()
    clock = Clock()
    cfg = composed(args.child_dataset, args, args.child_cache)
    dataset = load_corpus_dataset(cfg, args.limit_passages)
    read_dataset = clock.done()

    clock = Clock()
    encoder = build_encoder(cfg)
    encoder.model  # noqa: B018  (loads the model: timed here, not inside the first embedding stage)
    model_load = clock.done()

    marks, probes = install_cpu_probes()

    clock = Clock()
    kg = load_or_build(
        dataset,
        cfg.graph,
        encoder=encoder,
        cache_dir=args.child_cache,
        descriptions=args.descriptions,
    )
    index = clock.done()
    rss = peak_rss_mib()
    if kg.manifest.get("cache_hit"):
        raise SystemExit("the hopbench build was a cache hit: the cache folder was not new")
    t = dict(kg.manifest["timings"])
    if "assemble" in marks and "describe_and_embed" in marks:
        t["cpu_assemble"] = marks["describe_and_embed"] - marks["assemble"]
    if "describe" in probes:
        t["cpu_describe"] = probes["describe"]["cpu"]
    graph = hopbench_graph_counts(kg)
    out = {
        "imports": imports,
        "read_dataset": read_dataset,
        "model_load": model_load,
        "index": index,
        "total": {k: model_load[k] + index[k] for k in ("wall", "cpu")},
        "timings": t,
        "graph_key": kg.manifest.get("graph_key"),
        "peak_rss_mib": rss,
        "graph": graph,
        "encoder": {
            "model": encoder.model_name,
            "backend": encoder.backend,
            "batch_size": encoder.batch_size,
            "short_text_batch_size": resolve_settings(cfg.graph)["short_text_batch_size"],
            "identity": encoder.identity,
            "stats": encoder.stats,
        },
        "descriptions": args.descriptions,
        "versions": versions(),
        "threads": thread_settings(),
    }
    Path(args.child_out).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


def install_cpu_probes() -> tuple[dict[str, float], dict[str, dict]]:
    """CPU of the two stages the builder times by wall only (assemble, describe): light probes
    on the functions that start them; returns where the marks and the probed stages go."""
    import hopbench.kg.descriptions as descriptions
    import hopbench.kg.graph_vectors as graph_vectors
    import hopbench.kg.hipporag2 as h2

    marks: dict[str, float] = {}
    probes: dict[str, dict] = {}

    def probe(module, attr, enter=None, stage=None):
        fn = getattr(module, attr)

        def wrapped(*a, **k):
            if enter:
                marks[enter] = cpu_seconds()
            c = Clock()
            r = fn(*a, **k)
            if stage:
                probes[stage] = c.done()
            return r

        setattr(module, attr, wrapped)

    probe(h2, "assemble_hipporag2", enter="assemble")  # called as a module attribute
    probe(graph_vectors, "describe_and_embed", enter="describe_and_embed")
    probe(descriptions, "describe_entities", stage="describe")
    return marks, probes


def hopbench_graph_counts(kg) -> dict:
    """hopbench's graph in the official graph's terms (official_index.json's `graph`)."""
    m = kg.manifest["counts"]
    adj = kg.adjacency(relation=2.0, synonym=2.0, context=1.0)
    graph = {
        "vertices": kg.n_nodes,
        "entities": kg.n_entities,
        "passages": kg.n_passages,
        "facts": kg.n_facts,
        "fact_pairs": m.get("fact_pairs"),
        "passage_entity_edges": int(kg.context.nnz),
        "directed_synonym_entries": m.get("directed_synonym_entries"),
        "fact_directions_overwritten": m.get("fact_directions_overwritten"),
        "node_pairs": int(sp.triu(adj, k=1).nnz),
    }
    # HippoRAG's igraph gets one edge per directed entry of node_to_node_stats (self-loops
    # skipped): both directions of a fact pair, each passage-entity pair, and each directed
    # synonym entry that did not overwrite a fact direction (results/official_hipporag.md)
    graph["edges"] = (
        2 * graph["fact_pairs"]
        + graph["passage_entity_edges"]
        + graph["directed_synonym_entries"]
        - graph["fact_directions_overwritten"]
    )
    graph["synonym_new_directed_entries"] = (
        graph["directed_synonym_entries"] - graph["fact_directions_overwritten"]
    )
    return graph


def versions() -> dict:
    return package_versions(
        ("hopbench", "torch", "sentence-transformers", "transformers", "numpy", "scipy", "spacy"),
        python=True,
    )


# ---- running the children ------------------------------------------------------------------------
def child_env(official: bool) -> dict:
    env = dict(os.environ)
    for k in THREAD_VARS:  # exactly what the user had (never a one-thread default of an import)
        env.pop(k, None)
        if ORIGINAL_THREADS.get(k) is not None:
            env[k] = ORIGINAL_THREADS[k]
    env.pop("PYTHONPATH", None)  # both children start as modules from the repository root (cwd)
    env.update(CHILD_ENV)
    return env


def run_child(cmd: list[str], env: dict, log: Path, what: str) -> dict:
    """Run a child; (wall, CPU incl. its children) measured from here."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(log, "w") as fh:
        r = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(
            f"{what} failed; see {log}:\n" + "\n".join(log.read_text().splitlines()[-20:])
        )
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
    }


def self_cmd(args, mode: str, dataset: str, cache: Path, out: Path) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        module_name(__file__),
        mode,
        "--child-dataset",
        dataset,
        "--child-cache",
        str(cache),
        "--child-out",
        str(out),
        "--data-dir",
        args.data_dir,
    ]
    if args.limit_passages:
        cmd += ["--limit-passages", str(args.limit_passages)]
    if args.descriptions:
        cmd.append("--descriptions")
    return cmd


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    return path


def bench_dataset(name: str, args, py: Path) -> dict:
    from hopbench.embed.encoder import resolve_model_path

    tag = name + (f"_first{args.limit_passages}" if args.limit_passages else "")
    work = Path(args.work_dir) / tag
    work.mkdir(parents=True, exist_ok=True)
    res: dict = {
        "dataset": name,
        "limit_passages": args.limit_passages,
        "loadavg_start": loadavg(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    cfg = composed(name, args, args.cache_dir)
    corpus = list(load_corpus_dataset(cfg, args.limit_passages).corpus)
    key, rel = extraction_log(corpus, cfg)
    shared_log = Path(args.cache_dir) / rel
    res.update({"passages": len(corpus), "extraction_key": key})

    # 1. the triples
    res["extraction"], records = extraction_step(tag, name, args, cfg, corpus, work, rel)

    # 2-3. the inputs of both builds, then the alternating cold builds
    inputs = work / "official-inputs"
    model_path = resolve_model_path(cfg.embedding.model)
    write_official_inputs(
        inputs,
        corpus,
        records,
        model_path,
        args.official_batch_size,
        cfg.embedding.get("max_seq_length"),
    )
    res["runs"] = {"hopbench": [], "official": []}
    for rep in range(args.repeats):
        cache = fresh(work / f"hopbench-cache-{rep}")
        (cache / rel).parent.mkdir(parents=True)
        shutil.copyfile(shared_log, cache / rel)
        out = work / f"hopbench-{rep}.json"
        h = cold_build(
            f"[{tag}] hopbench cold build {rep + 1}/{args.repeats}",
            self_cmd(args, "--child-hopbench", name, cache, out),
            child_env(False),
            work / f"hopbench-{rep}.log",
            "the hopbench build",
            out,
        )
        res["runs"]["hopbench"].append(h)
        if not args.keep:
            shutil.rmtree(cache)

        save = fresh(work / f"official-save-{rep}")
        o = cold_build(
            f"[{tag}] official cold build {rep + 1}/{args.repeats}",
            [str(py), "-m", module_name(WORKER), str(inputs), str(save)],
            child_env(True),
            work / f"official-{rep}.log",
            "the official package",
            save / "official_index.json",
        )
        res["runs"]["official"].append(o)
        if not args.keep:
            shutil.rmtree(save)
    res["loadavg_end"] = loadavg()
    return res


def extraction_step(tag: str, name: str, args, cfg, corpus: list, work: Path, rel: Path):
    """The triples of the corpus, read from hopbench's shared extraction log (with
    --cold-extraction, first extracted cold in a child, and the log shared when it was not);
    returns what the step measured and the records."""
    from hopbench.kg.extraction_run import extract_corpus, make_extractor
    from hopbench.kg.settings import resolve_settings

    shared_log = Path(args.cache_dir) / rel
    if args.cold_extraction:
        cache = fresh(work / "extraction-cold")
        out = work / "extraction-cold.json"
        print(f"[{tag}] cold extraction ({len(corpus)} passages) ...", flush=True)
        proc = run_child(
            self_cmd(args, "--child-extract", name, cache, out),
            child_env(False),
            work / "extraction-cold.log",
            "the cold extraction",
        )
        ext = json.loads(out.read_text(encoding="utf-8"))
        ext["process"] = proc
        ext["cold"] = True
        if not shared_log.exists():
            shared_log.parent.mkdir(parents=True, exist_ok=True)
            tmp = shared_log.with_suffix(".jsonl.tmp")
            shutil.copyfile(cache / rel, tmp)
            os.replace(tmp, shared_log)
            ext["copied_to_shared_cache"] = True
        shutil.rmtree(cache)
    else:
        ext = {"cold": False, "shared_log_existed": shared_log.exists()}
    clock = Clock()
    records = extract_corpus(corpus, make_extractor(resolve_settings(cfg.graph)), args.cache_dir)
    ext["read_shared" if args.cold_extraction else "extract"] = clock.done()
    ext.setdefault("triples", sum(len(r.triples) for r in records.values()))
    print(f"[{tag}] extraction: {json.dumps(ext.get('extract'))}", flush=True)
    return ext, records


def cold_build(label: str, cmd: list, env: dict, log: Path, what: str, result: Path) -> dict:
    """One cold build in a child process: its JSON `result`, with the process's own wall and
    CPU seconds and the load average after it."""
    print(f"{label} (load {loadavg()}) ...", flush=True)
    proc = run_child(cmd, env, log, what)
    r = json.loads(result.read_text(encoding="utf-8"))
    r["process"], r["loadavg_after"] = proc, loadavg()
    print(
        f"{label.split(']')[0]}]   total {r['total']['wall']:.1f} s wall, "
        f"{r['total']['cpu']:.1f} s CPU; process {proc['wall']:.1f} s",
        flush=True,
    )
    return r


# ---- the report --------------------------------------------------------------------------------
ROWS = [  # (key, label)
    ("model", "model load / init"),
    ("read", "read triples (extraction log / OpenIE file)"),
    ("embed_passages", "embed passages"),
    ("embed_entities", "embed entities"),
    ("embed_facts", "embed facts"),
    ("store", "store / hash overhead (hash ids, parquet writes)"),
    ("assembly", "graph assembly (triple processing, fact + passage edges)"),
    ("synonyms", "synonym kNN + edges"),
    ("descriptions", "descriptions (hopbench only)"),
    ("augment", "augment (igraph nodes + edges)"),
    ("save", "save"),
    ("other", "other"),
]


def _pair(wall, cpu) -> dict:
    return {"wall": float(wall), "cpu": float(cpu)}


def _sum(*xs) -> dict:
    xs = [x for x in xs if x is not None]
    return _pair(sum(x["wall"] for x in xs), sum(x["cpu"] for x in xs)) if xs else None


def hopbench_rows(h: dict) -> dict:
    t = h["timings"]

    def st(name):
        if name not in t:
            return None
        return _pair(t[name], t.get(f"cpu_{name}", float("nan")))

    rows = {
        "model": h["model_load"],
        "read": st("extract"),
        "embed_passages": st("embed_passages"),
        "embed_entities": st("embed_entities"),
        "embed_facts": st("embed_facts"),
        "store": None,
        "assembly": st("assemble"),
        "synonyms": st("synonyms"),
        "descriptions": _sum(st("describe"), st("embed_descriptions")),
        "augment": None,
        "save": st("save"),
    }
    inside = [v for k, v in rows.items() if v is not None and k != "model"]
    rows["other"] = _pair(
        h["index"]["wall"] - sum(v["wall"] for v in inside),
        h["index"]["cpu"] - sum(v["cpu"] for v in inside),
    )
    rows["total"] = h["total"]
    return rows


def official_rows(o: dict) -> dict:
    s = o["stages"]

    def st(*names):
        return _sum(*(s.get(n) for n in names))

    enc = {ns: s.get(f"encode_{ns}") for ns in ("chunk", "entity", "fact")}
    ins = st("insert_chunk", "insert_entity", "insert_fact")
    encs = _sum(*enc.values())
    store = _pair(ins["wall"] - encs["wall"], ins["cpu"] - encs["cpu"]) if ins and encs else ins
    return {
        "model": o["init"],
        "read": st("load_existing_openie", "reformat_openie_results"),
        "embed_passages": enc["chunk"],
        "embed_entities": enc["entity"],
        "embed_facts": enc["fact"],
        "store": store,
        "assembly": st(
            "text_processing",
            "extract_entity_nodes",
            "flatten_facts",
            "add_fact_edges",
            "add_passage_edges",
        ),
        "synonyms": st("add_synonymy_edges"),
        "descriptions": None,
        "augment": st("augment_graph"),
        "save": st("save_igraph"),
        "other": o["other"],
        "total": o["total"],
    }


def median_rows(rows: list[dict]) -> dict:
    out = {}
    for key in rows[0]:
        vals = [r[key] for r in rows if r.get(key) is not None]
        out[key] = (
            _pair(
                statistics.median(v["wall"] for v in vals),
                statistics.median(v["cpu"] for v in vals),
            )
            if vals
            else None
        )
    return out


def _median_part(runs: list[dict], key: str) -> dict | None:
    """Median wall and CPU seconds of one part (`imports`, `process`) over the runs."""
    return median_rows([{"x": r[key]} for r in runs])["x"]


def _med(runs: list[dict], *path) -> float:
    vals = []
    for r in runs:
        for p in path:
            r = r[p]
        vals.append(r)
    return statistics.median(vals)


def _s(x: dict | None, k: str) -> str:
    if x is None:
        return "–"
    v = x[k]
    return "–" if v != v else f"{0.0 if abs(v) < 0.005 else v:,.2f}"


def _ratio(o: dict | None, h: dict | None, k: str) -> str:
    """official / hopbench, when both are at least 0.05 s (smaller ones are clock noise)."""
    if not o or not h or not (h[k] >= 0.05 and o[k] >= 0.05):
        return ""
    return f"{o[k] / h[k]:.2f}"


COUNTS = [
    ("vertices", "vertices"),
    ("entities", "entity nodes"),
    ("passages", "passage nodes"),
    ("facts", "facts (embedded)"),
    ("fact_pairs", "fact pairs"),
    ("passage_entity_edges", "passage-entity edges"),
    ("synonym_new_directed_entries", "directed synonym entries not on a fact direction"),
    ("edges", "igraph edges (one per directed entry; hopbench: the same count from its matrices)"),
    ("node_pairs", "distinct node pairs (PPR adjacency / simplified igraph)"),
]
SAME_KEYS = (
    "vertices",
    "entities",
    "passages",
    "facts",
    "fact_pairs",
    "passage_entity_edges",
    "edges",
    "node_pairs",
)


def summarize(d: dict) -> dict:
    hb = [hopbench_rows(h) for h in d["runs"]["hopbench"]]
    off = [official_rows(o) for o in d["runs"]["official"]]
    gh, go = d["runs"]["hopbench"][0]["graph"], d["runs"]["official"][0]["graph"]
    same = all(gh.get(k) == go.get(k) for k in SAME_KEYS)
    consistent = all(r["graph"] == gh for r in d["runs"]["hopbench"]) and all(
        r["graph"] == go for r in d["runs"]["official"]
    )
    return {
        "hopbench": median_rows(hb),
        "official": median_rows(off),
        "same_graph": same,
        "same_across_repeats": consistent,
    }


def dataset_section(d) -> list[str]:
    """The markdown lines of one `d` of markdown()."""
    L: list[str] = []
    s = summarize(d)
    hb, off = s["hopbench"], s["official"]
    runs_h, runs_o = d["runs"]["hopbench"], d["runs"]["official"]
    ext = d["extraction"]
    title = f"## {d['dataset']}" + (
        f" (first {d['limit_passages']} passages)" if d["limit_passages"] else ""
    )
    L += [
        title,
        "",
        f"{d['passages']:,} passages, {ext.get('triples', 0):,} triples; load average "
        f"{d['loadavg_start']} at the start, {d['loadavg_end']} at the end.",
        "",
        "| stage | hopbench wall s | hopbench CPU s | official wall s | official CPU s | "
        "official/hopbench wall | official/hopbench CPU |",
        "|:--|--:|--:|--:|--:|--:|--:|",
    ]
    if ext.get("cold"):
        e = ext["extract"]
        L.append(
            f"| *extraction, cold (spaCy, n_process={ext['spacy']['n_process']}; apart)* | "
            f"*{e['wall']:,.2f}* | *{e['cpu']:,.2f}* | *(input: OpenIE file)* | | | |"
        )
    imp_h, imp_o = _median_part(runs_h, "imports"), _median_part(runs_o, "imports")
    L.append(
        f"| *imports (apart)* | *{_s(imp_h, 'wall')}* | *{_s(imp_h, 'cpu')}* | *{_s(imp_o, 'wall')}* | "
        f"*{_s(imp_o, 'cpu')}* | | |"
    )
    for key, label in ROWS:
        a, b = hb.get(key), off.get(key)
        L.append(
            f"| {label} | {_s(a, 'wall')} | {_s(a, 'cpu')} | {_s(b, 'wall')} | {_s(b, 'cpu')} | "
            f"{_ratio(b, a, 'wall')} | {_ratio(b, a, 'cpu')} |"
        )
    a, b = hb["total"], off["total"]
    L.append(
        f"| **TOTAL** | **{_s(a, 'wall')}** | **{_s(a, 'cpu')}** | **{_s(b, 'wall')}** | "
        f"**{_s(b, 'cpu')}** | **{_ratio(b, a, 'wall')}** | **{_ratio(b, a, 'cpu')}** |"
    )
    ph, po = _median_part(runs_h, "process"), _median_part(runs_o, "process")
    L.append(
        f"| whole process (start-up to exit, measured outside) | {_s(ph, 'wall')} | {_s(ph, 'cpu')} | "
        f"{_s(po, 'wall')} | {_s(po, 'cpu')} | {_ratio(po, ph, 'wall')} | {_ratio(po, ph, 'cpu')} |"
    )
    rh, ro = _med(runs_h, "peak_rss_mib"), _med(runs_o, "peak_rss_mib")
    L.append(f"| peak RSS (MiB) | {rh:,.0f} | | {ro:,.0f} | | {ro / rh:.2f} | |")
    knn = [r["stages"].get("retrieve_knn") for r in runs_o]
    enc_h = runs_h[0]["encoder"]["stats"]
    L += [
        "",
        f"Official details (median): `retrieve_knn` {statistics.median(k['wall'] for k in knn if k):.2f} s "
        f"wall of the synonym stage; `augment_graph` prints `get_graph_info()` "
        f"({statistics.median(r['stages'].get('get_graph_info', {}).get('wall', 0) for r in runs_o):.2f} s). "
        f"hopbench's encoder encoded {enc_h['texts_encoded']:,} texts "
        f"(official: {sum(runs_o[0]['graph']['embedded'].values()):,}).",
        "",
    ]
    if len(runs_h) > 1:
        L += [
            "TOTAL per repeat (wall s): hopbench "
            + ", ".join(f"{r['total']['wall']:.1f}" for r in runs_h)
            + "; official "
            + ", ".join(f"{r['total']['wall']:.1f}" for r in runs_o)
            + ".",
            "",
        ]
    L += graph_table(runs_h[0]["graph"], runs_o[0]["graph"], s)
    return L


def graph_table(gh: dict, go: dict, s: dict) -> list[str]:
    """The two graphs' counts side by side, and whether they are the same graph."""
    L = ["| graph | hopbench | official |", "|:--|--:|--:|"]
    for key, label in COUNTS:
        L.append(f"| {label} | {_n(gh.get(key))} | {_n(go.get(key))} |")
    L += [
        "",
        f"Same graph (vertices, entity and passage nodes, facts, fact pairs, passage-entity edges, igraph "
        f"edges, node pairs): **{'yes' if s['same_graph'] else 'NO'}**"
        + ("" if s["same_across_repeats"] else " (counts differ between repeats!)")
        + ".",
        "",
    ]
    return L


def markdown(res: dict) -> str:
    L = [
        "# Cold index build: hopbench against the official HippoRAG 2 package (issue #31)",
        "",
        f"Made by `benchmarks/parity/hipporag/index_build.py` ({res['started']} to {res['finished']}; load average "
        f"{res['loadavg_start']} at the start, {res['loadavg_end']} at the end; {res['machine']}). "
        "Same corpus, same triples (hopbench's spaCy extraction, given to the official package as its OpenIE "
        "file), all-MiniLM-L6-v2 on the CPU on both sides, each build cold (new cache / save folder) in a "
        "process of its own, hopbench and official alternating; the machine's default threads on both sides "
        "(no OMP/MKL/OPENBLAS_NUM_THREADS set), PYTHONHASHSEED=0.",
        "",
    ]
    o0 = res["datasets"][0]["runs"]["official"][0]
    h0 = res["datasets"][0]["runs"]["hopbench"][0]
    L += [
        f"- official: `hipporag=={o0['versions'].get('hipporag')}` ("
        + ", ".join(f"{k} {v}" for k, v in o0["versions"].items() if k != "hipporag")
        + "), "
        f"`HippoRAG.__init__` + `HippoRAG.index` on a new save_dir (force_index_from_scratch, save_openie=False), "
        f"embedding batch size {o0['embedding_batch_size']} (the package default is {OFFICIAL_BATCH}); threads "
        f"{o0['threads']}.",
        f"- hopbench: `load_or_build` as `retriever=hipporag graph=spacy` composes it (graph.construction="
        "hipporag2; description vectors "
        f"{'embedded' if h0['descriptions'] else 'deferred, as the hipporag retriever reads none'}), "
        f"encoder `{h0['encoder']['identity']}`, backend {h0['encoder']['backend']}, batch size "
        f"{h0['encoder']['batch_size']} (passages; names and facts {h0['encoder'].get('short_text_batch_size', '–')}, "
        f"batches of equal token counts) ({', '.join(f'{k} {v}' for k, v in h0['versions'].items())}); "
        f"threads {h0['threads']}.",
        "- Seconds: wall (time.perf_counter) and CPU (os.times user+system, children included); medians over "
        f"{res['repeats']} repeat(s). TOTAL = model load / init + the index build (`load_or_build` / "
        '`index()`); imports, extraction and the whole process are outside it. "other": TOTAL\'s index part '
        "minus the listed stages (hopbench: cache keys, lock, the KnowledgeGraph object and weight split; "
        "official: logging, node_to_node_stats setup). hopbench embeds passages in a thread while it reads the "
        "extraction log, so those two stages overlap (their CPU figures are the process's over each window).",
        "- Imports: `import hipporag` imports torch and transformers; hopbench imports them when it loads the "
        'model, so its "model load" holds them and its "imports" row does not. The hopbench process also '
        'reads the whole dataset (questions and corpus, "read_dataset" in the .json), which the official one '
        'gets as docs.json; both are in "whole process" and in peak RSS.',
        "",
    ]
    for d in res["datasets"]:
        L += dataset_section(d)
    return "\n".join(L)


def _n(v) -> str:
    return "–" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs{', ' + model if model else ''}, shared with other jobs"


# ---- main --------------------------------------------------------------------------------------
ORIGINAL_THREADS = {v: os.environ.get(v) for v in THREAD_VARS}


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(
        description="Cold index build of the same corpus and triples by hopbench and by the official HippoRAG 2 "
        "package (hipporag==2.0.0a4, own venv): wall and CPU seconds per stage, peak RSS, graph "
        "counts. Writes <out>.json and <out>.md.",
        epilog="Example (small test): python -m benchmarks.parity.hipporag.index_build "
        "--datasets musique --limit-passages 150 --out runs/index_test",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    ap.add_argument(
        "--datasets", default="musique,2wikimultihopqa", help="comma-separated dataset configs"
    )
    ap.add_argument(
        "--repeats", type=int, default=1, help="cold builds per side, alternating hopbench/official"
    )
    ap.add_argument(
        "--limit-passages",
        type=int,
        default=None,
        help="only the corpus's first N passages (tests)",
    )
    ap.add_argument(
        "--venv",
        default=DEFAULT_VENV,
        help="the official package's virtual environment (made once)",
    )
    common_args.add_data_and_cache_args(ap)
    ap.add_argument(
        "--work-dir",
        default=None,
        help="inputs, logs and build folders (default <cache-dir>/bench-index; corpus text, so "
        "never the repository)",
    )
    ap.add_argument(
        "--cold-extraction",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time the spaCy extraction in a child on a new cache folder (else read/extract with "
        "the shared cache)",
    )
    ap.add_argument(
        "--descriptions",
        action="store_true",
        help="hopbench also embeds the entity descriptions (what retrievers that read them build)",
    )
    ap.add_argument(
        "--official-batch-size",
        type=int,
        default=OFFICIAL_BATCH,
        help="the official BaseConfig.embedding_batch_size (its default is 16)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the build folders")
    ap.add_argument(
        "--out",
        default=str(results_dir(__file__) / "index_official"),
        help="output path without suffix",
    )
    ap.add_argument("--render-only", action="store_true", help="rewrite <out>.md from <out>.json")
    for hidden in ("--child-hopbench", "--child-extract"):
        ap.add_argument(hidden, action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--child-dataset", "--child-cache", "--child-out"):
        ap.add_argument(hidden, help=argparse.SUPPRESS)
    return ap


def main() -> int:
    ap = parser()
    args = ap.parse_args()
    if args.child_hopbench:
        return child_hopbench(args)
    if args.child_extract:
        return child_extract(args)
    out = Path(args.out)
    if args.render_only:
        render_only(out, markdown)
        return 0
    args.work_dir = args.work_dir or str(Path(args.cache_dir) / "bench-index")
    py = coh().ensure_venv(Path(args.venv))
    res = {
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "loadavg_start": loadavg(),
        "machine": machine(),
        "repeats": args.repeats,
        "args": {k: v for k, v in vars(args).items() if not k.startswith("child")},
        "thread_env": ORIGINAL_THREADS,
        "child_env": CHILD_ENV,
        "datasets": [],
    }
    for name in args.datasets.split(","):
        res["datasets"].append(bench_dataset(name, args, py))
    res["loadavg_end"] = loadavg()
    res["finished"] = time.strftime("%Y-%m-%d %H:%M")
    write_json_and_md(out, res, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
