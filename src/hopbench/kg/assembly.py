"""hopbench's graph construction: extraction records -> a `KnowledgeGraph`.

Names are normalised and interned (passage titles and NER entities are nodes too), facts are
deduplicated per passage, and the relation, synonym and passage-entity matrices are built; the
vectors come from kg/graph_vectors.py. `graph.construction: hipporag2` hands the same records to
HippoRAG 2's own construction instead (kg/hipporag2.py).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage
from hopbench.kg import graph_vectors, hipporag2
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.graph import KnowledgeGraph
from hopbench.kg.stage_timing import timed
from hopbench.kg.synonyms import synonym_matrix
from hopbench.kg.text import clean_text, normalize_name


def assemble_graph(
    corpus: list[Passage],
    records: dict[str, PassageExtraction],
    encoder,
    settings: dict,
    passage_emb: np.ndarray,
    llm=None,
    timings: dict | None = None,
    descriptions: bool = True,
) -> KnowledgeGraph:
    """Normalise names, intern entities, deduplicate facts, build the three matrices and embeddings.

    `settings["construction"]` hipporag2: HippoRAG 2's own construction instead (kg/hipporag2.py).
    `descriptions` False: text-mode description vectors are deferred (kg/description_layer.py)."""
    timings = {} if timings is None else timings
    if settings.get("construction", "hopbench") == "hipporag2":
        return hipporag2.assemble_hipporag2(
            corpus,
            records,
            encoder,
            settings,
            passage_emb,
            llm=llm,
            timings=timings,
            descriptions=descriptions,
        )
    t = time.perf_counter()
    index: dict[str, int] = {}
    labels: list[str] = []
    first_seen: list[
        tuple[int, str]
    ] = []  # (passage index, surface form) of each entity's first mention
    ctx_rows: list[int] = []
    ctx_cols: list[int] = []
    title_entity = np.full(len(corpus), -1, dtype=np.int64)
    facts: dict[tuple[int, str, int, int], None] = {}
    failed: list[str] = []
    n_empty = 0

    def intern(surface: str, p: int) -> int | None:
        name = normalize_name(surface)
        if not name:
            return None
        i = index.get(name)
        if i is None:
            i = index[name] = len(labels)
            labels.append(" ".join(surface.split()))
            first_seen.append((p, surface))
        return i

    for p_idx, passage in enumerate(corpus):
        rec = records.get(passage.id)
        if rec is None:
            raise HopbenchError(
                f"no extraction record for passage {passage.id} ({passage.title!r})"
            )
        if rec.status != "ok":
            failed.append(passage.id)
        if not passage.text.strip():
            n_empty += 1
        ents: set[int] = set()
        t_idx = intern(clean_text(passage.title).strip(), p_idx)
        if t_idx is not None:
            title_entity[p_idx] = t_idx
            ents.add(t_idx)
        for surface in rec.entities:
            i = intern(surface, p_idx)
            if i is not None:
                ents.add(i)
        for s, r, o in rec.triples:
            si, oi = intern(s, p_idx), intern(o, p_idx)
            rel = " ".join(r.lower().split())
            if si is None or oi is None or si == oi or not rel:
                continue
            ents.update((si, oi))
            facts.setdefault((si, rel, oi, p_idx), None)
        for e in sorted(ents):
            ctx_rows.append(p_idx)
            ctx_cols.append(e)

    names = list(index)
    n_ent, n_pas = len(names), len(corpus)
    fact_list = list(facts)
    f_s = np.array([f[0] for f in fact_list], dtype=np.int64)
    f_r = [f[1] for f in fact_list]
    f_o = np.array([f[2] for f in fact_list], dtype=np.int64)
    f_p = np.array([f[3] for f in fact_list], dtype=np.int64)

    context = sp.csr_matrix(
        (np.ones(len(ctx_rows), dtype=np.float32), (ctx_rows, ctx_cols)), shape=(n_pas, n_ent)
    )
    context.sum_duplicates()
    context.data[:] = 1.0
    rel_rows = np.concatenate([f_s, f_o])
    rel_cols = np.concatenate([f_o, f_s])
    relation = sp.csr_matrix(
        (np.ones(len(rel_rows), dtype=np.float32), (rel_rows, rel_cols)), shape=(n_ent, n_ent)
    )
    relation.sum_duplicates()
    relation.sort_indices()
    timings["assemble"] = time.perf_counter() - t

    fact_texts = [f"{names[s]} {r} {names[o]}" for s, r, o in zip(f_s, f_r, f_o)]
    entity_descriptions, entity_emb, fact_emb, desc_emb = graph_vectors.describe_and_embed(
        corpus,
        names,
        labels,
        first_seen,
        f_s,
        f_r,
        f_o,
        fact_texts,
        encoder,
        settings,
        passage_emb,
        llm,
        timings,
        descriptions,
    )

    syn = settings["synonym"]
    with timed(timings, "synonyms"):
        synonym = synonym_matrix(
            entity_emb,
            names,
            threshold=float(syn["threshold"]),
            max_neighbors=int(syn["max_neighbors"]),
            min_alnum_chars=int(syn["min_alnum_chars"]),
        )

    manifest = {
        "counts": {
            "entities": n_ent,
            "passages": n_pas,
            "facts": len(fact_list),
            "relation_edges": int(relation.nnz // 2),
            "synonym_edges": int(synonym.nnz // 2),
            "context_edges": int(context.nnz),
            "failed_passages": len(failed),
            "empty_passages": n_empty,
            "unique_fact_texts": len(set(fact_texts)),
            "llm_descriptions": timings.pop("llm_descriptions", 0),
            "llm_description_failures": timings.pop("llm_description_failures", 0),
        },
    }
    if desc_emb is None:
        manifest["description_embeddings"] = "deferred"
    return KnowledgeGraph(
        entity_names=names,
        entity_labels=labels,
        entity_descriptions=entity_descriptions,
        passage_ids=[p.id for p in corpus],
        fact_subject=f_s,
        fact_relation=f_r,
        fact_object=f_o,
        fact_passage=f_p,
        entity_embeddings=entity_emb,
        description_embeddings=desc_emb,
        passage_embeddings=passage_emb,
        fact_embeddings=fact_emb,
        relation=relation,
        synonym=synonym,
        context=context,
        passage_title_entity=title_entity,
        failed_passages=failed,
        manifest=manifest,
    )
