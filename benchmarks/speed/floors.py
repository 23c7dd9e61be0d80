"""Floors measured on the machine that runs the benchmark (issue #59): how far PPR is from its
memory traffic and the cold build's encoder from its arithmetic, both against ceilings measured
in the same run.

    nice -n 19 python -m benchmarks.speed.floors [--dataset 2wikimultihopqa] [--questions 200]

Every time is process CPU-seconds by default (--clock): on a shared machine the time slices
other jobs take do not count, and ceilings and achieved are timed the same way.
1. Ceilings: a STREAM-style copy (numpy, best of N; bytes = read + write, as STREAM counts)
   of a large array (DRAM) and of one the size of the PPR working set (cache), and the
   float32 matmul peak (numpy and torch, n=2048, best of N; 2n^3 FLOPs).
2. PPR: HippoRAG 2's reset vectors on the real graph (retriever=hipporag, graph=spacy, filter
   off), solved by the real kernel (kernels/ppr.py, Chebyshev, tol 1e-10). Bytes moved per
   iteration: the CSR matrix (data + indices + indptr) plus the n-vectors each step reads and
   writes as the code does it (`CHEBYSHEV_VECTOR_PASSES`), and the minimum any mat-vec needs
   (matrix + one vector in, one out). Floor time = bytes / bandwidth; ratio = achieved / floor.
3. Cold build encoder: FLOPs of all-MiniLM-L6-v2 from its config.json (per layer and token:
   QKV and output projections 8h^2, feed-forward 4hi, attention 4Lh at the real sequence
   length L), over the dataset's passages as the build encodes them, against the matmul peak;
   achieved = the build's encoder (torch, its batches, no cache) on the same texts.
Results: benchmarks/speed/results/floors.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common.args import add_data_and_cache_args, add_out_dir_arg
from benchmarks.common.timing import loadavg
from benchmarks.speed.ppr_stop import hipporag_reset, prepared_hipporag
from hopbench.core.atomic import write_json, write_text
from hopbench.retrieve.kernels.ppr import personalized_pagerank
from hopbench.retrieve.kernels.ppr_stop import personalized_pagerank_stopped

# n-vector passes (8n bytes each) per step of ppr._chebyshev: u += step (3), kd = B step
# (step in, kd out: 2), kd *= d (2), r -= step (3), r += kd (3), step *= c (2),
# tmp = c r (2), step += tmp (3); every 4th step the residual check, s r -> tmp, |tmp|, sum (6)
CHEBYSHEV_VECTOR_PASSES = 20 + 6 / 4
CLOCK_WORDS = {
    "cpu": "process CPU-seconds (summed over threads: the 2-thread matmul and encoder count both "
    "cores; copy and PPR run on one), so time slices lost to other jobs do not count",
    "wall": "elapsed wall-clock seconds",
}
MIN_VECTOR_PASSES = 2  # any y = B x: x read once, y written once


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = {"now": time.process_time}  # set by --clock; every figure here is timed by it


def elapsed(fn) -> float:
    now = CLOCK["now"]
    t = now()
    fn()
    return now() - t


def best_seconds(fn, repeats: int) -> float:
    return min(elapsed(fn) for _ in range(repeats))


def copy_bandwidth(n_bytes: int, repeats: int) -> dict:
    """STREAM 'copy' with numpy: bytes read + bytes written over the best time."""
    src = np.ones(max(n_bytes // 8, 1), dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # touch the pages first
    s = best_seconds(lambda: np.copyto(dst, src), repeats)
    return {"array_mb": src.nbytes / 2**20, "seconds": s, "gb_per_s": 2 * src.nbytes / s / 1e9}


def matmul_peak(n: int, repeats: int) -> dict:
    """float32 n x n matmul GFLOP/s, numpy and torch (the encoder's own library)."""
    import torch

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    flops = 2.0 * n**3
    out = {"n": n, "numpy_gflops": flops / best_seconds(lambda: a @ b, repeats) / 1e9}
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    with torch.inference_mode():
        out["torch_gflops"] = flops / best_seconds(lambda: ta @ tb, repeats) / 1e9
    out["torch_threads"] = torch.get_num_threads()
    out["peak_gflops"] = max(out["numpy_gflops"], out["torch_gflops"])
    return out


def ppr_bytes(graph) -> dict:
    """Bytes one Chebyshev step moves: the matrix B and the n-vectors (float64)."""
    b = graph.scaled
    matrix = b.data.nbytes + b.indices.nbytes + b.indptr.nbytes
    vec = 8 * graph.n
    return {
        "nodes": graph.n,
        "nnz": int(b.nnz),
        "matrix_bytes": int(matrix),
        "vector_bytes": vec,
        "bytes_per_iter_code": int(matrix + CHEBYSHEV_VECTOR_PASSES * vec),
        "bytes_per_iter_min": int(matrix + MIN_VECTOR_PASSES * vec),
    }


def ppr_achieved(retriever, questions, repeats: int) -> dict:
    """Seconds per Chebyshev step of the real kernel on HippoRAG 2's resets (best of repeats
    over the whole question set, divided by the steps it took), and of the bare mat-vec."""
    resets = [r for r, _, _ in (hipporag_reset(retriever, q) for q in questions) if r is not None]
    g, d, tol = retriever.ppr, retriever.damping, retriever.ppr_tol
    iters = sum(personalized_pagerank_stopped(g, r, damping=d, tol=tol).iterations for r in resets)
    solve = best_seconds(
        lambda: [personalized_pagerank(g, r, damping=d, tol=tol) for r in resets], repeats
    )
    x = np.random.default_rng(0).random(g.n)
    matvecs = 200
    spmv = best_seconds(lambda: [g.scaled @ x for _ in range(matvecs)], repeats)
    return {
        "solves": len(resets),
        "iterations": iters,
        "s_per_iter": solve / iters,
        "s_per_spmv": spmv / matvecs,
    }


def encoder_flops(config: dict, lengths: np.ndarray) -> float:
    """Forward FLOPs (2 per multiply-add) of a BERT encoder over sequences of these lengths."""
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    lengths = np.asarray(lengths, dtype=np.float64)
    per_layer = lengths * (8 * h * h + 4 * h * i) + 4 * h * lengths**2
    return float(layers * per_layer.sum())


def encoder_floor(data, args, peak_gflops: float) -> dict:
    """The build's passage encoding: FLOPs (real and padded lengths) against the timed encoder."""
    from hopbench.embed import Encoder
    from hopbench.embed.batching import length_sorted_batches, token_lengths
    from hopbench.embed.encoder import resolve_model_path
    from hopbench.kg.text import clean_text

    texts = [clean_text(p.content) for p in data.corpus][: args.passages or None]
    enc = Encoder(cache_dir=None, show_progress=False)  # no cache: every text is encoded
    model = enc.model
    config = json.loads((Path(resolve_model_path(enc.model_name)) / "config.json").read_text())
    lengths = token_lengths(model.tokenizer, texts, int(model.max_seq_length))
    batches = list(length_sorted_batches(lengths, enc.batch_size))
    padded = np.concatenate([np.full(len(b), lengths[b].max()) for b in batches])
    enc.encode(texts[: enc.batch_size])  # warm-up (threads, allocator)
    seconds = elapsed(lambda: enc.encode(texts))
    flops, flops_padded = encoder_flops(config, lengths), encoder_flops(config, padded)
    return {
        "texts": len(texts),
        "tokens": int(lengths.sum()),
        "tokens_padded": int(padded.sum()),
        "config": {k: config[k] for k in ("hidden_size", "intermediate_size", "num_hidden_layers")},
        "flops_per_token": flops / lengths.sum(),
        "gflops": flops / 1e9,
        "gflops_padded": flops_padded / 1e9,
        "seconds": seconds,
        "achieved_gflops": flops / seconds / 1e9,
        "floor_s": flops / (peak_gflops * 1e9),
        "ratio": seconds / (flops / (peak_gflops * 1e9)),
        "ratio_padded_floor": seconds / (flops_padded / (peak_gflops * 1e9)),
    }


def measure(args) -> dict:
    out = {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "nice -n 19 python -m benchmarks.speed.floors " + " ".join(sys.argv[1:]),
        "dataset": args.dataset,
        "retriever": args.retriever,
        "load_before": loadavg(),
        "cores": os.cpu_count(),
        "clock": args.clock,
    }
    out["copy_dram"] = copy_bandwidth(args.copy_mb * 2**20, args.repeats)
    out["matmul"] = matmul_peak(args.matmul_n, args.repeats)
    cfg, data, retriever = prepared_hipporag(
        args.dataset, args.data_dir, args.cache_dir, args.retriever
    )
    ppr = ppr_bytes(retriever.ppr)
    out["copy_working_set"] = copy_bandwidth(ppr["bytes_per_iter_min"] // 2, args.repeats * 5)
    ppr.update(ppr_achieved(retriever, data.questions[: args.questions], args.ppr_repeats))
    for name in ("copy_dram", "copy_working_set"):
        bw = out[name]["gb_per_s"] * 1e9
        ppr[f"floor_s_per_iter_{name}"] = ppr["bytes_per_iter_code"] / bw
        ppr[f"ratio_{name}"] = ppr["s_per_iter"] / (ppr["bytes_per_iter_code"] / bw)
        ppr[f"ratio_min_bytes_{name}"] = ppr["s_per_iter"] / (ppr["bytes_per_iter_min"] / bw)
        ppr[f"spmv_ratio_{name}"] = ppr["s_per_spmv"] / (ppr["bytes_per_iter_min"] / bw)
    out["ppr"] = ppr
    out["load_mid"] = loadavg()
    out["encoder"] = encoder_floor(data, args, out["matmul"]["peak_gflops"])
    out["load_after"] = loadavg()
    return out


def render(r: dict) -> str:
    p, e, m = r["ppr"], r["encoder"], r["matmul"]
    dram, ws = r["copy_dram"], r["copy_working_set"]
    return "\n".join(
        [
            f"# Floors on this machine ({r['dataset']}, {r.get('retriever', 'hipporag')}, "
            f"{r['cores']} cores)",
            "",
            f"`{r['command'].strip()}`, started {r['started']}; load average before "
            f"{r['load_before']}, after PPR {r['load_mid']}, at the end {r['load_after']}. "
            f"Every time here is {CLOCK_WORDS[r['clock']]}, ceilings and achieved alike.",
            "",
            "## Ceilings measured in this run",
            "",
            f"- STREAM-style copy, {dram['array_mb']:.0f} MiB (DRAM): **{dram['gb_per_s']:.2f} GB/s**",
            f"- the same, {ws['array_mb']:.1f} MiB (the size of PPR's minimum traffic per step, "
            f"in cache): **{ws['gb_per_s']:.2f} GB/s**",
            f"- float32 matmul n={m['n']}: numpy {m['numpy_gflops']:.1f} GFLOP/s, torch "
            f"{m['torch_gflops']:.1f} GFLOP/s ({m['torch_threads']} threads): peak "
            f"**{m['peak_gflops']:.1f} GFLOP/s**",
            "",
            "## PPR (HippoRAG 2 resets, Chebyshev, tol 1e-10)",
            "",
            f"{p['nodes']:,} nodes, {p['nnz']:,} stored entries; matrix {p['matrix_bytes'] / 2**20:.2f}"
            f" MiB, one vector {p['vector_bytes'] / 2**10:.0f} KiB. Bytes per step: "
            f"{p['bytes_per_iter_code'] / 2**20:.2f} MiB as the code moves them "
            f"({CHEBYSHEV_VECTOR_PASSES} vector passes), {p['bytes_per_iter_min'] / 2**20:.2f} MiB "
            f"at least. {p['solves']} solves, {p['iterations']} steps.",
            "",
            "| | seconds per step | floor (DRAM copy) | ratio | floor (in-cache copy) | ratio |",
            "|---|---|---|---|---|---|",
            f"| solve, code's bytes | {p['s_per_iter'] * 1e3:.3f} ms | "
            f"{p['floor_s_per_iter_copy_dram'] * 1e3:.3f} ms | **{p['ratio_copy_dram']:.2f}x** | "
            f"{p['floor_s_per_iter_copy_working_set'] * 1e3:.3f} ms | "
            f"**{p['ratio_copy_working_set']:.2f}x** |",
            f"| solve, minimum bytes | | | {p['ratio_min_bytes_copy_dram']:.2f}x | | "
            f"{p['ratio_min_bytes_copy_working_set']:.2f}x |",
            f"| bare mat-vec B x, minimum bytes | {p['s_per_spmv'] * 1e3:.3f} ms | | "
            f"{p['spmv_ratio_copy_dram']:.2f}x | | {p['spmv_ratio_copy_working_set']:.2f}x |",
            "",
            "## Cold build: passage encoding (all-MiniLM-L6-v2, torch, batch 64)",
            "",
            f"{e['texts']:,} passages, {e['tokens']:,} tokens ({e['tokens_padded']:,} with the "
            f"batches' padding); config {e['config']}: {e['flops_per_token'] / 1e6:.1f} MFLOP per "
            f"token at the real lengths, {e['gflops']:.0f} GFLOP in all ({e['gflops_padded']:.0f} "
            "padded).",
            "",
            f"Encoded in {e['seconds']:.1f} s = {e['achieved_gflops']:.1f} GFLOP/s against a "
            f"floor of {e['floor_s']:.1f} s at the matmul peak: ratio **{e['ratio']:.2f}x** "
            f"({e['ratio_padded_floor']:.2f}x counting padded positions as work).",
            "",
        ]
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="2wikimultihopqa")
    ap.add_argument(
        "--retriever",
        default="hipporag",
        help="hipporag (HippoRAG 2's graph construction) or hipporag_hb (hopbench's, the graph"
        " spreading activation uses): the same PPR kernel on either graph",
    )
    ap.add_argument("--questions", type=int, default=200, help="PPR resets to time")
    ap.add_argument("--passages", type=int, default=0, help="passages to encode (0: all)")
    ap.add_argument("--copy-mb", type=int, default=512, help="DRAM copy array size (MiB)")
    ap.add_argument("--matmul-n", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--ppr-repeats", type=int, default=3)
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: process CPU-seconds (all threads), robust to a shared machine's time slicing;"
        " wall: elapsed seconds",
    )
    add_data_and_cache_args(ap)
    add_out_dir_arg(ap, __file__)
    args = ap.parse_args(argv)
    CLOCK["now"] = CLOCKS[args.clock]
    result = measure(args)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    write_json(args.out_dir / "floors.json", result)
    md = render(result)
    write_text(args.out_dir / "floors.md", md)
    print(md)


if __name__ == "__main__":
    main()
