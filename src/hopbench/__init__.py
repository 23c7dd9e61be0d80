"""hopbench: compare graph-RAG traversal methods on one shared knowledge graph."""

__version__ = "0.1.0"
