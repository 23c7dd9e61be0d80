"""Batches of texts with (almost) equal TOKEN counts, so the encoder computes little padding.

Why: sentence-transformers (and our ONNX path before this) sort texts by character length.
For the short texts a graph build encodes most of (entity names, "subject relation object"
facts) characters predict word pieces badly: on 6,000 2Wiki facts in batches of 64, sorting by
characters padded the input to 1.55x its tokens, sorting by tokens to 1.02x, and the int8 ONNX
forward pass took 4.84 s against 3.02 s (benchmarks/speed/results/kg_build_fast.md).
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from hopbench.core.text_bounds import cut_for_tokenizer

# texts tokenised per call: the tokenizer's memory is bounded by this many cut texts
TOKENIZE_AT_ONCE = 4096


def token_lengths(tokenizer, texts: Sequence[str], max_length: int) -> np.ndarray:
    """Word pieces per text (special tokens included), after truncation to `max_length`. Each
    text is cut first (`hopbench.core.text_bounds`): a fast tokenizer tokenises the whole of
    a text even with `truncation=True`."""
    texts = cut_for_tokenizer(texts, max_length)
    parts = [np.zeros(0, dtype=np.int64)]
    for start in range(0, len(texts), TOKENIZE_AT_ONCE):
        enc = tokenizer(
            texts[start : start + TOKENIZE_AT_ONCE],
            truncation=True,
            max_length=max_length,
            padding=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        parts.append(lengths_of(enc["input_ids"]))
    return np.concatenate(parts)


def lengths_of(input_ids: Sequence[Sequence[int]]) -> np.ndarray:
    """Lengths of unpadded token-id lists, as an int64 array."""
    return np.fromiter((len(ids) for ids in input_ids), dtype=np.int64, count=len(input_ids))


def length_sorted_batches(lengths: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Index arrays of at most `batch_size` texts, longest first (an out-of-memory error, if
    any, comes at once); ties keep input order, so the batching is deterministic."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths), kind="stable")
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def padded_fraction(lengths: np.ndarray, batches: list[np.ndarray]) -> float:
    """Padded positions / real tokens - 1 over `batches` (0.0 = no padding at all)."""
    lengths = np.asarray(lengths)
    real = int(lengths.sum())
    padded = sum(int(lengths[b].max()) * len(b) for b in batches if len(b))
    return padded / real - 1.0 if real else 0.0
