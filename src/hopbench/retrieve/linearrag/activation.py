"""LinearRAG's seeds and entity activation (their ``get_seed_entities``, ``calculate_entity_scores``
and ``calculate_entity_scores_vectorized``), with their arithmetic: float32 similarities, their
accumulation order and their dictionary updates, so thresholds fall where theirs do.

An activation result is (entity weights (E,) float64, activated): ``activated`` maps an
entity index to (score, tier) in their dictionary's insertion order; the passage scores read
it (`hopbench.retrieve.linearrag.scoring`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


def link_seeds(
    entity_embeddings: np.ndarray, mention_embeddings: np.ndarray
) -> tuple[list[int], list[np.float32]]:
    """Each question entity -> the graph entity of highest cosine (first index on a tie)."""
    sims = np.dot(entity_embeddings, mention_embeddings.T)
    best = [int(np.argmax(sims[:, j])) for j in range(sims.shape[1])]
    return best, [sims[b, j] for j, b in enumerate(best)]


def bfs_activation(
    seeds: Sequence[int],
    seed_scores: Sequence,
    question_embedding: np.ndarray,
    sentence_embeddings: np.ndarray,
    entity_sentences: Sequence[Sequence[int]],
    sentence_entities: Sequence[Sequence[int]],
    *,
    max_iterations: int,
    threshold: float,
    top_k_sentence: int,
) -> tuple[np.ndarray, dict]:
    """Their default path: per active entity (score >= threshold), its `top_k_sentence` unused
    sentences closest to the question; each entity there gets score x sentence cosine if that
    reaches the threshold (added to its weight; the last one is its activation and tier).
    Seeds have tier 1; the loop runs while something is active, `max_iterations` - 1 times."""
    weights = np.zeros(len(entity_sentences))
    activated: dict[int, tuple] = {}
    for e, score in zip(seeds, seed_scores):
        activated[e] = (score, 1)
        weights[e] = score
    q = question_embedding.reshape(-1, 1) if question_embedding.ndim == 1 else question_embedding
    used: set[int] = set()
    current = activated.copy()
    iteration = 1
    while current and iteration < max_iterations:
        new: dict[int, tuple] = {}
        for e, (score, _tier) in current.items():
            if score < threshold:
                continue
            sentences = [s for s in entity_sentences[e] if s not in used]
            if not sentences:
                continue
            sims = np.dot(sentence_embeddings[sentences], q).flatten()
            for t in np.argsort(sims)[::-1][:top_k_sentence]:
                sentence = sentences[t]
                used.add(sentence)
                for nxt in sentence_entities[sentence]:
                    nxt_score = score * sims[t]
                    if nxt_score < threshold:
                        continue
                    weights[nxt] += nxt_score
                    new[nxt] = (nxt_score, iteration + 1)
        activated.update(new)
        current = new.copy()
        iteration += 1
    return weights, activated


def mention_matrix(entity_sentences: Sequence[Sequence[int]], n_sentences: int) -> sp.csr_matrix:
    """(E, S) float32, 1 where entity e is in sentence s (their entity-to-sentence matrix)."""
    rows = [e for e, ss in enumerate(entity_sentences) for _ in ss]
    cols = [s for ss in entity_sentences for s in ss]
    m = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)),
        shape=(len(entity_sentences), n_sentences),
    )
    m.sum_duplicates()
    m.sort_indices()
    return m


def vectorized_activation(
    seeds: Sequence[int],
    seed_scores: Sequence,
    question_embedding: np.ndarray,
    sentence_embeddings: np.ndarray,
    mentions: sp.csr_matrix,
    *,
    max_iterations: int,
    threshold: float,
    top_k_sentence: int,
) -> tuple[np.ndarray, dict]:
    """Their ``use_vectorized_retrieval`` path (float32, as their torch tensors). Per step, the
    active entities (>= threshold) each pick their `top_k_sentence` sentences unused before
    this step; a picked sentence carries (sum of its active entities' scores) x its cosine to
    every entity in it. All propagated scores add up; an entity whose step score reaches the
    threshold is recorded with that score and the step number (seeds: tier 0). Their code's
    quirks are kept: repeated seeds sum in the first step (a sparse tensor's coalesce) but
    the last one stands in the running total (scatter), and the final weights replace the
    seeds' with that total."""
    n_e, n_s = mentions.shape
    weights = np.zeros(n_e)
    q = question_embedding.reshape(-1, 1) if question_embedding.ndim == 1 else question_embedding
    sims = np.dot(sentence_embeddings, q).flatten().astype(np.float32)
    used = np.zeros(n_s, dtype=bool)
    current = np.zeros(n_e, dtype=np.float32)
    total = np.zeros(n_e, dtype=np.float32)
    activated: dict[int, tuple] = {}
    for e, score in zip(seeds, seed_scores):
        current[e] += np.float32(score)
        total[e] = np.float32(score)
        activated[e] = (score, 0)
        weights[e] = score
    mentions_t = mentions.T.tocsr()
    for step in range(1, max_iterations):
        current = np.where(current >= threshold, current, np.float32(0)).astype(np.float32)
        active = np.flatnonzero(current > 0)
        if active.size == 0:
            break
        activation = (mentions_t @ current).astype(np.float32)
        activation[used] = 0
        picked = []
        if top_k_sentence > 0:
            for e in active:
                row = mentions.indices[mentions.indptr[e] : mentions.indptr[e + 1]]
                free = row[~used[row]]
                if free.size == 0:
                    continue
                k = min(top_k_sentence, free.size)
                picked.append(free[np.argsort(-sims[free], kind="stable")[:k]])
        weighted = np.zeros(n_s, dtype=np.float32)
        if picked:
            chosen = np.unique(np.concatenate(picked))
            used[chosen] = True
            weighted[chosen] = activation[chosen] * sims[chosen]
        weighted = np.where(weighted > 0, weighted, np.float32(0)).astype(np.float32)
        nxt = (mentions @ weighted).astype(np.float32)
        total += nxt
        for e in np.flatnonzero(nxt >= threshold):
            activated[int(e)] = (float(nxt[e]), step)
        if not np.any(nxt > 0):
            break
        current = np.where(nxt > 0, nxt, np.float32(0)).astype(np.float32)
    for e in np.flatnonzero(total > 0):
        weights[e] = float(total[e])
    return weights, activated
