"""Synonym edges from faiss against a brute-force numpy reference on real entity embeddings."""

from __future__ import annotations

import numpy as np

from hopbench.kg.synonyms import synonym_matrix


def reference(emb, names, threshold, max_neighbors, min_alnum):
    n = len(names)
    ok = [i for i in range(n) if sum(c.isalnum() for c in names[i]) >= min_alnum]
    sims = emb @ emb.T
    dense = np.zeros((n, n), dtype=np.float32)
    for i in ok:
        cand = sorted(
            (j for j in ok if j != i and sims[i, j] >= threshold), key=lambda j: -sims[i, j]
        )
        for j in cand[:max_neighbors]:
            dense[i, j] = dense[j, i] = sims[i, j]
    return dense


def test_matches_brute_force(musique_kg):
    emb, names = musique_kg.entity_embeddings, musique_kg.entity_names
    for threshold, cap in ((0.8, 100), (0.5, 3), (0.3, 1)):
        ours = synonym_matrix(emb, names, threshold=threshold, max_neighbors=cap).toarray()
        ref = reference(emb, names, threshold, cap, 3)
        np.testing.assert_allclose(ours, ref, atol=1e-5)
        assert (ours == ours.T).all()
    # the capped variant really caps: some entity has more candidates than it keeps
    assert (synonym_matrix(emb, names, threshold=0.3, max_neighbors=1) > 0).sum() > 0


def test_short_names_get_no_synonyms():
    emb = np.array([[1, 0], [1, 0], [1, 0.01]], dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    m = synonym_matrix(emb, ["ab", "abc", "abd"], threshold=0.8)
    assert m[0].nnz == 0 and m[1, 2] > 0.99 and m[2, 1] == m[1, 2]
