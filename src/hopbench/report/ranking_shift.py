"""Which methods change places when recall is counted at a token budget instead of k passages.

Why (issue #57): R@5 gives a method that returns long units (chunks, passages with entity
notes) more context than one that returns short ones, so an order at R@5 may not survive an
equal budget. Two rows are compared only when they scored the same questions (the cards'
question-set digest and scored count; without cards, the same question counts). A pair
"swaps" when one metric ranks it strictly one way and the other strictly the other way; a tie
in either is not a swap.
"""

from __future__ import annotations

from itertools import combinations

import pandas as pd

from hopbench.core.protocol_card import COLUMN_PREFIX
from hopbench.report.table_params import is_missing

SAME_QUESTIONS = (
    f"{COLUMN_PREFIX}question_set_digest",
    f"{COLUMN_PREFIX}n_retrieval_scored",
)
FALLBACK_KEYS = ("n_questions", "n_retrieval_scored")


def _group_key(row, keys: tuple[str, ...]) -> tuple:
    return tuple(None if is_missing(row.get(k)) else str(row.get(k)) for k in keys)


def swaps(rows: pd.DataFrame, first: str, second: str, label) -> list[tuple]:
    """[(a, b, first_a, first_b, second_a, second_b)]: pairs of rows on the same questions that
    `first` orders a > b and `second` orders b > a (a, b named by `label(row)`)."""
    if rows.empty or first not in rows or second not in rows:
        return []
    keys = SAME_QUESTIONS if all(k in rows for k in SAME_QUESTIONS) else FALLBACK_KEYS
    both = [
        (r, _group_key(r, keys))
        for _, r in rows.iterrows()
        if not is_missing(r[first]) and not is_missing(r[second])
    ]
    out = []
    for (a, key_a), (b, key_b) in combinations(both, 2):
        if key_a != key_b or None in key_a:
            continue
        d1, d2 = float(a[first]) - float(b[first]), float(a[second]) - float(b[second])
        if d1 * d2 < 0:
            hi, lo = (a, b) if d1 > 0 else (b, a)
            out.append((label(hi), label(lo), hi[first], lo[first], hi[second], lo[second]))
    return out


def shift_markdown(rows: pd.DataFrame, first: str, second: str, names: dict, label) -> str:
    """One paragraph: how many pairs of `rows` swap between `first` and `second`, and which."""
    pairs = swaps(rows, first, second, label)
    a, b = names.get(first, first), names.get(second, second)
    if not pairs:
        return f"\n**{a} → {b}:** no two main rows on the same questions change places.\n"
    lines = [
        f"- {hi} ahead at {a} ({100 * f1:.1f} vs {100 * f2:.1f}), "
        f"{lo} ahead at {b} ({100 * s2:.1f} vs {100 * s1:.1f})"
        for hi, lo, f1, f2, s1, s2 in pairs
    ]
    return (
        f"\n**{a} → {b}:** {len(pairs)} pair(s) of main rows on the same questions change "
        "places:\n\n" + "\n".join(lines) + "\n"
    )
