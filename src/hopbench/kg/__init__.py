"""The shared knowledge graph: extractors (spacy, llm), builder, persistence, statistics.

    from hopbench.kg import load_or_build, normalize_name
    kg = load_or_build(dataset, cfg.graph, encoder=encoder, llm=llm, cache_dir=cfg.paths.cache_dir)
    A = kg.adjacency(relation=1.0, synonym=1.0, context=1.0)   # (E+P) x (E+P) CSR
"""

from hopbench.kg.builder import load_or_build
from hopbench.kg.graph import EDGE_TYPES, KnowledgeGraph, entity_node_id
from hopbench.kg.text import normalize_name

__all__ = ["EDGE_TYPES", "KnowledgeGraph", "entity_node_id", "load_or_build", "normalize_name"]
