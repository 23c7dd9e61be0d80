// One synchronous step (kernels.spread): sources are read from the map of the step before,
// the new values are merged after the subquery. Undirected RELATES_TO, count x activation.
CALL (resource_map) {
    UNWIND keys(resource_map) AS src_name
    WITH resource_map, src_name, resource_map[src_name] AS src_a
    WHERE src_a > $threshold
    MATCH (:Entity {name: src_name})-[r:RELATES_TO]-(dst:Entity)
    WHERE resource_map[dst.name] IS NULL OR resource_map[dst.name] < src_a
    WITH dst, sum(src_a * r.count) AS s
{{INCOMING}}
    WHERE incoming > $threshold
    RETURN collect({name: dst.name, incoming: incoming}) AS deltas
}
WITH seed_map,
     apoc.map.merge(resource_map, apoc.map.fromPairs(
         [d IN deltas | [d.name, coalesce(resource_map[d.name], 0.0) + d.incoming]])) AS resource_map
