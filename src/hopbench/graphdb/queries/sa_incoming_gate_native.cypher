    // the authors' gate with Neo4j's built-in function (their GDS call): vector.similarity.cosine
    // returns (1 + cos) / 2, computed in float32, so cos = 2 x that - 1
    WITH dst, s, CASE WHEN dst.desc_emb IS NULL THEN 0.0
                      ELSE 2.0 * vector.similarity.cosine(dst.desc_emb, $qe) - 1.0 END AS cq
    WITH dst, s * $decay * CASE WHEN cq > 0.0 THEN cq ELSE 0.0 END AS incoming
