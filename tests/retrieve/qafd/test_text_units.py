"""The seed entities' text units in the QAFD pipeline's order, on a hand-built graph."""

from __future__ import annotations

import numpy as np

from hopbench.retrieve.qafd.text_units import TextUnit, seed_text_units

A, B, C, D, E = range(5)
PASSAGES = {A: [0, 1], B: [1, 2], C: [3], D: [2], E: [2, 4]}
EDGES = {A: [B, C], B: [A, D, E], C: [A], D: [B], E: [B]}


def _units(seeds):
    return seed_text_units(seeds, lambda e: np.array(PASSAGES[e]), lambda e: np.array(EDGES[e]))


def test_order_by_seed_rank_then_relation_count_accumulated_over_seeds():
    # Seeds B then A. By hand:
    #   B (rank 0): p1 -> neighbours A (has p1) +1, D no, E no = 1;  p2 -> A no, D +1, E +1 = 2
    #   A (rank 1): p0 new, order 1, B no, C no = 0;  p1 (order 0 already) -> B has p1: +1 = 2
    # sorted by (order, -count): p1 (0, 2) and p2 (0, 2) tie -> first met: p1, p2; then p0.
    # (Counting only the first seed would put p2 (2) before p1 (1).)
    assert _units([B, A]) == [TextUnit(1, 0, 2), TextUnit(2, 0, 2), TextUnit(0, 1, 0)]


def test_a_higher_relation_count_goes_first_within_a_seed():
    # E alone: p2 -> B has p2: 1;  p4 -> B no: 0.  A alone: p0: 0, p1: B has it: 1 -> p1 first.
    assert [u.passage for u in _units([E])] == [2, 4]
    assert [u.passage for u in _units([A])] == [1, 0]


def test_every_passage_once_under_the_first_seed_that_has_it():
    got = _units([C, A, B])
    assert [u.passage for u in got] == [3, 1, 0, 2]
    assert [u.order for u in got] == [0, 1, 1, 2]
