"""hopbench's graph construction: extraction records -> a `KnowledgeGraph`.

Names are normalised and interned (passage titles and NER entities are nodes too), facts are
deduplicated per passage, and the relation, synonym and passage-entity matrices are built; the
vectors and the graph come from the tail both constructions share (kg/graph_parts.py).
`graph.construction: hipporag2` hands the same records to HippoRAG 2's own construction instead
(kg/hipporag2.py).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage
from hopbench.kg import hipporag2
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.graph import KnowledgeGraph
from hopbench.kg.graph_parts import (
    BuildInputs,
    GraphParts,
    embed_parts,
    finish_graph,
    synonym_limits,
)
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
    inputs = BuildInputs(encoder, settings, passage_emb, llm, timings, descriptions)
    t = time.perf_counter()
    parts, title_entity = read_records(corpus, records)
    relation = fact_counts(parts.fact_subject, parts.fact_object, len(parts.names))
    timings["assemble"] = time.perf_counter() - t

    vectors = embed_parts(parts, inputs)
    with timed(timings, "synonyms"):
        synonym = synonym_matrix(vectors.entity_emb, parts.names, **synonym_limits(settings))
    return finish_graph(
        parts, inputs, vectors, relation=relation, synonym=synonym, title_entity=title_entity
    )


class _Entities:
    """Entities interned by normalised name, in order of first mention."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.labels: list[str] = []
        self.first_seen: list[tuple[int, str]] = []  # (passage index, surface form)

    def intern(self, surface: str, p: int) -> int | None:
        name = normalize_name(surface)
        if not name:
            return None
        i = self.index.get(name)
        if i is None:
            i = self.index[name] = len(self.labels)
            self.labels.append(" ".join(surface.split()))
            self.first_seen.append((p, surface))
        return i


def read_records(
    corpus: list[Passage], records: dict[str, PassageExtraction]
) -> tuple[GraphParts, np.ndarray]:
    """Entities (passage titles and NER entities are nodes too), facts deduplicated per passage,
    and the passage-entity matrix; with each passage's title entity (-1: none)."""
    entities = _Entities()
    ctx_rows: list[int] = []
    ctx_cols: list[int] = []
    title_entity = np.full(len(corpus), -1, dtype=np.int64)
    facts: dict[tuple[int, str, int, int], None] = {}
    failed: list[str] = []
    n_empty = 0
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
        t_idx = entities.intern(clean_text(passage.title).strip(), p_idx)
        if t_idx is not None:
            title_entity[p_idx] = t_idx
            ents.add(t_idx)
        for surface in rec.entities:
            i = entities.intern(surface, p_idx)
            if i is not None:
                ents.add(i)
        for s, r, o in rec.triples:
            si, oi = entities.intern(s, p_idx), entities.intern(o, p_idx)
            rel = " ".join(r.lower().split())
            if si is None or oi is None or si == oi or not rel:
                continue
            ents.update((si, oi))
            facts.setdefault((si, rel, oi, p_idx), None)
        for e in sorted(ents):
            ctx_rows.append(p_idx)
            ctx_cols.append(e)

    names = list(entities.index)
    fact_list = list(facts)
    f_s = np.array([f[0] for f in fact_list], dtype=np.int64)
    f_r = [f[1] for f in fact_list]
    f_o = np.array([f[2] for f in fact_list], dtype=np.int64)
    f_p = np.array([f[3] for f in fact_list], dtype=np.int64)
    context = sp.csr_matrix(
        (np.ones(len(ctx_rows), dtype=np.float32), (ctx_rows, ctx_cols)),
        shape=(len(corpus), len(names)),
    )
    context.sum_duplicates()
    context.data[:] = 1.0
    parts = GraphParts(
        corpus=corpus,
        names=names,
        labels=entities.labels,
        first_seen=entities.first_seen,
        fact_subject=f_s,
        fact_relation=f_r,
        fact_object=f_o,
        fact_passage=f_p,
        fact_texts=[f"{names[s]} {r} {names[o]}" for s, r, o in zip(f_s, f_r, f_o)],
        context=context,
        failed=failed,
        n_empty=n_empty,
    )
    return parts, title_entity


def fact_counts(f_s: np.ndarray, f_o: np.ndarray, n_ent: int) -> sp.csr_matrix:
    """The relation matrix: symmetric, [u, v] = the number of facts between u and v."""
    rel_rows = np.concatenate([f_s, f_o])
    rel_cols = np.concatenate([f_o, f_s])
    relation = sp.csr_matrix(
        (np.ones(len(rel_rows), dtype=np.float32), (rel_rows, rel_cols)), shape=(n_ent, n_ent)
    )
    relation.sum_duplicates()
    relation.sort_indices()
    return relation
