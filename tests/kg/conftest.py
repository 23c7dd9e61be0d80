"""Real datasets and built graphs shared by the kg tests (built once per session)."""

from __future__ import annotations

import pytest

from hopbench.data import load_dataset


@pytest.fixture(scope="session")
def hotpotqa(data_dir):
    return load_dataset(
        "hotpotqa",
        "hotpotqa",
        data_dir / "hotpotqa/hotpotqa_train.json",
        data_dir / "hotpotqa/hotpotqa_train_corpus.json",
    )


@pytest.fixture(scope="session")
def hotpotqa_kg(hotpotqa, encoder, cache_dir):
    from hopbench.kg import load_or_build

    return load_or_build(hotpotqa, None, encoder=encoder, cache_dir=cache_dir)
