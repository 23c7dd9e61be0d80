"""The question-side vectors of the LinearRAG parity runs, made the same way wherever they are made.

A text encoded on its own (a batch of one, `Encoder.encode(..., alone=True)`) gets a vector
whose last bits depend on torch's intra-op thread count: up to ~2e-7 on this machine between
one and two threads, while batches of many texts came out bit for bit the same. The embedding
cache does not key on the thread count, so a cache written by another process can hold either.
The questions and question entities given to the authors' code are therefore encoded here,
uncached, at one thread: by compare.py, and again by the fixture test, so both see one vector.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

THREADS = 1


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op thread count set to n inside the block, restored after it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@lru_cache(maxsize=4)
def _uncached(model: str, max_seq_length: int | None, backend: str):
    from hopbench.embed import Encoder

    return Encoder(
        model=model,
        cache_dir=None,
        max_seq_length=max_seq_length,
        show_progress=False,
        backend=backend,
    )


def question_side_vectors(encoder, texts: Sequence[str], threads: int = THREADS) -> np.ndarray:
    """`texts` each encoded alone at `threads` threads, by `encoder`'s model, without its cache."""
    fresh = _uncached(encoder.model_name, encoder.max_seq_length, encoder.backend)
    if not texts:
        return np.zeros((0, fresh.dim), dtype=np.float32)
    with torch_threads(threads):
        return np.asarray(fresh.encode(list(texts), alone=True), dtype=np.float32)
