"""dataset.corpus_order: given keeps the file's order; shuffled is a seeded permutation."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.corpus_order import ordered_corpus
from hopbench.data.schema import Passage, passage_id

CORPUS = [Passage(passage_id(f"t{i}", "x"), f"t{i}", "x") for i in range(50)]


def test_given_keeps_the_order():
    assert ordered_corpus(CORPUS, "given", 0) == CORPUS


def test_shuffled_is_a_permutation_fixed_by_its_seed():
    a = ordered_corpus(CORPUS, "shuffled", 0)
    assert sorted(p.id for p in a) == sorted(p.id for p in CORPUS)
    assert a != CORPUS
    assert a == ordered_corpus(CORPUS, "shuffled", 0)
    assert a != ordered_corpus(CORPUS, "shuffled", 1)


@pytest.mark.parametrize("order,seed", [("random", 0), ("shuffled", "0"), ("shuffled", True)])
def test_bad_settings_are_refused_naming_the_key(order, seed):
    with pytest.raises(HopbenchError, match=r"dataset\.corpus_(order|seed)"):
        ordered_corpus(CORPUS, order, seed)
