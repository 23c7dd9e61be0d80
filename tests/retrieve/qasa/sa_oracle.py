"""Spreading-activation retrieval written plainly: the test oracle of the fast retriever.

The rules of `hopbench.retrieve.qasa.activation_rules`, one after the other, with no speed work:
full E x d float64 products for the vector seeds and the gate, the P x E passage product, a
full sort of the passages, and the trace paths by plain depth-first enumeration. The
retriever must give the same ranking, activations and paths (tests/retrieve/
test_sa_oracle.py); benchmarks/speed/retrievers.py times it beside the retriever.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa import paths as path_kernels
from hopbench.retrieve.qasa.passages import passage_activation_scores, rank_passages
from hopbench.retrieve.qasa.spread import semantic_gate, spreading_activation


@dataclass
class OracleResult:
    seeds: np.ndarray  # seed entity indices, by activation
    seed_activation: np.ndarray
    activation: np.ndarray  # (E,) after propagation
    activated: np.ndarray  # (E,) bool
    order: np.ndarray  # every passage index, best first
    paths: list[tuple[list[int], float]]
    paths_complete: bool


def oracle_retrieve(
    kg,
    passage_emb: np.ndarray,
    q_emb: np.ndarray,
    mentions: list[str],
    embed,
    *,
    decay: float = 0.7,
    depth: int = 3,
    threshold: float = 0.01,
    gate: bool = True,
    seed_fallback_k: int = rules.SEED_FALLBACK_TOTAL,
    top_paths: int = path_kernels.TOP_PATHS,
    path_max_hops: int = path_kernels.PATH_MAX_HOPS,
    path_budget: int = 200_000,
    seed_score: str = "index",
    seed_norm: str = "all",
    edges: str = "pairs",
) -> OracleResult:
    """Rules 2-5 for one question whose mentions (rule 1) are given."""
    desc = np.asarray(kg.description_embeddings, dtype=np.float64)
    adj = sp.csr_matrix(rules.relation_matrix(kg, edges), dtype=np.float64)
    idx, act, _ = rules.seed_activations(
        mentions, kg.entity_index, embed, desc, seed_fallback_k, score=seed_score, norm=seed_norm
    )
    g = semantic_gate(desc, np.asarray(q_emb, dtype=np.float64)) if gate else None
    res = spreading_activation(adj, idx, act, g, decay=decay, steps=depth, threshold=threshold)
    dense = np.asarray(passage_emb, dtype=np.float64) @ np.asarray(q_emb, dtype=np.float64)
    scores = passage_activation_scores(kg.context.tocsr(), res.activation, res.activated)
    order = rank_passages(scores, dense)
    paths, complete = enumerate_top_paths(
        adj,
        res.activation,
        res.activated,
        idx,
        max_hops=path_max_hops,
        top=top_paths,
        budget=path_budget,
    )
    return OracleResult(idx, act, res.activation, res.activated, order, paths, complete)


def enumerate_top_paths(
    adj: sp.csr_matrix,
    activation: np.ndarray,
    activated: np.ndarray,
    seeds: np.ndarray,
    *,
    max_hops: int = path_kernels.PATH_MAX_HOPS,
    top: int = path_kernels.TOP_PATHS,
    budget: int = 200_000,
) -> tuple[list[tuple[list[int], float]], bool]:
    """The heaviest simple seed -> target paths through activated nodes (rule 5).

    Returns ([(node indices, mean activation)], complete). The enumeration stops after
    `budget` partial paths (hub-heavy graphs can hold millions); `complete` is False then
    and the list is the best among those enumerated.
    """
    act = np.where(activated, activation, 0.0)
    indptr, indices = adj.indptr, adj.indices
    found: list[tuple[float, tuple[int, ...]]] = []
    expanded = 0
    complete = True
    seed_list = [int(s) for s in seeds if activated[s]]
    for s in seed_list:
        stack: list[tuple[tuple[int, ...], float]] = [((s,), float(act[s]))]
        while stack:
            path, total = stack.pop()
            last = path[-1]
            nbrs = indices[indptr[last] : indptr[last + 1]]
            for v in nbrs:
                v = int(v)
                if not activated[v] or v in path:
                    continue
                expanded += 1
                p2, t2 = path + (v,), total + float(act[v])
                found.append((t2 / len(p2), p2))
                if len(p2) <= max_hops:
                    stack.append((p2, t2))
            if expanded >= budget:
                complete = False
                break
        if not complete:
            break
    # the heaviest by (weight desc, node sequence), a path whose reverse is listed dropped;
    # each path has at most one reverse, so the 2*top best hold the answer
    out, kept = [], set()
    for w, p in heapq.nsmallest(2 * top, found, key=lambda t: (-t[0], t[1])):
        if p not in kept and p[::-1] not in kept:
            kept.add(p)
            out.append((list(p), w))
    return out[:top], complete
