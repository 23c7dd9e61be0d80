"""`hopbench report --check-reference`, the protocol side: every reference row has a complete
protocol card, and every paired row is on its baseline's protocol (hopbench.core.protocol_card).

Why: a difference between two rows on different protocols (another embedder, another corpus,
another reader budget) measures the protocol as much as the method; the check names such rows
one line each, and the rows written before runs recorded a card, instead of letting them pass.
"""

from __future__ import annotations

import pandas as pd

from hopbench.core.protocol_card import (
    CARD_DIFFERENCES,
    CARD_DIFFERS,
    CARD_ID,
    differences,
    from_columns,
    missing_fields,
)
from hopbench.report.reference import RUN_KEY, concat_rows
from hopbench.report.table_params import is_missing


def _label(row) -> str:
    return f"{row.get('dataset')}/{row.get('retriever')}/{row.get('config_hash')}"


def as_rerun(reference: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The reference rows, each replaced by your run of the same dataset, method and config hash
    when there is one: what the check reads, so a `make paper` that reran every row checks the
    cards the reruns recorded (a reference written before cards passes once it is rerun)."""
    if reference.empty or runs.empty:
        return reference
    keys = {tuple(r[k] for k in RUN_KEY) for _, r in runs.iterrows()}
    ref_keys = [tuple(r[k] for k in RUN_KEY) for _, r in reference.iterrows()]
    kept = reference[[k not in keys for k in ref_keys]]
    rerun = runs[[tuple(r[k] for k in RUN_KEY) in set(ref_keys) for _, r in runs.iterrows()]]
    return concat_rows([kept, rerun]).reset_index(drop=True)


def lacking_card(df: pd.DataFrame) -> list[str]:
    """The rows without a protocol card, as dataset/retriever/config_hash."""
    if df.empty:
        return []
    return [_label(r) for _, r in df.iterrows() if is_missing(r.get(CARD_ID))]


def paired_differences(row, by_hash: dict) -> str | None:
    """The card fields in which a paired row differs from its baseline: from the baseline's row
    when it is in the table, else as the report recorded them (`card_differences`)."""
    base_hash = row.get("baseline_config_hash")
    if is_missing(base_hash) or base_hash == row.get("config_hash"):
        return None
    base = by_hash.get((row.get("dataset"), base_hash))
    if base is not None and from_columns(base):
        return ", ".join(differences(from_columns(row), from_columns(base))) or None
    differs = row.get(CARD_DIFFERS)
    if not is_missing(differs) and bool(differs):
        return str(row.get(CARD_DIFFERENCES))
    return None


def card_problems(df: pd.DataFrame) -> list[str]:
    """One line per problem: a row without a card, a card missing fields, a row paired with a
    baseline on another card."""
    lines = []
    by_hash = {(r.get("dataset"), r.get("config_hash")): r for _, r in df.iterrows()}
    for _, r in df.iterrows():
        label = _label(r)
        if is_missing(r.get(CARD_ID)):
            lines.append(
                f"  no protocol card: {label} (written before runs recorded one; rerun it)"
            )
            continue
        if missing := missing_fields(from_columns(r)):
            lines.append(f"  incomplete card: {label}: no {', '.join(missing)}")
        if fields := paired_differences(r, by_hash):
            lines.append(
                f"  paired across protocols: {label} vs {r.get('baseline_config_hash')}: "
                f"{fields} differ"
            )
    return lines


def card_summary(df: pd.DataFrame, n_rerun: int = 0) -> list[str]:
    """The check's lines for the terminal: a count, then each problem."""
    problems = card_problems(df)
    head = (
        f"protocol check: {len(df)} reference row(s) ({n_rerun} as your runs made them again); "
        + (
            "every card complete, every paired row on its baseline's protocol"
            if not problems
            else f"{len(problems)} problem(s)"
        )
    )
    return [head, *problems]
