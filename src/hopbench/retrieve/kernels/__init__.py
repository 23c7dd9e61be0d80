"""Numeric kernels several graph retrievers share: pure functions over scipy CSR matrices and
numpy arrays, vectorised, each tested against an independent reference (tests/retrieve/kernels).
A kernel of one method lives in its folder (retrieve/qafd/flow.py, retrieve/catrag/kernels.py,
retrieve/neuropath/coref.py, ...).

One module per kind of computation; import from the module (nothing is re-exported here, so
a new kernel is a new module and nothing else):

- `ppr`: Personalized PageRank (HippoRAG 2, CatRAG), single and batched;
- `spread`: spreading activation with the semantic gate (QASA);
- `passages`: passage scores from entity activations and the shared passage order;
- `paths`: the heaviest activated seed -> target paths (spreading-activation traces);
- `topk`: exact top-k, full product and quantised pre-scan (`ExactTopK`);
- `graphs`: synthetic graphs for the tests and benchmarks.
"""
