// Seeds (activation_rules rule 2): a mention equal to an entity name seeds it with a = 1.0;
// any other mention takes its top $k_per_mention entities by cosine of its search text
// (m.emb) with their DESCRIPTION embedding: the index's best $vector_rerank of
// $vector_candidates hits (its float32 scores), re-ranked by the exact float64 dot product
// (ties by entity index). Score: $seed_index ? (1 + cos) / 2 : max(cos, 0). $seed_norm_all:
// every score / the largest over all seeds; else / the mention's best (mention skipped when 0).
// An entity seeded by several mentions keeps its largest score.
UNWIND $mentions AS m
OPTIONAL MATCH (exact:{{ENTITY}} {name: m.name})
CALL (m, exact) {
    WITH exact WHERE exact IS NOT NULL
    RETURN exact AS e, 1.0 AS a
  UNION ALL
    WITH m, exact WHERE exact IS NULL
    CALL db.index.vector.queryNodes('{{ENTITY_INDEX}}', $vector_candidates, m.emb)
    YIELD node, score
    WITH m, node ORDER BY score DESC LIMIT $vector_rerank
    WITH m, node, node.desc_emb AS de
    WITH node, reduce(acc = 0.0, i IN range(0, size(de) - 1) | acc + de[i] * m.emb[i]) AS cos
    ORDER BY cos DESC, node.idx ASC
    LIMIT $k_per_mention
    WITH collect({e: node, c: CASE WHEN $seed_index THEN (1.0 + cos) / 2.0
                                   WHEN cos > 0.0 THEN cos ELSE 0.0 END}) AS hits
    WITH hits, reduce(mx = 0.0, h IN hits | CASE WHEN h.c > mx THEN h.c ELSE mx END) AS mx
    WHERE $seed_norm_all OR mx > 0.0
    UNWIND hits AS h
    RETURN h.e AS e, CASE WHEN $seed_norm_all THEN h.c ELSE h.c / mx END AS a
}
WITH e, max(a) AS a
WITH collect({e: e, a: a}) AS rows, max(a) AS top
WHERE NOT $seed_norm_all OR top > 0.0
UNWIND rows AS r
WITH r.e AS e, CASE WHEN $seed_norm_all THEN r.a / top ELSE r.a END AS a
