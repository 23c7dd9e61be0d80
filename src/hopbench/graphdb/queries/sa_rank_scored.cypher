    // score(p) = sum of the activations of its entities, added in entity-index order
    WITH p, reduce(acc = 0.0, x IN parts | acc + x) AS score
    WHERE score > 0.0
    WITH p, score
    ORDER BY score DESC
    WITH collect({p: p, score: score}) AS ranked
    // dense cosine only for the top $k and the passages tied with the k-th score
    WITH ranked, CASE WHEN size(ranked) >= $k THEN ranked[$k - 1].score ELSE 0.0 END AS cutoff
    UNWIND ranked AS r
    WITH r WHERE r.score >= cutoff
    WITH r.p AS p, r.score AS score, r.p.emb AS pe
    WITH p, score, reduce(acc = 0.0, i IN range(0, size(pe) - 1) | acc + pe[i] * $qe[i]) AS dense
    ORDER BY score DESC, dense DESC, p.idx ASC
    LIMIT $k
    RETURN collect({id: p.id, idx: p.idx, score: score, dense: dense, by_activation: true}) AS scored
