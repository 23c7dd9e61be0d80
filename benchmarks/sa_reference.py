"""Spreading-activation retrieval proper as it was before the speed work (commit 055e3bc):
the reference the benchmark times the fast path against, in the same run, on the same
mentions. Full E x d float64 products for the vector seeds and the gate, the P x E passage
product, a full sort, and the trace paths by plain enumeration with a 200k budget."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve import activation_rules as rules
from hopbench.retrieve.kernels import paths as path_kernels
from hopbench.retrieve.kernels.passages import passage_activation_scores, rank_passages
from hopbench.retrieve.kernels.spread import spreading_activation


def reference_parts(r, question, mentions, k=10) -> tuple[dict, list[int]]:
    """Seconds per part and the top-k passage indices of the old pipeline for one question."""
    kg = r.kg
    q_emb = r.services.query_embedding(question)
    t0 = time.perf_counter()
    idx, act, _ = rules.seed_activations(mentions, kg.entity_index, r.vectors, r.desc_emb, r.seed_fallback_k)
    t1 = time.perf_counter()
    gate = r.gate_vector(q_emb)
    res = spreading_activation(r.adjacency, idx, act, gate, decay=r.decay, steps=r.depth, threshold=r.threshold)
    t2 = time.perf_counter()
    dense = r.passage_emb @ np.asarray(q_emb, dtype=np.float64)
    scores = passage_activation_scores(r.context, res.activation, res.activated)
    order = rank_passages(scores, dense)[:k]
    t3 = time.perf_counter()
    enumerate_top_paths(r.adjacency, res.activation, res.activated, idx, max_hops=r.path_max_hops,
                        top=r.top_paths, budget=r.path_budget)
    t4 = time.perf_counter()
    return {"seeds": t1 - t0, "gate_and_propagate": t2 - t1, "rank": t3 - t2, "paths": t4 - t3,
            "retrieval_total": t4 - t0}, order.tolist()


def enumerate_top_paths(adj: sp.csr_matrix, activation: np.ndarray, activated: np.ndarray, seeds: np.ndarray,
              *, max_hops: int = path_kernels.PATH_MAX_HOPS, top: int = path_kernels.TOP_PATHS, budget: int = 200_000
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
            nbrs = indices[indptr[last]:indptr[last + 1]]
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
    # each path has at most one reverse, so the 2*top best hold the answer
    return path_kernels.heaviest_distinct_paths(found, top, 2 * top), complete
