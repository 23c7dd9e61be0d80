"""Dense retrieval equals a brute-force numpy ranking over the same embeddings."""

import numpy as np

from hopbench.data import load_dataset
from hopbench.retrieve.base import Services
from hopbench.retrieve.baselines.dense import DenseRetriever


def test_dense_equals_numpy_argsort(data_dir, encoder):
    ds = load_dataset(
        "musique_sub",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )
    services = Services(dataset=ds, encoder=encoder)
    r = DenseRetriever()
    r.prepare(None, services)
    P = services.passage_embeddings
    for q in ds.questions:
        got = r.retrieve(q, 10)
        sims = P @ services.query_embedding(q)
        order = np.argsort(-sims, kind="stable")[:10]
        assert got.passage_ids == [ds.corpus[i].id for i in order]
        np.testing.assert_allclose(got.scores, sims[order], atol=1e-5)
        assert got.scores == sorted(got.scores, reverse=True)


def test_k_larger_than_corpus(data_dir, encoder):
    ds = load_dataset(
        "musique_sub",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )
    r = DenseRetriever()
    r.prepare(None, Services(dataset=ds, encoder=encoder))
    assert len(r.retrieve(ds.questions[0], 50).passage_ids) == 18
