// One synchronous step (kernels.spread) on the sorted (ids, acts) lists: the deltas are
// computed from the lists of the step before, then merged by entity index (old + incoming).
CALL (ids, acts) {
    UNWIND range(0, size(ids) - 1) AS k
    WITH ids, acts, k
    WHERE acts[k] > $threshold
    MATCH (:Entity {idx: ids[k]})-[r:RELATES_TO]-(dst:Entity)
    WITH ids, acts, acts[k] AS src_a, r.count AS c, dst,
         reduce(b = [0, size(ids)], it IN range(1, $search_steps) |
             CASE WHEN b[0] >= b[1] THEN b
                  WHEN ids[(b[0] + b[1]) / 2] < dst.idx THEN [(b[0] + b[1]) / 2 + 1, b[1]]
                  ELSE [b[0], (b[0] + b[1]) / 2] END)[0] AS pos
    WITH src_a, c, dst,
         CASE WHEN pos < size(ids) AND ids[pos] = dst.idx THEN acts[pos] END AS dst_a
    WHERE dst_a IS NULL OR dst_a < src_a
    WITH dst, sum(src_a * c) AS s
{{INCOMING}}
    WHERE incoming > $threshold
    RETURN collect(dst.idx) AS new_ids, collect(incoming) AS new_inc
}
CALL (ids, acts, new_ids, new_inc) {
    UNWIND range(0, size(ids) + size(new_ids) - 1) AS k
    WITH CASE WHEN k < size(ids) THEN ids[k] ELSE new_ids[k - size(ids)] END AS i,
         CASE WHEN k < size(ids) THEN acts[k] ELSE new_inc[k - size(ids)] END AS a
    WITH i, sum(a) AS a
    ORDER BY i
    RETURN collect(i) AS next_ids, collect(a) AS next_acts
}
WITH seed_ids, seed_acts, next_ids AS ids, next_acts AS acts
