"""Where hopbench's spreading activation and the authors' differ by more than float32, who holds
the exact value? (issue #27: the ungated 2Wiki questions of compare.py.)

    HOPBENCH_DATA_DIR=../shared/datasets nice python -m benchmarks.parity.qasa.exact_ties \\
        --official ~/.cache/hopbench/official-qasa/2wikimultihopqa/official_wide.json \\
        --dataset 2wiki --depth 3 --no-gate [--questions ID,ID] [--out benchmarks/parity/qasa/results/sa_exact_ties]

For each question (default: every question whose largest activation difference exceeds
--min-diff), the propagation is recomputed in exact rational arithmetic (`fractions.Fraction`)
from the same float64 seeds, decay, threshold and (gated) gate values hopbench uses, with the
rule read exactly: a_v < a_u with no tie margin. Every entity whose two float activations differ
by more than --min-diff is then listed with its exact value and which side holds it. When the
exact values of two nodes are equal, their float sums can still differ in the last bit, and a
plain `<` then lets one feed the other: the authors' code does that, hopbench's kernel reads
`<` with a 1e-12 relative tie margin (kernels/spread.py, TIE_FACTOR) and keeps exact ties.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

from benchmarks.common.paths import command_line
from benchmarks.parity.qasa.compare import hopbench_activations
from benchmarks.speed.neo4j_sa import load


def exact_spread(
    adj, seeds, seed_act, gate, *, decay: float, steps: int, threshold: float
) -> dict[int, Fraction]:
    """The QASA step of kernels/spread.py in exact rationals (no tie margin): the test of which
    float sum rounded a tie apart. gate: None or a callable node -> float."""
    d, th = Fraction(decay), Fraction(threshold)
    act: dict[int, Fraction] = {int(i): Fraction(float(a)) for i, a in zip(seeds, seed_act)}
    indptr, indices, data = adj.indptr, adj.indices, adj.data
    for _ in range(steps):
        incoming: dict[int, Fraction] = {}
        for u, au in act.items():
            if au <= th:
                continue
            for p in range(indptr[u], indptr[u + 1]):
                v = int(indices[p])
                if v in act and not act[v] < au:
                    continue
                incoming[v] = incoming.get(v, Fraction(0)) + Fraction(float(data[p])) * au
        new = dict(act)
        for v, x in incoming.items():
            x = x * d
            if gate is not None:
                x = x * Fraction(gate(v))
            if x > th:
                new[v] = act.get(v, Fraction(0)) + x
        act = new
    return act


def check_question(
    qid: str, official: dict, hop: dict, seeds_idx, seeds_act, adj, gate, names, args
) -> dict:
    exact = exact_spread(
        adj,
        seeds_idx,
        seeds_act,
        gate,
        decay=args.decay,
        steps=args.depth,
        threshold=args.threshold,
    )
    exact_by_name = {names[i]: v for i, v in exact.items()}
    rows = []
    for name, o in official.items():
        h = hop.get(name)
        if h is None or abs(o - h) <= args.min_diff:
            continue
        e = float(exact_by_name[name]) if name in exact_by_name else None
        holder = (
            "hopbench"
            if e is not None and abs(h - e) <= 1e-9 * max(1.0, abs(e))
            else "authors"
            if e is not None and abs(o - e) <= 1e-6 * max(1.0, abs(e))
            else "neither"
        )
        v = names.index(name)
        # neighbours holding exactly the same value: the tie a float sum can split (then, with a
        # plain `<`, the one rounded higher feeds this one decay x its activation)
        ties = [
            names[int(u)]
            for u in adj.indices[adj.indptr[v] : adj.indptr[v + 1]]
            if int(u) != v and exact.get(int(u)) == exact.get(v)
        ]
        rows.append(
            {
                "entity": name,
                "authors": o,
                "hopbench": h,
                "exact": e,
                "holds_exact": holder,
                "exact_tie_neighbours": ties,
                "excess_over_decay_times_exact": (o - h) / (args.decay * e) if e else None,
            }
        )
    worst = max(
        (abs(float(exact_by_name[n]) - hop[n]) for n in hop if n in exact_by_name), default=0.0
    )
    return {
        "id": qid,
        "same_keys_exact_hopbench": set(exact_by_name) == set(hop),
        "max_abs_hopbench_vs_exact": worst,
        "differing": rows,
    }


def parser() -> argparse.ArgumentParser:
    """The command line (its own function so that main() reads as the steps)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--official",
        type=Path,
        required=True,
        help="the worker output of compare.py (official_<seed search>.json, full maps kept)",
    )
    ap.add_argument(
        "--dataset",
        default="2wiki",
        help="musique | 2wiki (as compare.py names them)",
    )
    ap.add_argument("--limit-2wiki", type=int, default=200)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--no-gate", action="store_true")
    ap.add_argument("--decay", type=float, default=0.7)
    ap.add_argument("--threshold", type=float, default=0.01)
    ap.add_argument(
        "--questions", default=None, help="comma-separated ids (default: those that differ)"
    )
    ap.add_argument(
        "--min-diff", type=float, default=1e-5, help="larger than float32's rounding of the gate"
    )
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ.get("HOPBENCH_CACHE_DIR", Path.home() / ".cache" / "hopbench")),
    )
    ap.add_argument("--out", default=None, help="write <out>.json and <out>.md")
    return ap


