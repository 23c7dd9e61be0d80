// The activation state is one map: entity name -> activation (the paper's resource_map).
WITH apoc.map.fromPairs(collect([e.name, a])) AS resource_map
WITH resource_map AS seed_map, resource_map
