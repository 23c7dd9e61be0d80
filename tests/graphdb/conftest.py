"""Graphs for the Neo4j export and spreading-activation tests (built once per cache)."""

from __future__ import annotations

import pytest

from hopbench.data import load_dataset
from hopbench.retrieve.base import Services


@pytest.fixture(scope="session")
def musique_dataset(data_dir):
    """HippoRAG's 100-question MuSiQue subset over its 1,890 passages."""
    return load_dataset("musique", "musique", data_dir / "musique/musique_train.json",
                        data_dir / "musique/musique_train_corpus.json")


@pytest.fixture(scope="session")
def musique_graph(musique_dataset, encoder, cache_dir):
    """The spaCy graph of the 1,890 passages (minutes to build once; cached by content hash)."""
    from hopbench.kg import load_or_build

    return load_or_build(musique_dataset, None, encoder=encoder, cache_dir=cache_dir)


def make_services(dataset, encoder, graphdb_settings) -> Services:
    s = Services(dataset=dataset, encoder=encoder, graphdb={"uri": graphdb_settings.uri,
                                                            "user": graphdb_settings.user,
                                                            "password": graphdb_settings.password})
    s.encode_questions(dataset.questions)
    return s
