// Passages (activation_rules rule 4: kernels.passages), then the result row.
CALL (resource_map) {
    UNWIND keys(resource_map) AS name
    MATCH (e:{{ENTITY}} {name: name})<-[:MENTIONS]-(p:{{PASSAGE}})
    WITH p, e.idx AS ei, resource_map[name] AS a
    ORDER BY ei
    WITH p, collect(a) AS parts
{{RANK}}
}
{{FILL}}
RETURN seed_map, resource_map AS activation, scored + fill AS ranked, paths
