"""hopbench.embed.texts_key: the embedding cache's file name for an encoder and its texts.

Why: a key that changed would orphan every cached vector (a cold cache, hours of encoding), and a
key that ignored the order, the encoder or `alone` would hand one text's vectors to another.
"""

from __future__ import annotations

from hopbench.embed.encoder import Encoder
from hopbench.embed.texts_key import texts_key

IDENTITY = "st:all-MiniLM-L6-v2"
TEXTS = ["a passage", "é"]


def test_the_key_is_the_one_the_cache_was_written_with():
    """Digests of the formula the encoder used before the key had a module of its own."""
    assert texts_key(IDENTITY, TEXTS) == (
        "e322741711a954ddf818db3d2ca8c04299b04cfba3b981844500f4c4212e7a82"
    )
    assert texts_key(IDENTITY, TEXTS, alone=True) == (
        "72b63830376bee5aa7202125824159cf4df24f5fdcaff115882a63bac7e5def4"
    )


def test_order_encoder_and_alone_each_change_the_key():
    keys = {
        texts_key(IDENTITY, TEXTS),
        texts_key(IDENTITY, TEXTS[::-1]),
        texts_key(IDENTITY + "|onnx", TEXTS),
        texts_key(IDENTITY, TEXTS, alone=True),
        texts_key(IDENTITY, ["a passageé"]),  # texts are separated, not concatenated
    }
    assert len(keys) == 5
    assert texts_key(IDENTITY, ["\ud800"])  # a lone surrogate still has a key


def test_the_encoder_keys_its_cache_files_with_it():
    enc = Encoder(show_progress=False)  # the model loads on first use only: not here
    assert enc.cache_key(TEXTS) == texts_key(enc.identity, TEXTS)
    assert enc.cache_key(TEXTS, alone=True) == texts_key(enc.identity, TEXTS, alone=True)
    assert enc._model is None
