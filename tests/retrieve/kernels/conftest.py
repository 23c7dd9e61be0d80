"""Graphs the kernel tests share: a real entity-passage graph from the MuSiQue subset corpus."""

from __future__ import annotations

import json

import pytest

from tests.helpers.synthetic_graphs import title_mention_graph


@pytest.fixture(scope="session")
def musique_graph(data_dir):
    """Title-mention graph of the 1,890-passage MuSiQue subset corpus (about 3.5k nodes)."""
    corpus = json.loads((data_dir / "musique" / "musique_train_corpus.json").read_text())
    return title_mention_graph([p["title"] for p in corpus], [p["text"] for p in corpus])
