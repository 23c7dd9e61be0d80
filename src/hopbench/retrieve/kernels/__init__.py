"""Numeric kernels of the graph retrievers: pure functions over scipy CSR matrices and numpy
arrays, vectorised, each tested against an independent reference (tests/retrieve/kernels).

One module per kind of computation; import from the module (nothing is re-exported here, so
a new kernel is a new module and nothing else):

- `ppr`: Personalized PageRank (HippoRAG 2, CatRAG), single and batched;
- `spread`: spreading activation with the semantic gate (QASA);
- `flow`: QAFD's query-aware flow diffusion;
- `passages`: passage scores from entity activations and the shared passage order;
- `paths`: the heaviest activated seed -> target paths (spreading-activation traces);
- `topk`: exact top-k, full product and quantised pre-scan (`ExactTopK`);
- `catrag`: CatRAG's edge multipliers and query-adapted adjacency;
- `coref`: NeuroPath's coreference sets;
- `graphs`: synthetic graphs for the tests and benchmarks.
"""
