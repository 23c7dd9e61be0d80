"""Description vectors deferred to the first retriever that reads them (kg/description_layer.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hopbench.embed import Encoder
from hopbench.kg import load_or_build
from hopbench.kg.description_layer import LAYER
from hopbench.retrieve.catrag.catrag import CatRAGRetriever
from hopbench.retrieve.hipporag.hipporag import HippoRAGRetriever
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever
from hopbench.retrieve.qafd.flow_diffusion import FlowDiffusionRetriever
from hopbench.retrieve.qafd.flow_diffusion_code import QAFDCodeRetriever
from hopbench.retrieve.qasa.spreading_activation import SpreadingActivationRetriever


def _folder(kg, cache: Path) -> Path:
    return cache / "kg" / "graphs" / kg.manifest["graph_key"]


@pytest.mark.parametrize("construction", ["hopbench", "hipporag2"])
def test_deferred_vectors_equal_the_eager_build_and_keep_the_hash(
    musique_sub, tmp_path, construction
):
    cfg = {"construction": construction}
    eager_cache, lazy_cache = tmp_path / "eager", tmp_path / "lazy"
    eager = load_or_build(
        musique_sub,
        cfg,
        encoder=Encoder(cache_dir=eager_cache, show_progress=False),
        cache_dir=eager_cache,
    )
    lazy_encoder = Encoder(cache_dir=lazy_cache, show_progress=False)
    lazy = load_or_build(
        musique_sub, cfg, encoder=lazy_encoder, cache_dir=lazy_cache, descriptions=False
    )

    assert lazy.manifest["graph_key"] == eager.manifest["graph_key"]  # the hash does not change
    assert lazy.description_embeddings is None
    assert lazy.manifest["description_embeddings"] == "deferred"
    assert "embed_descriptions" not in lazy.manifest["timings"]
    assert "embed_descriptions" in eager.manifest["timings"]
    assert not (_folder(lazy, lazy_cache) / LAYER).exists()

    # a run that does not read them loads the graph as it is
    again = load_or_build(
        musique_sub, cfg, encoder=lazy_encoder, cache_dir=lazy_cache, descriptions=False
    )
    assert again.manifest["cache_hit"] and again.description_embeddings is None

    # the first run that reads them makes the layer: bit-equal to what the build would have made
    filled = load_or_build(musique_sub, cfg, encoder=lazy_encoder, cache_dir=lazy_cache)
    assert (_folder(filled, lazy_cache) / LAYER).exists()
    assert np.array_equal(filled.description_embeddings, eager.description_embeddings)
    assert filled.entity_descriptions == eager.entity_descriptions

    # later loads read the layer, with a fresh encoder that has no embedding cache of it
    encoded_before = lazy_encoder.stats["texts_encoded"]
    third = load_or_build(musique_sub, cfg, encoder=lazy_encoder, cache_dir=lazy_cache)
    assert lazy_encoder.stats["texts_encoded"] == encoded_before
    assert np.array_equal(third.description_embeddings, eager.description_embeddings)


def test_a_damaged_layer_is_made_again(musique_sub, tmp_path):
    enc = Encoder(cache_dir=tmp_path, show_progress=False)
    kg = load_or_build(musique_sub, None, encoder=enc, cache_dir=tmp_path, descriptions=False)
    filled = load_or_build(musique_sub, None, encoder=enc, cache_dir=tmp_path)
    path = _folder(kg, tmp_path) / LAYER
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    again = load_or_build(musique_sub, None, encoder=enc, cache_dir=tmp_path)
    assert np.array_equal(again.description_embeddings, filled.description_embeddings)
    load_or_build(
        musique_sub, None, encoder=enc, cache_dir=tmp_path
    )  # and the new layer reads back


def test_which_retrievers_read_descriptions():
    assert not HippoRAGRetriever.needs_descriptions
    assert not CatRAGRetriever.needs_descriptions
    assert not NeuroPathRetriever.needs_descriptions
    assert not QAFDCodeRetriever.needs_descriptions
    assert SpreadingActivationRetriever.needs_descriptions
    assert FlowDiffusionRetriever().needs_descriptions
    assert not FlowDiffusionRetriever(node_embedding="name").needs_descriptions
