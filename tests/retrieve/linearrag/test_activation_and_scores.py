"""LinearRAG's seeds, both activation paths and the passage weights, on hand-checked cases
(their LinearRAG.py at 4ecfa25: get_seed_entities, calculate_entity_scores[_vectorized],
calculate_passage_scores)."""

from __future__ import annotations

import math

import numpy as np

from hopbench.retrieve.linearrag.activation import (
    bfs_activation,
    link_seeds,
    mention_matrix,
    vectorized_activation,
)
from hopbench.retrieve.linearrag.scoring import OccurrenceCounts, passage_weights

# Sentences as unit vectors whose cosine to the question q = e0 is the first coordinate.
Q = np.array([1.0, 0.0], dtype=np.float32)


def sentence(cos: float) -> np.ndarray:
    return np.array([cos, math.sqrt(1 - cos * cos)], dtype=np.float32)


# entity 0 (seed) is in sentences 0 (cos .9, with entity 1) and 1 (cos .6, with entity 2);
# entity 1 is also in sentence 2 (cos .8, with entity 3).
SENTS = np.stack([sentence(0.9), sentence(0.6), sentence(0.8)])
ENT_SENTS = [[0, 1], [0, 2], [1], [2]]
SENT_ENTS = [[0, 1], [0, 2], [1, 3]]


def test_seeds_are_nearest_entities_first_index_on_ties():
    ents = np.array([[1, 0], [0, 1], [0, 1]], dtype=np.float32)
    seeds, scores = link_seeds(ents, np.array([[0, 1], [1, 0]], dtype=np.float32))
    assert seeds == [1, 0] and [float(s) for s in scores] == [1.0, 1.0]


def test_bfs_follows_the_top_sentence_and_keeps_their_overwrites():
    w, act = bfs_activation(
        [0],
        [np.float32(1.0)],
        Q,
        SENTS,
        ENT_SENTS,
        SENT_ENTS,
        max_iterations=3,
        threshold=0.5,
        top_k_sentence=1,
    )
    # round 1: entity 0 takes sentence 0 (cos .9): entities 0 and 1 get .9, tier 2 (the seed
    # too: its own entry is overwritten, as theirs is); round 2: entity 0 has only sentence 1
    # left (.9 x .6 = .54 >= .5: entity 2), entity 1 takes sentence 2 (.9 x .8 = .72: entity 3
    # and itself)
    assert list(act) == [0, 1, 2, 3]
    assert act[0][1] == 3 and act[1][1] == 3 and act[2][1] == 3 and act[3][1] == 3
    np.testing.assert_allclose(float(act[2][0]), 0.9 * 0.6, rtol=1e-6)
    np.testing.assert_allclose(w, [1 + 0.9 + 0.54, 0.9 + 0.72, 0.54, 0.72], rtol=1e-6)


def test_bfs_threshold_stops_weak_links_and_max_iterations_bounds_rounds():
    w, act = bfs_activation(
        [0],
        [np.float32(1.0)],
        Q,
        SENTS,
        ENT_SENTS,
        SENT_ENTS,
        max_iterations=2,
        threshold=0.95,
        top_k_sentence=2,
    )
    assert list(act) == [0] and act[0][1] == 1  # .9 < .95: nothing propagates
    np.testing.assert_allclose(w, [1, 0, 0, 0])


def test_vectorized_sums_repeated_seeds_first_and_tiers_by_step():
    m = mention_matrix(ENT_SENTS, 3)
    w, act = vectorized_activation(
        [0, 0],
        [np.float32(0.4), np.float32(0.3)],
        Q,
        SENTS,
        m,
        max_iterations=2,
        threshold=0.5,
        top_k_sentence=1,
    )
    # the two seeds sum to .7 in the first step (their coalesce); the running total keeps .3
    # (their scatter); entity 0 picks sentence 0: .7 x .9 = .63 to entities 0 and 1, step 1
    assert math.isclose(act[0][0], 0.63, rel_tol=1e-6) and act[0][1] == 1
    assert math.isclose(act[1][0], 0.63, rel_tol=1e-6) and act[1][1] == 1
    np.testing.assert_allclose(w, [0.3 + 0.63, 0.63, 0, 0], rtol=1e-6)


def test_passage_weights_formula_with_tiers_and_float32_bonus():
    counts = OccurrenceCounts(["0:Ann and ann", "1:Bob"], ["ANN", "Bob"])
    act = {0: (np.float32(0.8), 1), 1: (np.float32(0.6), 3)}
    dense = np.array([0.2, 0.6], dtype=np.float32)
    w = passage_weights(dense, act, counts, passage_ratio=2.0, passage_node_weight=0.05)
    bonus0 = np.float32(0.8) * np.float32(math.log(3))  # two lower-cased "ann", tier 1
    bonus1 = np.float32(0.6) * np.float32(math.log(2)) / np.float32(3)
    np.testing.assert_allclose(
        w, [math.log(1 + bonus0) * 0.05, (2.0 + math.log(1 + bonus1)) * 0.05], rtol=0, atol=1e-15
    )
