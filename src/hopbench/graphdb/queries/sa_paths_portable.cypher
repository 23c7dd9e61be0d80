// The authors' path block (as in the map form) on the sorted (ids, acts) lists: membership by
// IN, a node's activation by binary search.
CALL (seed_ids, ids, acts) {
    MATCH path = (seed:{{ENTITY}})-[:RELATES_TO*1..4]-(target:{{ENTITY}})
    WHERE seed.idx IN seed_ids
      AND target.idx IN ids
      AND seed <> target
      AND ALL(n IN nodes(path) WHERE n.idx IN ids)
      AND ALL(i IN range(0, size(nodes(path)) - 2) WHERE NOT nodes(path)[i] IN nodes(path)[(i + 1)..])
    WITH path, reduce(w = 0.0, n IN nodes(path) | w + acts[
             reduce(b = [0, size(ids)], it IN range(1, $search_steps) |
                 CASE WHEN b[0] >= b[1] THEN b
                      WHEN ids[(b[0] + b[1]) / 2] < n.idx THEN [(b[0] + b[1]) / 2 + 1, b[1]]
                      ELSE [b[0], (b[0] + b[1]) / 2] END)[0]]) / size(nodes(path)) AS weight
    UNWIND range(1, {{PATH_COPIES}}) AS copy
    WITH [n IN nodes(path) | n.name] AS names, weight
    ORDER BY weight DESC, names ASC  // names: equal weights in one order whatever else the database holds
    LIMIT $top_paths
    RETURN collect({names: names, weight: weight}) AS paths
}
