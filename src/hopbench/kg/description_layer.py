"""Description vectors as a layer of their own, made the first time a retriever reads them.

Why: with `graph.description.embedding: text` (the default), encoding one description per
entity is the largest stage of a cold build after the passages, yet only QASA and QAFD's
description-seeded variants read the vectors. A graph built for any other retriever is saved
without them (`manifest["description_embeddings"] = "deferred"`); the first run that needs them
encodes the stored description texts exactly as the build would have (the same texts in the same
order and batch size: the same vectors, the same embedding-cache entry) and keeps them beside the
graph as `description_embeddings.npy`, checksummed. The graph hash does not change: the layer is a
function of what the hash already covers.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from hopbench.core import checksum
from hopbench.core.errors import HopbenchError
from hopbench.kg.encoding import encode_unique, short_text_batches

log = logging.getLogger(__name__)

LAYER = "description_embeddings.npy"


def load_layer(folder: str | Path) -> np.ndarray | None:
    """The layer's vectors, or None when it was never made (or was damaged: then it is removed
    and made again, since it is a cache of what the stored texts give)."""
    path = Path(folder) / LAYER
    if not path.exists():
        return None
    try:
        return checksum.load_npy(path)
    except checksum.Damaged as exc:
        log.warning("%s; the description vectors are encoded again", exc)
        checksum.remove(path)
        return None


def encode_descriptions(encoder, descriptions: list[str], settings: dict) -> np.ndarray:
    """What the build encodes for the descriptions (`describe_and_embed`, text mode)."""
    with short_text_batches(encoder, settings["short_text_batch_size"]):
        return encode_unique(encoder, list(descriptions), "descriptions")


def add_description_layer(kg, folder: str | Path, encoder, settings: dict) -> None:
    """Give `kg` its description vectors: from the layer beside it, else encoded and saved there.
    The caller holds the graph's build lock."""
    if kg.description_embeddings is not None:
        return
    if settings["description"]["embedding"] != "text":  # composed vectors are always built
        raise HopbenchError(
            f"{folder}: the graph has no description vectors; delete the folder to rebuild"
        )
    emb = load_layer(folder)
    if emb is not None and emb.shape != (kg.n_entities, kg.entity_embeddings.shape[1]):
        log.warning(
            "%s: shape %s does not fit the graph; encoded again", Path(folder) / LAYER, emb.shape
        )
        emb = None
    if emb is None:
        t = time.perf_counter()
        emb = encode_descriptions(encoder, kg.entity_descriptions, settings)
        checksum.save_npy(Path(folder) / LAYER, emb)
        kg.manifest.setdefault("timings", {})["embed_descriptions"] = time.perf_counter() - t
        log.info(
            "description vectors of %d entities added to %s in %.1fs",
            kg.n_entities,
            folder,
            time.perf_counter() - t,
        )
    kg.description_embeddings = emb
