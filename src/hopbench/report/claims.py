"""The claims ledger (issue #57): each method's headline claim, tested on the reference rows.

For every claim of results/claims.yaml (hopbench.report.claims_file) and every dataset, the
method's rows are paired with the baseline's rows that share their protocol (the "card":
reader, questions, embedder, the reader's LLM, and any `card.*` column the leaderboard carries
apart from the graph's and the retrieval LLM's, which belong to the method). A method row with
baseline rows on its dataset but none on its card is listed as such, never paired silently.

A pair's difference and p-value are the leaderboard's own when the baseline row is the one the
report paired the method row with (its `delta_<metric>`, `p_<metric>`); otherwise they are
computed from the two runs' per-question scores when their folders are in `runs_dir`, with the
report's paired test (hopbench.report.leaderboard.paired_pvalues), or read from the reference's
`claim_tests.csv`, where `--update-reference` keeps those tests (hopbench.report.claim_tests).
All p-values of the ledger are one Holm family. Verdicts, first that applies:

    model-bound        either row's LLM step failed or fell back on more than 10% of questions
                       (a row whose retrieval records no LLM tokens has no LLM step)
    no paired test     no per-question scores of both rows, and no test kept of them
    holds              Holm-corrected p < 0.05, difference in the claimed direction
    does not hold      Holm-corrected p < 0.05, difference against it
    not significant    Holm-corrected p >= 0.05
    no pair on one card, no rows yet
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hopbench.core.protocol_card import differences, from_columns
from hopbench.report.claims_file import Claim, RowSpec
from hopbench.report.stats import DEFAULT_RESAMPLES, holm

ALPHA = 0.05
FALLBACK_LIMIT = 0.10  # an LLM step's fallback share above this: the row measures the model
HOLDS, FAILS, NOT_SIGNIFICANT = "holds", "does not hold", "not significant"
MODEL_BOUND, UNPAIRED = "model-bound", "no paired test"
OTHER_CARD, NO_ROWS = "no pair on one card", "no rows yet"


@dataclass
class Pair:
    """One test of a claim on one dataset (a method row and a baseline row), or the reason
    there is none (`row` or `base` None)."""

    claim: Claim
    dataset: str
    row: pd.Series | None = None
    base: pd.Series | None = None
    delta: float = float("nan")
    p: float = float("nan")
    p_adj: float = float("nan")
    n_paired: int | None = None
    verdict: str = NO_ROWS
    checks: list[str] = field(default_factory=list)


def rows_for(board: pd.DataFrame, spec: RowSpec, dataset: str) -> pd.DataFrame:
    """The rows of one dataset a row spec names."""
    sel = board[(board["dataset"] == dataset) & (board["retriever"] == spec.retriever)]
    if spec.graph is not None:
        sel = sel[
            sel.get("graph", pd.Series(index=sel.index, dtype=object)).fillna("") == spec.graph
        ]
    if spec.params_diff is not None:
        diff = sel.get("params_diff", pd.Series(index=sel.index, dtype=object)).fillna("")
        sel = sel[diff.isin(spec.params_diff)]
    return sel.sort_values("config_hash")


def _cell(row: pd.Series, key: str):
    v = row.get(key)
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def protocol_key(row: pd.Series) -> tuple:
    """What two rows of a pair must share besides their cards: reader, questions, embedder, and
    the reader's LLM when there is a reader (rows written before cards have only these)."""
    models = str(_cell(row, "models") or "")
    key = [
        _cell(row, "reader"),
        _cell(row, "n_questions"),
        _cell(row, "limit"),
        models.split(";")[0],
    ]
    if _cell(row, "reader") not in (None, "none"):
        key.append(models)
    return tuple(key)


def same_card(row: pd.Series, base: pd.Series) -> bool:
    """One protocol: the same protocol key and, when both rows carry a card, no difference in
    a field the two must share (hopbench.core.protocol_card.differences: the method's own
    fields, its graph and its LLM roles, never count)."""
    if protocol_key(row) != protocol_key(base):
        return False
    mine, theirs = from_columns(row), from_columns(base)
    return not (mine and theirs and differences(mine, theirs))


def pairs_of(claim: Claim, board: pd.DataFrame, dataset: str) -> list[Pair]:
    """Each method row with its baseline row on the same card (the report's own pairing first)."""
    rows, bases = rows_for(board, claim.row, dataset), rows_for(board, claim.baseline, dataset)
    if rows.empty or bases.empty:
        return [Pair(claim, dataset)]
    out = []
    for _, row in rows.iterrows():
        same = [b for _, b in bases.iterrows() if same_card(row, b)]
        own = [b for b in same if b["config_hash"] == _cell(row, "baseline_config_hash")]
        base = (own or same or [None])[0]
        out.append(Pair(claim, dataset, row, base, verdict=OTHER_CARD if base is None else NO_ROWS))
    return out


def paired_by_leaderboard(pair: Pair) -> bool:
    m, row = pair.claim.metric, pair.row
    return (
        _cell(row, "baseline_config_hash") == pair.base["config_hash"]
        and _cell(row, f"p_{m}") is not None
    )


def pair_key(pair: Pair) -> tuple:
    return (pair.row["config_hash"], pair.base["config_hash"], pair.claim.metric)


