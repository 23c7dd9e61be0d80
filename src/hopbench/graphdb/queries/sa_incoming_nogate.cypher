    // the ungated ablation: no cosine factor
    WITH dst, s * $decay AS incoming
