"""HippoRAG 2 (and HippoRAG 1 seeding): its retriever, the seeding other methods hold, its prompt."""
