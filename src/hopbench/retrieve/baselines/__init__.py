"""Baselines without a graph: BM25 (lexical) and hybrid (dense and BM25 fused by reciprocal
rank); docs/methods/baselines.md."""
