"""`hopbench show RUN QUESTION_ID`: one question of a run, as hopbench.report.show renders it."""

from __future__ import annotations

import argparse
import sys

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import runs_dir_default
from hopbench.report.show import find_question, find_run, render, titles_from, titles_from_corpus


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="hopbench show",
        description="Print one question of a run: gold, trace, retrieved "
        "passages (HIT/miss), answer and scores.",
    )
    parser.add_argument(
        "run", help="run folder (runs/<dataset>/<retriever>/<hash>) or its config hash"
    )
    parser.add_argument("question_id")
    parser.add_argument(
        "--runs-dir",
        default=runs_dir_default(),
        help="where to look up a hash (default: $HOPBENCH_RUNS_DIR, else runs)",
    )
    parser.add_argument(
        "--top", type=int, default=10, help="entries shown per ranking/list (default 10)"
    )
    parser.add_argument(
        "--no-corpus",
        action="store_true",
        help="do not load the corpus from config.yaml to show passage titles",
    )
    args = parser.parse_args(argv)
    try:
        run_dir = find_run(args.run, args.runs_dir)
        row = find_question(run_dir, args.question_id)
        titles = titles_from(row.get("trace") or {})
        needed = {
            str(p)
            for p in (row.get("gold_passage_ids") or []) + (row.get("ranked_passage_ids") or [])
        }
        if not args.no_corpus and needed - set(titles):
            titles = {**titles_from_corpus(run_dir, needed - set(titles)), **titles}
        print(render(run_dir, row, titles, top=args.top), end="")
    except HopbenchError as exc:
        print(f"hopbench show: error: {exc}", file=sys.stderr)
        return 2
    return 0
