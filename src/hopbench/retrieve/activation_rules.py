"""The rules of spreading-activation retrieval, shared by the in-memory and the Neo4j versions.

QASA (methods.md §3) returns entities and paths, not passages, and seeds from an LLM. The
harness fixes every step, so the two implementations give the same ranking:

1. Mentions: `hopbench.retrieve.question.question_mentions` (spaCy, the KG's own reading
   of entities), or with ``mentions: llm`` the entities an LLM names, normalised the same way.
2. Seeds (`seed_activations`): a mention equal to an entity name seeds that entity with
   a = 1.0. Any other mention is embedded and searched among the entity DESCRIPTION
   embeddings: its top k = max(1, 5 // n_mentions) entities by cosine (k per mention; n counts
   all mentions), with a = max(cos, 0) / max of those clamped cosines (the mention is skipped
   when that max is 0). An entity seeded by several mentions keeps its largest a.
3. Propagation: `hopbench.retrieve.kernels.spread.spreading_activation` on the ENTITY x ENTITY
   matrix ``kg.relation`` as stored: symmetric, A[u, v] = number of facts whose subject and
   object are {u, v} in either direction, i.e. the number of RELATES_TO relationships
   between u and v when the graph holds one relationship per fact (the Cypher counts one
   row per relationship; self-loops never contribute). Gate = `semantic_gate(kg.description_
   embeddings, question embedding)`; the ablation passes no gate.
4. Passages: `hopbench.retrieve.kernels.passages`: score(p) = the sum of the activations of
   the activated entities passage p contains; scored passages first (score, then dense
   cosine), then the rest by dense cosine.
5. Trace paths: `hopbench.retrieve.kernels.paths.top_paths`: the 30 heaviest simple paths of
   1 to 4 hops from a seed through activated nodes, weight = mean activation.

The plain version of all five steps, with no speed work, is tests/retrieve/sa_oracle.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from hopbench.retrieve.kernels.topk import TopKSearch, full_product_top_k

SEED_FALLBACK_TOTAL = 5  # QASA's seed_vector_fallback_k


def fallback_k(n_mentions: int, total: int = SEED_FALLBACK_TOTAL) -> int:
    return max(1, total // max(n_mentions, 1))


def seed_activations(mentions: Sequence[str], entity_index: Callable[[str], int | None],
                     embed: Callable[[list[str]], np.ndarray], description_embeddings: np.ndarray,
                     total: int = SEED_FALLBACK_TOTAL, search: TopKSearch | None = None
                     ) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """(entity indices, activations, per-seed detail) by rule 2 of the module docstring.

    entity_index maps a normalised name to its entity index (None if absent); embed turns
    the unmatched mentions into L2-normalised vectors (called once, only if needed).
    search(vectors, k) gives each vector's top-k description rows and their cosines; by
    default the full float64 product (`full_product_top_k`), which a faster exact search
    (`hopbench.retrieve.kernels.topk.ExactTopK.search`) may replace.
    Indices come out sorted by activation descending, then index.
    """
    best: dict[int, float] = {}
    why: dict[int, dict] = {}

    def offer(e: int, a: float, detail: dict) -> None:
        if e not in best or a > best[e]:
            best[e] = a
            why[e] = detail

    unmatched = []
    for m in mentions:
        e = entity_index(m)
        if e is not None:
            offer(int(e), 1.0, {"mention": m, "match": "exact"})
        else:
            unmatched.append(m)
    if unmatched and len(description_embeddings):
        k = min(fallback_k(len(mentions), total), len(description_embeddings))
        vecs = np.asarray(embed(unmatched), dtype=np.float64)
        if search is None:
            hits = full_product_top_k(description_embeddings, vecs, k)
        else:
            hits = search(vecs, k)
        for m, (top, raw) in zip(unmatched, hits, strict=True):
            c = np.maximum(raw, 0.0)
            if c.max() <= 0:
                continue
            for e, ce, r in zip(top, c, raw):
                offer(int(e), float(ce / c.max()), {"mention": m, "match": "vector", "cos": float(r)})
    order = sorted(best, key=lambda e: (-best[e], e))
    idx = np.array(order, dtype=np.int64)
    act = np.array([best[e] for e in order], dtype=np.float64)
    return idx, act, [{"entity": e, "activation": best[e], **why[e]} for e in order]

