// Passages (activation_rules rule 4: kernels.passages), then the result row.
CALL (ids, acts) {
    UNWIND range(0, size(ids) - 1) AS k
    MATCH (e:{{ENTITY}} {idx: ids[k]})<-[:MENTIONS]-(p:{{PASSAGE}})
    WITH p, ids[k] AS ei, acts[k] AS a
    ORDER BY ei
    WITH p, collect(a) AS parts
{{RANK}}
}
{{FILL}}
RETURN seed_ids, seed_acts, ids, acts, scored + fill AS ranked, paths
