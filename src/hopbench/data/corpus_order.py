"""`dataset.corpus_order`: the corpus as the file gives it, or in a seeded random order.

A retriever that declares no position feature must rank the same under any order (tests/retrieve/
test_order_invariance.py); one that reads positions (LinearRAG's adjacent-passage edges) is
measured under both orders, since a file laid out question by question puts gold passages next
to each other.
"""

from __future__ import annotations

import random

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage

ORDERS = ("given", "shuffled")


def check_order_settings(order, seed) -> None:
    if order not in ORDERS:
        raise HopbenchError(f"dataset.corpus_order must be one of {list(ORDERS)}, got {order!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise HopbenchError(f"dataset.corpus_seed must be an integer, got {seed!r}")


def ordered_corpus(corpus: list[Passage], order: str, seed: int) -> list[Passage]:
    """The corpus in `order`: "given" as it is, "shuffled" by `random.Random(seed)`."""
    check_order_settings(order, seed)
    if order == "given":
        return list(corpus)
    shuffled = list(corpus)
    random.Random(seed).shuffle(shuffled)
    return shuffled
