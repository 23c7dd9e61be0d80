"""CatRAG's query-adapted transition matrix as pure functions (docs/methods/catrag.md).

The base graph is HippoRAG 2's (relation, synonym and context edges, undirected). For one
question CatRAG changes only edges that leave its seed entities, so the adapted graph is
directed: row u of the adjacency (u -> v) changes, row v (v -> u) does not. Each change is a
multiplier on one edge *type* of one entry, applied as an additive delta, so a relation edge
that is also a synonym edge keeps its synonym part:

    A_q[u, v] = A[u, v] + (m_uv - 1) * R[u, v]      (R: the relation part of A)
    A_q[u, p] = A[u, p] + (m_up - 1) * C[u, p]      (C: the context part, seed -> passage)

The base matrix is never modified: "weights restored after each question" holds by
construction, and the tests check it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp


def phi(score: int, scale: float = 1.0) -> float:
    """The paper's score -> multiplier map; the code multiplies the result by 2 (scale=2).

    0-3 -> 0 (irrelevant), 4-6 -> 0.2-0.3 linearly (weak), 7-9 -> 2.0-3.0 linearly (high),
    10 -> 5.0 (direct).
    """
    s = int(score)
    if not 0 <= s <= 10:
        raise ValueError(f"LLM score must be in 0..10, got {score}")
    if s <= 3:
        m = 0.0
    elif s <= 6:
        m = 0.2 + 0.05 * (s - 4)
    elif s <= 9:
        m = 2.0 + 0.5 * (s - 7)
    else:
        m = 5.0
    return m * scale


def rank_neighbours(
    relation: sp.csr_matrix, seed: int, neighbour_fact_sims: dict[int, float]
) -> list[int]:
    """Relation neighbours of `seed` (not itself), best first by their query-fact similarity.

    `neighbour_fact_sims[v]` is the max cos(question, fact) over the facts joining seed and v;
    ties are broken by entity index so the order is deterministic.
    """
    row = relation.indices[relation.indptr[seed] : relation.indptr[seed + 1]]
    nbrs = [int(v) for v in row if int(v) != seed]
    return sorted(nbrs, key=lambda v: (-neighbour_fact_sims.get(v, -np.inf), v))


def key_fact_multipliers(
    passages: Sequence[int], boosted: Iterable[int], multiplier: float, renormalise: bool
) -> dict[int, float]:
    """Multipliers of a seed's passage edges (all of weight 1 in HippoRAG's graph).

    Paper: an edge to a passage that holds a kept seed fact gets x(1 + beta), others x1.
    Code (renormalise=True): those edges get x2.5, then all of the seed's passage edges are
    scaled so their total is unchanged.
    """
    boosted = set(int(p) for p in boosted) & set(int(p) for p in passages)
    m = {int(p): (multiplier if int(p) in boosted else 1.0) for p in passages}
    if renormalise and boosted and passages:
        scale = len(passages) / sum(m.values())
        m = {p: v * scale for p, v in m.items()}
    return m


def adapted_adjacency(
    base: sp.csr_matrix,
    relation_part: sp.csr_matrix,
    context_part: sp.csr_matrix,
    relation_multipliers: dict[tuple[int, int], float],
    context_multipliers: dict[tuple[int, int], float],
) -> sp.csr_matrix:
    """A_q from the module docstring. Keys are (row node, column node) in the full node space."""
    rows, cols, vals = [], [], []
    for part, mult in ((relation_part, relation_multipliers), (context_part, context_multipliers)):
        for (u, v), m in mult.items():
            if m == 1.0:
                continue
            w = part[u, v]
            if w:
                rows.append(u)
                cols.append(v)
                vals.append((m - 1.0) * float(w))
    if not rows:
        return base
    delta = sp.csr_matrix((vals, (rows, cols)), shape=base.shape)
    out = (base + delta).tocsr()
    np.maximum(out.data, 0.0, out=out.data)  # phi = 0 removes the edge exactly (no -1e-17 left)
    out.eliminate_zeros()
    out.sort_indices()
    return out


def target_multipliers(
    seed_targets: dict[int, Iterable[int]],
    best_score: dict[int, int],
    skipped: Iterable[int],
    scale: float,
    skipped_weight: float,
) -> dict[tuple[int, int], float]:
    """CatRAG's code (``graph_search_with_fact_entities``): scores become weights per *target*.

    `best_score[v]` is the highest score any seed's LLM call gave v. Every seed u multiplies
    its whole edge u -> v (relation and synonym parts, parallel edges included) by
    phi(best_score[v]) x `scale`, whichever seed scored v; an edge to a target that some seed
    pruned (`skipped`) and none scored gets `skipped_weight`; other edges keep their weight.
    `seed_targets[u]`: the entity nodes u has an edge to.
    """
    skipped = set(int(v) for v in skipped)
    out: dict[tuple[int, int], float] = {}
    for u, targets in seed_targets.items():
        for v in targets:
            v = int(v)
            if v in best_score:
                out[(int(u), v)] = phi(best_score[v], scale)
            elif v in skipped:
                out[(int(u), v)] = skipped_weight
    return out
