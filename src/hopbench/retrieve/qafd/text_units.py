"""The text units of the seed entities, in the order the QAFD answering pipeline gives them.

Source: Tarzanagh/QAFD-RAG ``src/answering/text_units.py`` (d105ec5),
``find_most_related_text_unit_from_entities``, called by ``_get_node_data_with_flow_diffusion``
(``src/answering/context.py``) with the seed entities in vector-search rank order:

* every passage of every seed is a unit; its ``order`` is the rank of the first seed that has it;
* its ``relation_count`` adds, for every seed that has it and every edge (seed, u) of that
  seed, one when the neighbour u's passages contain it as well;
* units are sorted by (order, -relation_count), a stable sort, so ties keep the order in which
  they were first met (seed by seed; within a seed, hopbench takes passages by index, where
  the authors take the order of the entity's ``source_id`` string).

The authors then cut the list to ``max_token_for_text_unit`` (4000) tokens for the prompt;
hopbench keeps the whole list as the ranking and lets `k` (and the reader's top_k) cut it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class TextUnit:
    passage: int
    order: int  # rank of the first seed that has the passage
    relation_count: int


def seed_text_units(
    seeds: Sequence[int],
    passages_of: Callable[[int], np.ndarray],
    neighbours_of: Callable[[int], np.ndarray],
) -> list[TextUnit]:
    """Units of `seeds` (entity indices, best first) sorted as the module docstring says."""
    seeds = [int(s) for s in seeds]
    units = {s: [int(p) for p in passages_of(s)] for s in seeds}
    edges = {s: [int(u) for u in neighbours_of(s)] for s in seeds}
    one_hop: dict[int, set[int]] = {}
    for s in seeds:
        for u in edges[s]:
            if u not in one_hop:
                one_hop[u] = {int(p) for p in passages_of(u)}
    found: dict[int, list[int]] = {}  # passage -> [order, relation_count], in first-met order
    for index, s in enumerate(seeds):
        for p in units[s]:
            if p not in found:
                found[p] = [index, 0]
            for u in edges[s]:
                if p in one_hop[u]:
                    found[p][1] += 1
    ordered = sorted(found.items(), key=lambda kv: (kv[1][0], -kv[1][1]))
    return [TextUnit(passage=p, order=o, relation_count=c) for p, (o, c) in ordered]
