// The authors' path block: simple paths of 1-4 RELATES_TO hops from a seed through activated
// entities, weight = mean activation (summed left to right); one row per relationship sequence
// of their schema ({{PATH_COPIES}}), the $top_paths heaviest rows.
CALL (seed_map, resource_map) {
    MATCH path = (seed:{{ENTITY}})-[:RELATES_TO*1..4]-(target:{{ENTITY}})
    WHERE seed.name IN keys(seed_map)
      AND resource_map[target.name] IS NOT NULL
      AND seed <> target
      AND ALL(n IN nodes(path) WHERE resource_map[n.name] IS NOT NULL)
      AND ALL(i IN range(0, size(nodes(path)) - 2) WHERE NOT nodes(path)[i] IN nodes(path)[(i + 1)..])
    WITH path, reduce(w = 0.0, n IN nodes(path) | w + resource_map[n.name]) / size(nodes(path)) AS weight
    UNWIND range(1, {{PATH_COPIES}}) AS copy
    WITH [n IN nodes(path) | n.name] AS names, weight
    ORDER BY weight DESC, names ASC  // names: equal weights in one order whatever else the database holds
    LIMIT $top_paths
    RETURN collect({names: names, weight: weight}) AS paths
}
