    // gate_v = max(0, cos(description embedding, question)) from the stored vectors, exact float64
    WITH dst, s, dst.desc_emb AS de
    WITH dst, s,
         CASE WHEN de IS NULL THEN 0.0
              ELSE reduce(acc = 0.0, i IN range(0, size(de) - 1) | acc + de[i] * $qe[i])
                   / (dst.desc_norm * $qe_norm) END AS cq
    WITH dst, s * $decay * CASE WHEN cq > 0.0 THEN cq ELSE 0.0 END AS incoming
