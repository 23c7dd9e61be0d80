"""Paired tests of the claim pairs the leaderboard did not pair, kept in the reference.

The reference keeps means, not per-question scores, so a claim pair whose baseline row is not
the one the report paired the row with can be tested only from the two runs. `hopbench report
--update-reference` computes those tests from the runs it merges and keeps them in
`claim_tests.csv`; the ledger reads them back, so claims.md is the same page whether it is made
from the reference alone (a checkout, its test) or with the runs (`make paper`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

FILE = "claim_tests.csv"
KEY = ["row_config_hash", "base_config_hash", "metric"]
COLUMNS = [*KEY, "delta", "p", "n_paired"]


def load_claim_tests(folder) -> dict[tuple, tuple]:
    """(row hash, baseline hash, metric) -> (delta, p, n_paired) from a reference folder."""
    path = Path(folder) / FILE
    if not path.exists():
        return {}
    df = pd.read_csv(
        path,
        dtype={"row_config_hash": str, "base_config_hash": str},
        float_precision="round_trip",
    )
    return {
        (r.row_config_hash, r.base_config_hash, r.metric): (
            float(r.delta),
            float(r.p),
            int(r.n_paired),
        )
        for r in df.itertuples()
    }


def claim_tests_frame(tests: dict[tuple, tuple]) -> pd.DataFrame:
    rows = [[*key, *value] for key, value in sorted(tests.items())]
    return pd.DataFrame(rows, columns=COLUMNS)


def write_claim_tests(folder, tests: dict[tuple, tuple], board: pd.DataFrame) -> Path:
    """The tests whose two rows are both still in `board`, sorted, as CSV (pandas writes a float
    in its shortest round-trip form: a test read back is the test computed)."""
    from hopbench.core.atomic import write_text

    hashes = set(board["config_hash"]) if not board.empty else set()
    kept = {k: v for k, v in tests.items() if k[0] in hashes and k[1] in hashes}
    path = Path(folder) / FILE
    write_text(path, claim_tests_frame(kept).to_csv(index=False))
    return path


def update_claim_tests(folder, board: pd.DataFrame, runs: list, n_resamples: int) -> Path | None:
    """Test the claim pairs of `board` that the leaderboard left unpaired, from the loaded runs
    the update merges, over the tests already kept (a pair tested again replaces its old one)."""
    from hopbench.report.claims import untested_from_runs
    from hopbench.report.claims_file import load_claims

    claims_path = Path(folder).parent / "claims.yaml"
    if not claims_path.exists():
        return None
    tests = load_claim_tests(folder)
    tests.update(untested_from_runs(load_claims(claims_path), board, runs, n_resamples))
    return write_claim_tests(folder, tests, board)
