"""Spreading-activation retrieval proper as it was before the speed work (commit 055e3bc),
timed part by part: the reference the benchmark times the fast path against, in the same run,
on the same mentions. The plain implementation is the test oracle tests/retrieve/qasa/sa_oracle.py
(full E x d float64 products for the vector seeds and the gate, the P x E passage product, a
full sort, and the trace paths by plain enumeration with a 200k budget)."""

from __future__ import annotations

import time

import numpy as np

from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa.passages import passage_activation_scores, rank_passages
from hopbench.retrieve.qasa.spread import spreading_activation
from tests.retrieve.qasa.sa_oracle import enumerate_top_paths


def reference_parts(r, question, mentions, k=10) -> tuple[dict, list[int]]:
    """Seconds per part and the top-k passage indices of the old pipeline for one question."""
    kg = r.kg
    q_emb = r.services.query_embedding(question)
    t0 = time.perf_counter()
    idx, act, _ = rules.seed_activations(
        mentions, kg.entity_index, r.vectors, r.desc_emb, r.seed_fallback_k
    )
    t1 = time.perf_counter()
    gate = r.gate_vector(q_emb)
    res = spreading_activation(
        r.adjacency, idx, act, gate, decay=r.decay, steps=r.depth, threshold=r.threshold
    )
    t2 = time.perf_counter()
    dense = r.passage_emb @ np.asarray(q_emb, dtype=np.float64)
    scores = passage_activation_scores(r.context, res.activation, res.activated)
    order = rank_passages(scores, dense)[:k]
    t3 = time.perf_counter()
    enumerate_top_paths(
        r.adjacency,
        res.activation,
        res.activated,
        idx,
        max_hops=r.path_max_hops,
        top=r.top_paths,
        budget=r.path_budget,
    )
    t4 = time.perf_counter()
    return {
        "seeds": t1 - t0,
        "gate_and_propagate": t2 - t1,
        "rank": t3 - t2,
        "paths": t4 - t3,
        "retrieval_total": t4 - t0,
    }, order.tolist()
