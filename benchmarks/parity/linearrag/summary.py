"""One page over every LinearRAG parity result: results/official_linearrag.md (issue #56).

    python -m benchmarks.parity.linearrag.summary

Reads the official_linearrag_<dataset>_<bfs|vec>.json files compare.py wrote beside this
script and puts their figures in one table each (parity, then speed), so the summary is
remade from the evidence, never typed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.common.paths import results_dir

OUT = "official_linearrag.md"


def parity_rows(name: str, res: dict) -> list[str]:
    rows = []
    for run, c in res["runs"].items():
        rows.append(
            f"| {res['dataset']} | `{res['retriever']}` | {run} | {c['questions']} | {c['identical_top10']} "
            f"| {c['differ_inside_ties']} | {len(c['differ_otherwise'])} "
            f"| {len(c['activation_mismatch'])} | {c['max_abs_activation_diff']:.1e} "
            f"| {c['max_abs_ppr_diff']:.1e} | {c['max_abs_ppr_diff_same_reset']:.1e} "
            f"| `{name}` |"
        )
    return rows


def speed_rows(name: str, res: dict) -> list[str]:
    mode = "vectorized" if res["vectorized"] else "BFS"
    t = res["timing"]
    theirs, ours = t["LinearRAG (theirs)"], t["hopbench"]
    return [
        f"| {res['dataset']} | `{res['retriever']}` | {mode} | {res['n_questions']} | {theirs['index_s']:.2f} "
        f"| {ours['index_s']:.2f} | {theirs['ms_per_question']:.1f} "
        f"| {ours['ms_per_question']:.1f} | {', '.join(map(str, res['loadavg']))} | `{name}` |"
    ]


def markdown(results: dict[str, dict]) -> str:
    first = next(iter(results.values()))
    lines = [
        "# LinearRAG: hopbench against the authors' code, every run",
        "",
        f"DEEP-PolyU/LinearRAG at `{first['commit'][:7]}`, run unchanged by compare.py "
        "(README.md here has the command behind each file). Both sides get the same passages "
        "(`idx:` prefix), spaCy NER, question entities and all-MiniLM-L6-v2 vectors; hopbench "
        "is given each of their runs' set orders (PYTHONHASHSEED). PPR differences are against "
        "igraph's prpack, over every question ranked through the graph (one with an activation "
        "mismatch included); the last column solves their own reset vector with hopbench's "
        "kernel. The activation difference is over questions whose activated entities and "
        "tiers match (docs/methods/linearrag.md, Parity, explains the one mismatch: an exact "
        "sentence tie on the vectorized path).",
        "",
        "| dataset | settings | run | questions | identical top-10 | differ inside ties | differ otherwise "
        "| activation mismatches | max activation diff | max PPR diff "
        "| max PPR diff, their reset | file |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, res in results.items():
        lines += parity_rows(name, res)
    lines += [
        "",
        "Their own top-10 from one hash seed to the next, and hopbench in its own order:",
        "",
    ]
    for name, res in results.items():
        for seeds, n in res["official_self"].items():
            lines.append(
                f"- {res['dataset']}, `{res['retriever']}` (`{name}`): their seeds {seeds} agree on {n} of "
                f"{res['n_questions']}"
            )
        lines.append(
            f"- {res['dataset']}, `{res['retriever']}` (`{name}`): hopbench in first-appearance order gives their "
            f"seed-{res['hash_seeds'][0]} top-10 on {res['own_order_identical']} of "
            f"{res['n_questions']}"
        )
    lines += [
        "",
        "Speed, both sides in the same run (one thread each; indexing from the given NER and "
        "vectors; retrieval per question without question encoding and NER; the machine is "
        "shared, so the load average at the run's end is given):",
        "",
        "| dataset | settings | path | questions | index, theirs (s) | index, hopbench (s) "
        "| retrieval, theirs (ms/q) | retrieval, hopbench (ms/q) | load average | file |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, res in results.items():
        lines += speed_rows(name, res)
    return "\n".join(lines) + "\n"


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    here = results_dir(__file__)
    results = {
        p.name: json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(Path(here).glob("official_linearrag_*_*.json"))
    }
    text = markdown(results)
    (Path(here) / OUT).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
