// One synchronous step (kernels.spread): sources are read from the map of the step before,
// the new values are merged after the subquery. Undirected RELATES_TO, edge weight (count or pairs) x activation,
// added up source by source in `known` order (the kernel's order, so ties resolve alike).
// `< src_a * $tie_factor`: values within 1e-12 relative are a tie (kernels.spread.TIE_FACTOR).
CALL (resource_map, known) {
    UNWIND range(0, size(known) - 1) AS pos
    WITH resource_map, pos, known[pos] AS src_name, resource_map[known[pos]] AS src_a
    WHERE src_a > $threshold
    MATCH (:{{ENTITY}} {name: src_name})-[r:RELATES_TO]-(dst:{{ENTITY}})
    WHERE resource_map[dst.name] IS NULL OR resource_map[dst.name] < src_a * $tie_factor
    WITH dst, pos, src_a * r.{{EDGE_WEIGHT}} AS contribution
    ORDER BY pos
    WITH dst, collect(contribution) AS parts
    WITH dst, reduce(acc = 0.0, x IN parts | acc + x) AS s
{{INCOMING}}
    WHERE incoming > $threshold
    WITH dst, incoming
    ORDER BY dst.idx
    RETURN collect({name: dst.name, incoming: incoming}) AS deltas
}
WITH seed_map,
     known + [d IN deltas WHERE resource_map[d.name] IS NULL | d.name] AS known,
     apoc.map.merge(resource_map, apoc.map.fromPairs(
         [d IN deltas | [d.name, coalesce(resource_map[d.name], 0.0) + d.incoming]])) AS resource_map
