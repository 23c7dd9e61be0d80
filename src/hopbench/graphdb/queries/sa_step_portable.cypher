// One synchronous step (kernels.spread) on the sorted (ids, acts) lists: the deltas are
// computed from the lists of the step before (sources in `known` order), then merged by
// entity index (old + incoming).
// `< src_a * $tie_factor`: values within 1e-12 relative are a tie (kernels.spread.TIE_FACTOR).
CALL (ids, acts, known) {
    UNWIND range(0, size(known) - 1) AS pos
    WITH ids, acts, pos, known[pos] AS src,
         reduce(b = [0, size(ids)], it IN range(1, $search_steps) |
             CASE WHEN b[0] >= b[1] THEN b
                  WHEN ids[(b[0] + b[1]) / 2] < known[pos] THEN [(b[0] + b[1]) / 2 + 1, b[1]]
                  ELSE [b[0], (b[0] + b[1]) / 2] END)[0] AS spos
    WITH ids, acts, pos, src, acts[spos] AS src_a
    WHERE src_a > $threshold
    MATCH (:{{ENTITY}} {idx: src})-[r:RELATES_TO]-(dst:{{ENTITY}})
    WITH ids, acts, pos, src_a, r.{{EDGE_WEIGHT}} AS c, dst,
         reduce(b = [0, size(ids)], it IN range(1, $search_steps) |
             CASE WHEN b[0] >= b[1] THEN b
                  WHEN ids[(b[0] + b[1]) / 2] < dst.idx THEN [(b[0] + b[1]) / 2 + 1, b[1]]
                  ELSE [b[0], (b[0] + b[1]) / 2] END)[0] AS dpos
    WITH pos, src_a, c, dst,
         CASE WHEN dpos < size(ids) AND ids[dpos] = dst.idx THEN acts[dpos] END AS dst_a
    WHERE dst_a IS NULL OR dst_a < src_a * $tie_factor
    WITH dst, pos, src_a * c AS contribution
    ORDER BY pos
    WITH dst, collect(contribution) AS parts
    WITH dst, reduce(acc = 0.0, x IN parts | acc + x) AS s
{{INCOMING}}
    WHERE incoming > $threshold
    RETURN collect(dst.idx) AS new_ids, collect(incoming) AS new_inc
}
CALL (ids, acts, new_ids, new_inc) {
    UNWIND range(0, size(ids) + size(new_ids) - 1) AS k
    WITH CASE WHEN k < size(ids) THEN 1 ELSE 0 END AS old,
         CASE WHEN k < size(ids) THEN ids[k] ELSE new_ids[k - size(ids)] END AS i,
         CASE WHEN k < size(ids) THEN acts[k] ELSE new_inc[k - size(ids)] END AS a
    WITH i, sum(a) AS a, max(old) AS was_known
    ORDER BY i
    RETURN collect(i) AS next_ids, collect(a) AS next_acts,
           collect(CASE WHEN was_known = 0 THEN i END) AS new_known
}
WITH seed_ids, seed_acts, next_ids AS ids, next_acts AS acts, known + new_known AS known
