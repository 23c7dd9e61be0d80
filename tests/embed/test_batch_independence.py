"""A question's vector does not depend on which other questions are encoded with it (issue
#28, item 16): a resumed run encodes only the questions left, and before this its scores
differed from an uninterrupted run's by ~1e-7. Compared bit for bit, on real questions."""

from __future__ import annotations

import numpy as np
import pytest

from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.retrieve.base import Services


@pytest.fixture(scope="module")
def musique(data_dir):
    return load_dataset(
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )


def test_a_question_alone_and_in_a_batch_get_the_same_bits(musique, tmp_path):
    """Services.encode_questions on 40 questions, then (fresh, as a resumed run would) on every
    7th of them and on each of four questions alone: every vector bit-equal."""

    def services():
        enc = Encoder(cache_dir=tmp_path / "cache", show_progress=False, batch_size=16)
        return Services(dataset=musique, encoder=enc)

    questions = musique.questions[:40]
    everything = services()
    everything.encode_questions(questions)
    some = services()
    some.encode_questions(questions[3::7])
    for q in questions[3::7]:
        assert np.array_equal(some.query_embedding(q), everything.query_embedding(q)), q.id
    for q in questions[:4]:
        alone = services()
        alone.encode_questions([q])
        assert np.array_equal(alone.query_embedding(q), everything.query_embedding(q)), q.id
