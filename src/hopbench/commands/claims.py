"""`hopbench claims`: the claims ledger, results/claims.yaml tested on the reference rows
(hopbench.report.claims), written to claims.md beside the reference leaderboard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.paths import reference_dir_default
from hopbench.report.stats import DEFAULT_RESAMPLES


def main(argv: list[str]) -> int:
    reference = reference_dir_default()
    parser = argparse.ArgumentParser(
        prog="hopbench claims",
        description="Test each method's headline claim (results/claims.yaml) on the reference "
        "rows: per dataset, the pairs on one protocol card, the paired difference, its "
        "Holm-corrected p and a verdict; written as claims.md.",
    )
    parser.add_argument(
        "--claims", default=str(reference.parent / "claims.yaml"), help="the claims file"
    )
    parser.add_argument(
        "--reference-dir", default=str(reference), help="the leaderboard the rows come from"
    )
    parser.add_argument(
        "--runs-dir",
        help="runs whose per-question scores pair reference rows the leaderboard did not pair "
        "(make paper passes its runs folder); without it such pairs have no paired test",
    )
    parser.add_argument("--out", help="where to write (default: claims.md in --reference-dir)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    args = parser.parse_args(argv)
    from hopbench.report.claims_markdown import write_claims

    out = args.out or str(Path(args.reference_dir) / "claims.md")
    try:
        path = write_claims(args.claims, args.reference_dir, out, args.runs_dir, args.resamples)
    except HopbenchError as exc:
        print(f"hopbench claims: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
