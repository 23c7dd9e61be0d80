"""LinearRAG (DEEP-PolyU/LinearRAG, docs/methods/linearrag.md) as its authors' code computes it.

- `ner`: their spaCy pass (entities per passage, entities per sentence, question entities);
- `graph`: their entity-passage graph with sentence structure and adjacent-passage edges;
- `activation`: seeds and both entity-activation paths (BFS and the vectorized one);
- `scoring`: passage reset weights (dense score and entity bonus);
- `retriever`: the retriever (``retriever=linearrag``), PPR by hopbench's kernel.
"""