def fill_test(pair: Pair, runs: dict, tester, recorded: dict | None = None) -> None:
    """The pair's difference and raw p: the leaderboard's, from the runs' rows, or as the
    reference recorded it from them (hopbench.report.claim_tests)."""
    m, row, base = pair.claim.metric, pair.row, pair.base
    if paired_by_leaderboard(pair):
        pair.p, pair.delta = float(row[f"p_{m}"]), float(row[f"delta_{m}"])
        pair.n_paired = _cell(row, "n_paired")
        return
    a, b = runs.get(row["config_hash"]), runs.get(base["config_hash"])
    if a is not None and b is not None:
        p, n, delta = tester(a, b)[m]
        pair.p, pair.n_paired, pair.delta = p, n, delta
        return
    if recorded and pair_key(pair) in recorded:
        pair.delta, pair.p, pair.n_paired = recorded[pair_key(pair)]
        return
    if _cell(row, m) is not None and _cell(base, m) is not None:
        pair.delta = float(row[m]) - float(base[m])  # of the means, not paired: shown, not tested


def llm_fallback_rate(row: pd.Series) -> float | None:
    """The row's fallback share when its retrieval calls an LLM; None when it records no LLM
    tokens in retrieval (a fallback there is the method's own rule, e.g. LinearRAG's dense
    ranking for a question without entities, not a failed model step)."""
    rate = _cell(row, "fallback_rate")
    tokens = _cell(row, "retrieval_llm_tokens_per_question")
    if tokens is None and _cell(row, "reader") in (None, "none"):
        tokens = _cell(row, "llm_tokens_per_q")  # no reader: every token is retrieval's
    if rate is None or (tokens is not None and float(tokens) == 0):
        return None
    return float(rate)


def verdict(pair: Pair) -> str:
    fallbacks = [llm_fallback_rate(r) for r in (pair.row, pair.base)]
    if any(f is not None and float(f) > FALLBACK_LIMIT for f in fallbacks):
        return MODEL_BOUND
    if math.isnan(pair.p_adj):
        return UNPAIRED
    if pair.p_adj >= ALPHA:
        return NOT_SIGNIFICANT
    better = pair.delta > 0 if pair.claim.direction == "higher" else pair.delta < 0
    return HOLDS if better else FAILS


def check_texts(pair: Pair) -> list[str]:
    """The claim's other checks on this pair (no test: a ratio or a zero, as recorded)."""
    out = []
    for check in pair.claim.checks:
        mine, theirs = _cell(pair.row, check.column), _cell(pair.base, check.column)
        if check.kind == "zero":
            ok = mine is None or float(mine) == 0
            out.append(f"{check.column} zero: {HOLDS if ok else FAILS} ({mine or 0:g})")
        elif mine is None or theirs is None or float(mine) <= 0:
            out.append(f"{check.column} ratio: no value")
        else:
            ratio = float(theirs) / float(mine)
            ok = ratio >= check.min
            out.append(
                f"{check.column} {ratio:.2f}x (claim {check.min:g}x): {HOLDS if ok else FAILS}"
            )
    return out


def _run_tester(n_resamples: int):
    from hopbench.report.leaderboard import all_scores, paired_pvalues, stable_seed

    def test(a, b):
        seed = stable_seed(a.config_hash, b.config_hash)
        return paired_pvalues(all_scores(a), all_scores(b), seed, n_resamples)

    return test


def runs_by_hash(runs_dir, hashes: set[str]) -> dict:
    """The runs under runs_dir whose config hash is one of `hashes` (none without runs_dir)."""
    if runs_dir is None:
        return {}
    from hopbench.report.run_reader import load_runs

    return {r.config_hash: r for r in load_runs(runs_dir) if r.config_hash in hashes}


def all_pairs(claims: list[Claim], board: pd.DataFrame) -> tuple[list[Pair], list[Pair]]:
    """Every claim's pairs on every dataset of the board, and those with both rows."""
    datasets = sorted(board["dataset"].unique()) if not board.empty else []
    pairs = [p for c in claims for d in datasets for p in pairs_of(c, board, d)]
    return pairs, [p for p in pairs if p.row is not None and p.base is not None]


def _hashes(pairs: list[Pair]) -> set[str]:
    return {p.row["config_hash"] for p in pairs} | {p.base["config_hash"] for p in pairs}


def untested_from_runs(
    claims: list[Claim], board: pd.DataFrame, runs: list, n_resamples: int = DEFAULT_RESAMPLES
) -> dict[tuple, tuple]:
    """(row, baseline, metric) -> (delta, p, n_paired) of the pairs the leaderboard did not
    pair and whose two runs are among `runs`, already loaded (what the reference keeps)."""
    _, tested = all_pairs(claims, board)
    todo = [p for p in tested if not paired_by_leaderboard(p)]
    wanted = _hashes(todo)
    runs = {r.config_hash: r for r in runs if r.config_hash in wanted}
    tester = _run_tester(n_resamples)
    out = {}
    for p in todo:
        fill_test(p, runs, tester)
        if not math.isnan(p.p):
            out[pair_key(p)] = (float(p.delta), float(p.p), int(p.n_paired))
    return out


def ledger(
    claims: list[Claim],
    board: pd.DataFrame,
    runs_dir=None,
    n_resamples: int = DEFAULT_RESAMPLES,
    recorded: dict | None = None,
) -> list[Pair]:
    """Every claim tested on every dataset of the board, with one Holm family over all tests.
    `recorded`: the reference's kept tests (claim_tests.csv), used where runs_dir has no runs."""
    pairs, tested = all_pairs(claims, board)
    runs, tester = runs_by_hash(runs_dir, _hashes(tested)), _run_tester(n_resamples)
    for p in tested:
        fill_test(p, runs, tester, recorded)
    adjusted = holm(np.array([p.p for p in tested], dtype=float))
    for p, q in zip(tested, adjusted, strict=True):
        p.p_adj = float(q)
        p.verdict = verdict(p)
        p.checks = check_texts(p)
    return pairs
