"""The content addresses of a knowledge graph and of its extraction records.

The graph key covers the corpus, the extractor and its model, the embedding model and the graph
settings, so a graph is built once per distinct input and shared by every run that needs it;
the extraction key covers only the corpus and the extractor, so graphs that differ in later
settings share one extraction log. Inputs added after graphs existed enter the hash only when
they differ from the old default, so existing graphs keep their keys.
"""

from __future__ import annotations

import hashlib
import json

from hopbench.core.errors import HopbenchError
from hopbench.core.hash_inputs import omit_defaults
from hopbench.data.schema import Passage
from hopbench.kg.encoding import short_text_batches
from hopbench.kg.llm_extractor import client_identity
from hopbench.kg.store import FORMAT_VERSION

BUILD_VERSION = 1  # bump when assembly changes what a graph contains
HIPPORAG2_VERSION = 2  # hipporag2 graphs only; 2: relation_own_direction stored
# Graph settings added after graphs existed, with the value every graph had before them.
ADDED_DEFAULTS = {"construction": "hopbench"}
ADDED_DESCRIPTION_DEFAULTS = {"embedding": "text"}


def sha_json(obj) -> str:
    """SHA-256 of `obj` as canonical JSON (sorted keys): the content address of a build input."""
    return hashlib.sha256(
        json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8", "replace")
    ).hexdigest()


def corpus_hash(corpus: list[Passage]) -> str:
    """Passage ids are content hashes of title + text, so this changes with any passage or order."""
    seen: set[str] = set()
    for p in corpus:
        if p.id in seen:
            raise HopbenchError(
                f"corpus: passage id {p.id!r} ({p.title!r}) occurs twice; "
                "passages must be unique (title + text)"
            )
        seen.add(p.id)
    return hashlib.sha256("\n".join(p.id for p in corpus).encode()).hexdigest()


def cache_keys(
    corpus: list[Passage], settings: dict, extractor, encoder, llm=None
) -> tuple[str, str, dict]:
    """(extraction key, graph key, the inputs that produced them) for this corpus and settings."""
    inputs = {
        "corpus": corpus_hash(corpus),
        "extractor": extractor.identity(),
        "embedding": encoder.identity,
        "synonym": settings["synonym"],
        "description": settings["description"],
        "build_version": BUILD_VERSION,
        "format_version": FORMAT_VERSION,
    }
    with short_text_batches(encoder, settings["short_text_batch_size"]):
        short_identity = encoder.identity
    if short_identity != inputs["embedding"]:
        # int8 backends: names and facts are batched differently from passages, and their
        # vectors depend on the batching (Encoder.identity); fp32 backends keep their hash
        inputs["embedding_short_texts"] = short_identity
    # settings added after graphs existed: absent while at their old default (hash_inputs)
    inputs["description"] = omit_defaults(settings["description"], ADDED_DESCRIPTION_DEFAULTS)
    inputs.update(omit_defaults({"construction": settings["construction"]}, ADDED_DEFAULTS))
    if settings["construction"] == "hipporag2":
        inputs["hipporag2_version"] = HIPPORAG2_VERSION
    if settings["description"]["source"] == "llm":
        inputs["description_llm"] = client_identity(llm) if llm is not None else None
    extraction_key = sha_json({"corpus": inputs["corpus"], "extractor": inputs["extractor"]})[:24]
    graph_key = sha_json(inputs)[:24]
    return extraction_key, graph_key, inputs


def extraction_key(corpus: list[Passage], extractor) -> str:
    """The extraction log's key, as `cache_keys` computes it, without the graph settings."""
    return sha_json({"corpus": corpus_hash(corpus), "extractor": extractor.identity()})[:24]
