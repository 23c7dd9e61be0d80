// The activation state is one map: entity name -> activation (the paper's resource_map).
// `known` lists the map's keys in the order the kernel visits sources (seeds by entity index,
// then each step's new entities by index), so every sum is taken in the kernel's order.
WITH e, a
ORDER BY e.idx
WITH apoc.map.fromPairs(collect([e.name, a])) AS resource_map, collect(e.name) AS known
WITH resource_map AS seed_map, resource_map, known
