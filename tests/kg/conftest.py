"""Real datasets and built graphs shared by the kg tests (built once per session)."""

from __future__ import annotations

import pytest

from hopbench.data import load_dataset


@pytest.fixture(scope="session")
def musique_sub(data_dir):
    return load_dataset("musique_sub", "musique", data_dir / "musique/musique_qa_sub.json",
                        data_dir / "musique/musique_sub_corpus.json")


@pytest.fixture(scope="session")
def hotpotqa(data_dir):
    return load_dataset("hotpotqa", "hotpotqa", data_dir / "hotpotqa/hotpotqa_train.json",
                        data_dir / "hotpotqa/hotpotqa_train_corpus.json")


@pytest.fixture(scope="session")
def musique_kg(musique_sub, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(musique_sub, None, encoder=encoder, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def hotpotqa_kg(hotpotqa, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(hotpotqa, None, encoder=encoder, cache_dir=cache_dir)
