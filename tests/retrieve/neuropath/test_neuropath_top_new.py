"""`top_new` (robust handling's pruning): the filter_k best path scores, best first, and on
equal scores the earlier path (issue #55: the tie rule had no test).

Where the tie rule comes from. The authors' pruning (KennyCaty/NeuroPath c9ed3ac,
`src/neuropath.py` L246) takes `np.argsort(similarity_scores)[-filter_k:][::-1]`. numpy's
default argsort is not a stable sort, and pruning only happens above filter_k (30) new paths,
where numpy's introsort (or its SIMD sort) leaves the order of equal scores to the
implementation: the authors' code has no fixed tie rule. hopbench fixes one, the order in which
the new paths were made (the expansion order the reference walks), like Python's stable
`sorted` on the negated score. The reference here is exactly that: `sorted` by (-score, position).
"""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.retrieve.neuropath.neuropath import top_new


def _reference(scores: list[float], k: int) -> list[int]:
    """Python's stable sort of the positions by descending score: ties keep the earlier one."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])[:k]


def test_tied_scores_keep_the_earlier_path():
    # positions 1, 3 and 4 tie at 0.5; two of them fit under k=3 after the 0.9 at position 2
    scores = [0.1, 0.5, 0.9, 0.5, 0.5, 0.2]
    got = top_new(np.asarray(scores), 3).tolist()
    assert got == [2, 1, 3]
    assert got == _reference(scores, 3)


def test_a_tie_at_the_cut_keeps_the_earliest_paths_in_order():
    scores = [0.7] * 40  # above the authors' filter_k of 30, where pruning happens
    assert top_new(np.asarray(scores), 30).tolist() == list(range(30))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_the_stable_sort_on_scores_with_many_ties(seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 5, size=45).astype(float) / 4.0  # five values: ties everywhere
    assert top_new(scores, 30).tolist() == _reference(scores.tolist(), 30)
