from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The scripted OpenAI-compatible server lives with the LLM tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))


@pytest.fixture(scope="session")
def musique_sub(data_dir):
    from hopbench.data import load_dataset

    return load_dataset("musique_sub", "musique", data_dir / "musique/musique_qa_sub.json",
                        data_dir / "musique/musique_sub_corpus.json")
