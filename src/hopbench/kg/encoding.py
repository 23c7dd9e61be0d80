"""Encoding a graph's texts: larger batches for short texts, each distinct text once."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np


@contextmanager
def short_text_batches(encoder, size: int):
    """Names, facts and descriptions in larger batches than passages (`short_text_batch_size`).
    For fp32 backends the batch size changes speed only; int8 backends' vectors depend on it,
    so it is in their `Encoder.identity` (embedding cache key), and `cache_keys` records it."""
    old = getattr(encoder, "batch_size", None)
    if old is None or not size:
        yield
        return
    encoder.batch_size = max(old, int(size))
    try:
        yield
    finally:
        encoder.batch_size = old


def encode_unique(encoder, texts: list[str], desc: str) -> np.ndarray:
    """Encode each distinct text once (facts repeat across passages), then scatter back."""
    uniq = list(dict.fromkeys(texts))
    emb = encoder.encode(uniq, desc=desc)
    if len(uniq) == len(texts):
        return emb
    pos = {t: i for i, t in enumerate(uniq)}
    return emb[[pos[t] for t in texts]] if texts else emb
