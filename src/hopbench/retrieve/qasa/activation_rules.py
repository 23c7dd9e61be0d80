"""The rules of spreading-activation retrieval, shared by the in-memory and the Neo4j versions.

QASA (docs/methods/qasa.md) returns entities and paths, not passages, and seeds from an LLM. The
harness fixes every step, so the two implementations give the same ranking:

1. Mentions: `hopbench.retrieve.question.question_mentions` (spaCy, the KG's own reading
   of entities), or with ``mentions: llm`` the entities an LLM names, normalised the same way.
2. Seeds (`seed_activations`): a mention equal to an entity name seeds that entity with
   a = 1.0. Any other mention is searched by its search text (the mention itself, or with
   ``mentions: llm`` the LLM's ``search_hint``) among the entity DESCRIPTION embeddings: its
   top k = max(1, 5 // n_mentions) entities by cosine (k per mention; n counts all mentions).
   An entity seeded by several mentions keeps its largest score. Two settings:
   ``seed_score: index`` (the authors') scores a hit as a cosine vector index does,
   (1 + cos) / 2; ``cosine`` (hopbench's earlier rule) as max(cos, 0).
   ``seed_norm: all`` (the authors') divides every score by the largest score over all seeds
   (1.0 as soon as one mention matched exactly); ``mention`` divides a mention's hits by that
   mention's best (a mention is skipped when its best is 0).
3. Propagation: `hopbench.retrieve.qasa.spread.spreading_activation` on an ENTITY x ENTITY
   matrix (`relation_matrix`). ``edges: pairs`` (the authors'): A[u, v] = the number of
   ordered pairs (u, v), (v, u) with at least one fact, i.e. one RELATES_TO relationship per
   ordered pair as their loader MERGEs it (1 or 2); ``edges: facts``: ``kg.relation`` as
   stored, the number of facts between u and v in either direction. Self-loops never
   contribute. Gate = `semantic_gate(kg.description_embeddings, question embedding)`; the
   ablation passes no gate.
4. Passages: `hopbench.retrieve.qasa.passages`: score(p) = the sum of the activations of
   the activated entities passage p contains; scored passages first (score, then dense
   cosine), then the rest by dense cosine.
5. Trace paths: `hopbench.retrieve.qasa.paths.top_paths`: the 30 heaviest simple paths of
   1 to 4 hops from a seed through activated nodes, weight = mean activation.

The plain version of all five steps, with no speed work, is tests/retrieve/qasa/sa_oracle.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.kernels.topk import TopKSearch, full_product_top_k

SEED_FALLBACK_TOTAL = 5  # QASA's seed_vector_fallback_k
SEED_SCORES = ("index", "cosine")  # the authors' (1 + cos) / 2; hopbench's earlier max(cos, 0)
SEED_NORMS = ("all", "mention")  # the authors' global max; hopbench's earlier per-mention max
EDGE_RULES = ("pairs", "facts")  # the authors' one edge per ordered pair; facts per pair


def relation_matrix(kg, edges: str = "pairs") -> sp.csr_matrix:
    """The propagation matrix of rule 3, symmetric float64 CSR without self-loops."""
    if edges == "facts":
        a = sp.csr_matrix(kg.relation, dtype=np.float64)
    elif edges == "pairs":
        s = np.asarray(kg.fact_subject, dtype=np.int64)
        o = np.asarray(kg.fact_object, dtype=np.int64)
        n = kg.n_entities
        ok = (s < n) & (o < n)  # a graph cut down by hand (tests) keeps facts of dropped entities
        ordered = sp.csr_matrix((np.ones(int(ok.sum())), (s[ok], o[ok])), shape=(n, n))
        ordered.data[:] = 1.0  # duplicates summed by the constructor: one per ordered pair
        # only where kg.relation has an edge (the same pattern for any graph the builder made)
        a = (ordered + ordered.T).multiply(sp.csr_matrix(kg.relation) != 0).tocsr()
    else:
        raise ValueError(f"edges must be one of {EDGE_RULES}, got {edges!r}")
    a = a.tolil()
    a.setdiag(0.0)
    a = a.tocsr()
    a.eliminate_zeros()
    a.sort_indices()
    return a


class Mention(NamedTuple):
    """A question entity with the text its vector search embeds (QASA's {name, search_hint})."""

    name: str
    search_hint: str


def split_mentions(mentions: Sequence[str | Mention]) -> tuple[list[str], list[str]]:
    """(names, search texts): a plain mention searches by itself."""
    names = [m.name if isinstance(m, Mention) else m for m in mentions]
    hints = [m.search_hint if isinstance(m, Mention) else m for m in mentions]
    return names, hints


def fallback_k(n_mentions: int, total: int = SEED_FALLBACK_TOTAL) -> int:
    return max(1, total // max(n_mentions, 1))


def seed_activations(
    mentions: Sequence[str],
    entity_index: Callable[[str], int | None],
    embed: Callable[[list[str]], np.ndarray],
    description_embeddings: np.ndarray,
    total: int = SEED_FALLBACK_TOTAL,
    search: TopKSearch | None = None,
    *,
    score: str = "index",
    norm: str = "all",
    hints: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """(entity indices, activations, per-seed detail) by rule 2 of the module docstring.

    entity_index maps a normalised name to its entity index (None if absent); embed turns
    the unmatched mentions' search texts (`hints`, default the mentions) into L2-normalised
    vectors (called once, only if needed).
    search(vectors, k) gives each vector's top-k description rows and their cosines; by
    default the full float64 product (`full_product_top_k`), which a faster exact search
    (`hopbench.retrieve.kernels.topk.ExactTopK.search`) may replace.
    Indices come out sorted by activation descending, then index.
    """
    if score not in SEED_SCORES:
        raise ValueError(f"seed score must be one of {SEED_SCORES}, got {score!r}")
    if norm not in SEED_NORMS:
        raise ValueError(f"seed norm must be one of {SEED_NORMS}, got {norm!r}")
    if hints is None:
        hints = mentions
    elif len(hints) != len(mentions):
        raise ValueError(f"{len(hints)} search hints for {len(mentions)} mentions")
    best: dict[int, float] = {}
    why: dict[int, dict] = {}
    unmatched = []
    for m, h in zip(mentions, hints):
        e = entity_index(m)
        if e is not None:
            _offer(best, why, int(e), 1.0, {"mention": m, "match": "exact"})
        else:
            unmatched.append((m, h))
    if unmatched and len(description_embeddings):
        k = min(fallback_k(len(mentions), total), len(description_embeddings))
        vecs = np.asarray(embed([h for _, h in unmatched]), dtype=np.float64)
        if search is None:
            hits = full_product_top_k(description_embeddings, vecs, k)
        else:
            hits = search(vecs, k)
        _offer_vector_hits(best, why, unmatched, hits, score, norm)
    if norm == "all" and best:
        best, why = _over_the_largest(best, why)
    order = sorted(best, key=lambda e: (-best[e], e))
    idx = np.array(order, dtype=np.int64)
    act = np.array([best[e] for e in order], dtype=np.float64)
    return idx, act, [{"entity": e, "activation": best[e], **why[e]} for e in order]


def _offer(best: dict[int, float], why: dict[int, dict], e: int, a: float, detail: dict) -> None:
    """Seed e at a unless it already has at least a (an entity keeps its largest score, and
    the detail of the first mention that gave it)."""
    if e not in best or a > best[e]:
        best[e] = a
        why[e] = detail


def _vector_scores(raw: np.ndarray, score: str, norm: str) -> np.ndarray | None:
    """One mention's hit scores from their cosines (rule 2's seed_score, then seed_norm
    mention); None when the mention is skipped (its best score is 0)."""
    c = (1.0 + raw) / 2.0 if score == "index" else np.maximum(raw, 0.0)
    if norm == "mention":
        if c.max() <= 0:
            return None
        c = c / c.max()
    return c


def _offer_vector_hits(
    best: dict[int, float],
    why: dict[int, dict],
    unmatched: list[tuple[str, str]],
    hits,
    score: str,
    norm: str,
) -> None:
    """Offer each unmatched mention's top-k entities (hits: (indices, cosines) per mention)."""
    for (m, h), (top, raw) in zip(unmatched, hits, strict=True):
        c = _vector_scores(raw, score, norm)
        if c is None:
            continue
        for e, ce, r in zip(top, c, raw):
            detail = {"mention": m, "match": "vector", "cos": float(r)}
            if h != m:
                detail["search_hint"] = h
            _offer(best, why, int(e), float(ce), detail)


def _over_the_largest(
    best: dict[int, float], why: dict[int, dict]
) -> tuple[dict[int, float], dict[int, dict]]:
    """seed_norm all: every score over the largest; no seeds when the largest is <= 0."""
    top_score = max(best.values())
    if top_score <= 0:
        return {}, {}
    return {e: a / top_score for e, a in best.items()}, why
