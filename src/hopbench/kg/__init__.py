"""The shared knowledge graph: extractors (spacy, llm, an OpenIE file), builder, persistence, statistics.

Build or load (cached by content hash of corpus, extractor, models and settings)::

    from hopbench.kg import load_or_build, normalize_name
    kg = load_or_build(dataset, cfg.graph, encoder=encoder, llm=llm, cache_dir=cfg.paths.cache_dir)

What a retriever reads (E entities, P passages, F facts; all embeddings L2-normalised float32):

* nodes: ``kg.entity_names[i]`` (normalised), ``kg.entity_labels[i]`` (surface form),
  ``kg.entity_descriptions[i]``; ``kg.passage_ids[j]`` in `dataset.corpus` order;
  ``kg.node_ids`` (entities then passages: ``"e:<name>"`` and the passage id);
  ``kg.entity_index(normalize_name(text))``, ``kg.passage_index(pid)``, ``kg.passage_node(j)``,
  ``kg.title_entity(j)``.
* embeddings: ``entity_embeddings`` (E,d), ``description_embeddings`` (E,d),
  ``passage_embeddings`` (P,d), ``fact_embeddings`` (F,d) of ``kg.fact_text(f)``.
* facts: ``fact_subject``/``fact_object`` (entity indices), ``fact_relation`` (str),
  ``fact_passage`` (source passage index); ``facts_of_entity(e)``, ``facts_between(u, v)``.
* edges: ``kg.relation`` (E,E; count of facts joining the pair), ``kg.synonym`` (E,E; cosine),
  ``kg.context`` (P,E; 1 if the passage mentions the entity); ``passages_of_entity(e)``,
  ``entities_of_passage(j)``, ``entity_passage_counts()``.
* ``kg.adjacency(relation=1, synonym=1, context=1)``: one symmetric (E+P)x(E+P) CSR with
  per-type multipliers (HippoRAG 2's effective weights: relation=2, synonym=2, context=1).
* ``graph.construction=hipporag2`` (`hopbench.kg.hipporag2`): the graph HippoRAG 2's code builds;
  there relation/synonym hold half of HippoRAG's per-pair weight of each type (a synonym entry
  replaces the fact count of its direction) and facts embed as the tuple's string.
* ``kg.to_networkx()``; ``kg.failed_passages``; ``kg.manifest`` (inputs, counts, timings).
"""

from hopbench.kg.builder import load_or_build
from hopbench.kg.graph import EDGE_TYPES, KnowledgeGraph, entity_node_id
from hopbench.kg.text import normalize_name

__all__ = ["EDGE_TYPES", "KnowledgeGraph", "entity_node_id", "load_or_build", "normalize_name"]
