// Fewer than $k passages scored: the rest by dense cosine (candidates from the passage vector
// index, re-ranked by the exact float64 dot product, ties by corpus order).
CALL (scored) {
    WITH scored WHERE size(scored) < $k
    CALL db.index.vector.queryNodes('{{PASSAGE_INDEX}}', $dense_candidates, $qe)
    YIELD node
    WITH node AS p, [s IN scored | s.idx] AS taken
    WHERE NOT p.idx IN taken
    WITH p, p.emb AS pe
    WITH p, reduce(acc = 0.0, i IN range(0, size(pe) - 1) | acc + pe[i] * $qe[i]) AS dense
    ORDER BY dense DESC, p.idx ASC
    LIMIT $k
    RETURN collect({id: p.id, idx: p.idx, score: dense, dense: dense, by_activation: false}) AS fill
}