def print_question(res: dict) -> None:
    """One question's differing entities, and which side holds the exact value."""
    held = [x["holds_exact"] for x in res["differing"]]
    print(
        f"{res['id']}: {len(held)} entities differ; exact value held by hopbench {held.count('hopbench')}, "
        f"authors {held.count('authors')}, neither {held.count('neither')}; hopbench vs exact max "
        f"{res['max_abs_hopbench_vs_exact']:.1e}",
        flush=True,
    )
    for x in res["differing"]:
        print(
            f"    {x['entity']!r}: authors {x['authors']:.6f} hopbench {x['hopbench']:.6f} "
            f"exact {x['exact']:.6f} -> {x['holds_exact']}; tied neighbours {x['exact_tie_neighbours']}, "
            f"(authors - hopbench) / (decay x exact) = {x['excess_over_decay_times_exact']:.12f}"
        )


def markdown(out: dict) -> str:
    """The table of OUT.md, from what OUT.json holds."""
    gate = "on" if out["gate"] else "off"
    md = [
        f"# Exact-arithmetic check: {out['dataset']}, depth {out['depth']}, gate {gate}",
        "",
        f"`{out['command']}`",
        "",
        "| question | entity | authors | hopbench | exact | holds the exact value | neighbours "
        "tied exactly | (authors − hopbench) / (δ · exact) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for res in out["questions"]:
        for x in res["differing"]:
            md.append(
                f"| {res['id']} | {x['entity']} | {x['authors']:.6f} | {x['hopbench']:.6f} | "
                f"{x['exact']:.6f} | {x['holds_exact']} | {', '.join(x['exact_tie_neighbours'])} | "
                f"{x['excess_over_decay_times_exact']:.12f} |"
            )
    md += [
        "",
        "hopbench vs exact, largest difference over every activated entity: "
        + ", ".join(
            f"{res['id']} {res['max_abs_hopbench_vs_exact']:.1e}" for res in out["questions"]
        ),
        "",
    ]
    return "\n".join(md)


def main() -> int:
    ap = parser()
    args = ap.parse_args()

    from hopbench.embed import Encoder
    from hopbench.kg import load_or_build
    from hopbench.retrieve.base import Services
    from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever
    from hopbench.retrieve.question import question_mentions

    gate_on = not args.no_gate
    run = next(
        (
            r
            for r in json.loads(args.official.read_text())["runs"]
            if r["depth"] == args.depth and r["gate"] == gate_on
        ),
        None,
    )
    if run is None:
        print(f"{args.official}: no run at depth {args.depth} with gate {gate_on}", file=sys.stderr)
        return 2
    rows = {r["id"]: r for r in run["rows"] if "activation" in r}
    ds = load(args.dataset, args.limit_2wiki)
    encoder = Encoder(cache_dir=args.cache_dir, show_progress=False)
    kg = load_or_build(ds, None, encoder=encoder, cache_dir=args.cache_dir)
    services = Services(dataset=ds, encoder=encoder)
    services.encode_questions(ds.questions)
    mentions = {q.id: question_mentions(q.text) for q in ds.questions}
    hop, adj = hopbench_activations(kg, services, list(ds.questions), mentions, gate_on, args.depth)
    if args.questions:
        ids = args.questions.split(",")
    else:
        ids = [
            qid
            for qid, r in rows.items()
            if qid in hop
            and any(
                abs(v - hop[qid][0].get(k, v)) > args.min_diff for k, v in r["activation"].items()
            )
        ]
    r = SpreadingActivationRetriever(gate=gate_on, depth=args.depth, top_paths=0)
    r.prepare(kg, services)
    by_id = {q.id: q for q in ds.questions}
    results = []
    for qid in ids:
        q = by_id[qid]
        _, idx, act, _ = r.seeds(q, mentions[qid])
        gate = None
        if gate_on:
            lg = r.lazy_gate(services.query_embedding(q))
            gate = lambda v, lg=lg: float(lg.take(np.array([v]))[0])  # noqa: E731
        res = check_question(
            qid, rows[qid]["activation"], hop[qid][0], idx, act, adj, gate, kg.entity_names, args
        )
        results.append(res)
        print_question(res)
    if args.out:
        out = {
            "official": str(args.official),
            "dataset": ds.name,
            "depth": args.depth,
            "gate": gate_on,
            "command": command_line(sys.argv),
            "questions": results,
        }
        Path(args.out + ".json").write_text(json.dumps(out, indent=1) + "\n")
        Path(args.out + ".md").write_text(markdown(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
