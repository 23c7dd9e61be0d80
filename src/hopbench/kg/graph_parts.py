"""The tail both graph constructions share: from entities, facts and edges to a `KnowledgeGraph`.

Why: hopbench's construction (kg/assembly.py) and HippoRAG 2's (kg/hipporag2.py) read the
extraction records differently (which names are entities, how facts are counted, how synonyms
weigh), and agree on everything after: descriptions and vectors (kg/graph_vectors.py), the
synonym limits, the manifest's counts and the graph they return. One tail, so a field added
to the graph or its manifest is added once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hopbench.data.schema import Passage
from hopbench.kg import graph_vectors
from hopbench.kg.graph import KnowledgeGraph


@dataclass
class GraphParts:
    """What a construction read from the records, before any vector is made."""

    corpus: list[Passage]
    names: list[str]  # normalised entity names, in node order
    labels: list[str]  # a surface form per entity, as shown to readers
    first_seen: list[tuple[int, str]]  # (passage index, surface form) of each first mention
    fact_subject: np.ndarray
    fact_relation: list[str]
    fact_object: np.ndarray
    fact_passage: np.ndarray
    fact_texts: list[str]  # the text each fact is embedded as
    context: sp.csr_matrix  # passage x entity
    failed: list[str]  # passage ids whose extraction failed
    n_empty: int  # passages without text


@dataclass
class BuildInputs:
    """The build's services and settings, as `kg.builder` hands them to a construction."""

    encoder: object
    settings: dict
    passage_emb: np.ndarray
    llm: object
    timings: dict
    descriptions: bool  # False: text-mode description vectors deferred (kg/description_layer.py)


@dataclass
class GraphVectors:
    entity_descriptions: list[str]
    entity_emb: np.ndarray
    fact_emb: np.ndarray
    desc_emb: np.ndarray | None  # None: deferred


def embed_parts(parts: GraphParts, inputs: BuildInputs) -> GraphVectors:
    """Descriptions and the vectors of names, facts and descriptions (kg/graph_vectors.py)."""
    return GraphVectors(
        *graph_vectors.describe_and_embed(
            parts.corpus,
            parts.names,
            parts.labels,
            parts.first_seen,
            parts.fact_subject,
            parts.fact_relation,
            parts.fact_object,
            parts.fact_texts,
            inputs.encoder,
            inputs.settings,
            inputs.passage_emb,
            inputs.llm,
            inputs.timings,
            inputs.descriptions,
        )
    )


def synonym_limits(settings: dict) -> dict:
    """The `graph.synonym` settings as keyword arguments of either synonym search."""
    syn = settings["synonym"]
    return {
        "threshold": float(syn["threshold"]),
        "max_neighbors": int(syn["max_neighbors"]),
        "min_alnum_chars": int(syn["min_alnum_chars"]),
    }


def finish_graph(
    parts: GraphParts,
    inputs: BuildInputs,
    vectors: GraphVectors,
    *,
    relation: sp.csr_matrix,
    synonym: sp.csr_matrix,
    title_entity: np.ndarray,
    manifest_head: dict | None = None,
    extra_counts: dict | None = None,
    **extra_fields,
) -> KnowledgeGraph:
    """The graph and its manifest: `manifest_head` first (a construction's own keys), then the
    counts every graph has, a construction's `extra_counts` before the LLM description counts;
    `extra_fields` are a construction's own `KnowledgeGraph` fields."""
    counts = {
        "entities": len(parts.names),
        "passages": len(parts.corpus),
        "facts": len(parts.fact_texts),
        "relation_edges": int(relation.nnz // 2),
        "synonym_edges": int(synonym.nnz // 2),
        "context_edges": int(parts.context.nnz),
        "failed_passages": len(parts.failed),
        "empty_passages": parts.n_empty,
        "unique_fact_texts": len(set(parts.fact_texts)),
        **(extra_counts or {}),
        "llm_descriptions": inputs.timings.pop("llm_descriptions", 0),
        "llm_description_failures": inputs.timings.pop("llm_description_failures", 0),
    }
    manifest = {**(manifest_head or {}), "counts": counts}
    if vectors.desc_emb is None:
        manifest["description_embeddings"] = "deferred"
    return KnowledgeGraph(
        entity_names=parts.names,
        entity_labels=parts.labels,
        entity_descriptions=vectors.entity_descriptions,
        passage_ids=[p.id for p in parts.corpus],
        fact_subject=parts.fact_subject,
        fact_relation=parts.fact_relation,
        fact_object=parts.fact_object,
        fact_passage=parts.fact_passage,
        entity_embeddings=vectors.entity_emb,
        description_embeddings=vectors.desc_emb,
        passage_embeddings=inputs.passage_emb,
        fact_embeddings=vectors.fact_emb,
        relation=relation,
        synonym=synonym,
        context=parts.context,
        passage_title_entity=title_entity,
        failed_passages=parts.failed,
        manifest=manifest,
        **extra_fields,
    )
