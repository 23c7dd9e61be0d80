// Without APOC a map cannot get new keys, so the state is two lists sorted by entity index:
// ids (entity idx) and acts (their activation); a node's value is found by binary search.
// `known` lists the entities in the order the kernel visits sources (seeds by index, then each
// step's new entities by index), so every sum is taken in the kernel's order.
WITH e.idx AS i, a
ORDER BY i
WITH collect(i) AS ids, collect(a) AS acts
WITH ids AS seed_ids, acts AS seed_acts, ids, acts, ids AS known
