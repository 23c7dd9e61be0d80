"""`hopbench report`: collect complete runs into results/ (hopbench.report.collect)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import reference_dir_default, results_dir_default, runs_dir_default
from hopbench.report.collect import write_everything
from hopbench.report.markdown import fallback_warning_line, leaderboard_markdown
from hopbench.report.paper_tables import PAPER_TABLES
from hopbench.report.stats import DEFAULT_RESAMPLES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hopbench report",
        description="Collect complete runs into results/: leaderboard (95% bootstrap CIs, paired tests "
        "against a baseline), breakdowns by hops/type, figures, published numbers side by side.",
    )
    parser.add_argument(
        "--runs-dir",
        default=runs_dir_default(),
        help="where runs live (default: $HOPBENCH_RUNS_DIR, else runs; the same as the "
        "runs' paths.runs_dir)",
    )
    parser.add_argument(
        "--results-dir",
        default=results_dir_default(),
        help="where tables go (default: $HOPBENCH_RESULTS_DIR, else results)",
    )
    parser.add_argument(
        "--reference-dir",
        default=str(reference_dir_default()),
        help="the committed reference results shown beside the runs (default: "
        "results/reference of this checkout; $HOPBENCH_REFERENCE_DIR)",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="do not show the reference rows"
    )
    parser.add_argument(
        "--update-reference",
        action="store_true",
        help="merge the runs into the reference results (rows of the same run are "
        "replaced, every other row is kept) instead of writing --results-dir",
    )
    parser.add_argument(
        "--retire",
        action="append",
        default=[],
        metavar="CONFIG_HASH",
        help="with --update-reference: drop the reference row of this config hash "
        "(a row the current code no longer computes); repeatable",
    )
    parser.add_argument(
        "--baseline",
        default="dense",
        help="retriever every method is tested against, per dataset (default: dense)",
    )
    parser.add_argument("--dataset", help="only this dataset")
    parser.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help=f"bootstrap resamples (default: {DEFAULT_RESAMPLES})",
    )
    parser.add_argument("--no-figures", action="store_true", help="skip the figures")
    parser.add_argument(
        "--published",
        action="store_true",
        help="also print the published-vs-ours view (always written to published_vs_ours.md)",
    )
    parser.add_argument(
        "--check-reference",
        action="store_true",
        help="compare your runs that are reference rows (same dataset, retriever, config hash) "
        "with the reference: question counts and metrics must be identical (exit code 1 if not); "
        "and check every reference row's protocol card: complete, and paired rows on their "
        "baseline's protocol (exit code 2 if not, one line per row)",
    )
    return parser


def main(argv: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.check_reference and (args.update_reference or args.no_reference):
        parser.error(
            "--check-reference compares with the reference: not with --update-reference "
            "or --no-reference"
        )
    reference_dir = None if args.no_reference and not args.update_reference else args.reference_dir
    if reference_dir is not None and not Path(reference_dir).exists() and not args.update_reference:
        reference_dir = None  # an installed copy without the repository's results/
    try:
        df, paths = write_everything(
            args.runs_dir,
            args.results_dir,
            baseline=args.baseline,
            n_resamples=args.resamples,
            dataset=args.dataset,
            figures=not args.no_figures,
            reference_dir=reference_dir,
            update_reference=args.update_reference,
            retire=args.retire,
        )
    except HopbenchError as exc:
        print(f"hopbench report: error: {exc}", file=sys.stderr)
        return 2
    if df.empty:
        print(f"no complete runs under {args.runs_dir}", file=sys.stderr)
    print(leaderboard_markdown(df, args.baseline))
    if warning := fallback_warning_line(df):
        print(f"hopbench report: warning: {warning}", file=sys.stderr)
    if warning := _cardless_warning(df):  # logged, as the report's other notes on old runs
        logging.getLogger("hopbench.report").warning("%s", warning)
    if args.published:
        print((paths[0].parent / "published_vs_ours.md").read_text(encoding="utf-8"))
    paper = next((p for p in paths if p.name == PAPER_TABLES), None)
    if paper is not None:
        print(
            f"paper-style tables (per dataset: methods x headline metrics, 95% intervals, "
            f"difference to {args.baseline}): {paper}"
        )
    print("wrote " + ", ".join(str(p) for p in paths))
    if args.check_reference:
        return _check_reference(df, reference_dir)
    return 0


def _cardless_warning(df) -> str | None:
    """The plain report only warns about runs without a protocol card (--check-reference fails)."""
    from hopbench.report.card_check import lacking_card

    rows = lacking_card(df)
    if not rows:
        return None
    return (
        f"{len(rows)} run(s) without a protocol card (written before runs recorded one; their "
        f"pairs are not checked for equal protocols): " + ", ".join(rows)
    )


def _check_reference(df, reference_dir) -> int:
    """1 when a run that is a reference row came back with other numbers; 2 when a reference
    row's protocol card is missing or incomplete, or a paired row is on another protocol (the
    rows your runs made again are checked as they made them)."""
    from hopbench.report.card_check import as_rerun, card_problems, card_summary
    from hopbench.report.reference import load_table
    from hopbench.report.reference_check import compare, not_rerun, summary

    if reference_dir is None:
        print("hopbench report: error: no reference results to check against", file=sys.stderr)
        return 2
    reference = load_table(reference_dir, "leaderboard")
    comparisons = compare(df, reference)
    print("\n".join(summary(comparisons, len(df))))
    missing = not_rerun(df, reference)
    print(
        f"reference check: {len(reference) - len(missing)} of {len(reference)} reference rows made again"
    )
    for label in missing[:10]:
        print(f"  not made again: {label}")
    checked = as_rerun(reference, df)  # a reference row you ran again: as your run made it
    print("\n".join(card_summary(checked, len(comparisons))))
    if card_problems(checked):
        return 2
    return 0 if all(c.identical for c in comparisons) else 1
