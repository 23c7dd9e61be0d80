"""Retrievers (one module per method) and their numeric kernels (pure functions)."""

from hopbench.retrieve.base import Retrieval, Retriever, Services

__all__ = ["Retrieval", "Retriever", "Services"]
