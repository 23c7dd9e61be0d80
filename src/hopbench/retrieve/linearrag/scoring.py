"""LinearRAG's passage reset weights (their ``calculate_passage_scores``).

For every passage: passage_ratio x min-max(dense cosine) + log(1 + bonus), times
passage_node_weight, where bonus sums, over the activated entities occurring in the passage
(lower-cased substring count n > 0), score x log(1 + n) / max(tier, 1). Their scalar types are
kept (a float32 score makes a float32 bonus), so the weights equal theirs to the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hopbench.retrieve.ranking import min_max


class OccurrenceCounts:
    """Lower-cased occurrences of an entity in every passage, counted once per entity."""

    def __init__(self, passage_texts: Sequence[str], entities: Sequence[str]) -> None:
        self.passages = [t.lower() for t in passage_texts]
        self.entities = [e.lower() for e in entities]
        self._cache: dict[int, list[tuple[int, int]]] = {}

    def __call__(self, entity: int) -> list[tuple[int, int]]:
        """[(passage index, count > 0)] of one entity, by passage index."""
        hits = self._cache.get(entity)
        if hits is None:
            name = self.entities[entity]
            hits = [(p, c) for p, text in enumerate(self.passages) if (c := text.count(name))]
            self._cache[entity] = hits
        return hits


def passage_weights(
    dense: np.ndarray,
    activated: dict,
    counts: OccurrenceCounts,
    *,
    passage_ratio: float,
    passage_node_weight: float,
) -> np.ndarray:
    """(P,) float64 reset weights of the passages (module docstring)."""
    bonus: dict[int, object] = {}
    for entity, (score, tier) in activated.items():
        denom = tier if tier >= 1 else 1
        for p, n in counts(entity):
            bonus[p] = bonus.get(p, 0) + score * math.log(1 + n) / denom
    normalised = min_max(np.asarray(dense, dtype=np.float64))
    out = np.empty(len(normalised))
    for p, d in enumerate(normalised):
        out[p] = (passage_ratio * d + math.log(1 + bonus.get(p, 0))) * passage_node_weight
    return out
