"""QASA's source rule at θ (issue #55): a node spreads only when its activation is above θ; a
seed at exactly θ stays a seed and passes nothing on (the Cypher's `res > threshold`). No
bundled fixture has a seed at or below θ; this is the hand case (a double edge, so a seed at θ
would pass its neighbour more than θ)."""

from __future__ import annotations

import scipy.sparse as sp

from hopbench.retrieve.qasa.spread import spreading_activation


def _edges(pairs, n):
    rows, cols = zip(*pairs, strict=True)
    a = sp.coo_matrix(([1.0] * len(pairs), (rows, cols)), shape=(n, n)).tocsr()
    return (a + a.T).tocsr()


def test_a_seed_at_threshold_does_not_spread_and_one_above_does():
    adj = _edges([(0, 1), (0, 1), (2, 3)], 4)  # two facts 0-1: weight 2, so 2 x 0.25 > θ
    res = spreading_activation(adj, [0, 2], [0.25, 0.5], None, decay=1.0, steps=1, threshold=0.25)
    assert res.activated.tolist() == [True, False, True, True]
    assert res.activation.tolist() == [0.25, 0.0, 0.5, 0.5]
