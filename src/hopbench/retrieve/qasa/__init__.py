"""QASA spreading activation: the in-memory and the Neo4j retriever, the rules both share,
their kernels and the prompt only they use."""
