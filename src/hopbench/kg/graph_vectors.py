"""The vectors of a graph: passages, entity names, facts and entity descriptions.

The same for every graph construction (kg/assembly.py, kg/hipporag2.py), so both call these
functions and a graph's vectors never depend on which construction made its nodes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hopbench.data.schema import Passage
from hopbench.kg import descriptions as entity_descriptions
from hopbench.kg.description_layer import encode_descriptions
from hopbench.kg.encoding import encode_unique, short_text_batches
from hopbench.kg.stage_timing import timed
from hopbench.kg.text import clean_text


def encode_passages(encoder, corpus: list[Passage], timings: dict) -> np.ndarray:
    """Exactly the texts `Services.passage_embeddings` encodes, so both share one cache entry."""
    with timed(timings, "embed_passages"):
        return encoder.encode([clean_text(p.content) for p in corpus], desc="passages")


def composed_description_embeddings(
    entity_emb: np.ndarray,
    fact_emb: np.ndarray,
    passage_emb: np.ndarray,
    described_facts: list[list[int]],
    first_passage: np.ndarray,
) -> np.ndarray:
    """`graph.description.embedding: composed`: each entity's description vector is the
    L2-normalised mean of vectors the build has already computed for the description's parts:
    the entity name, its (up to max_facts) described facts and the passage of its first mention.

    Why: encoding ~59k description texts is ~2M word pieces on 2Wiki, most of a cold build; the
    parts are encoded anyway (names, facts, passages), so composing them costs one sparse product.
    """
    n_ent, n_fact = len(entity_emb), len(fact_emb)
    rows, cols = [np.arange(n_ent)], [np.arange(n_ent)]
    for e, fs in enumerate(described_facts):
        if fs:
            rows.append(np.full(len(fs), e))
            cols.append(n_ent + np.asarray(fs, dtype=np.int64))
    rows.append(np.arange(n_ent))
    cols.append(n_ent + n_fact + np.asarray(first_passage, dtype=np.int64))
    r, c = np.concatenate(rows), np.concatenate(cols)
    parts = sp.csr_matrix(
        (np.ones(len(r), dtype=np.float32), (r, c)),
        shape=(n_ent, n_ent + n_fact + len(passage_emb)),
    )
    stacked = np.vstack(
        [entity_emb, fact_emb.reshape(-1, entity_emb.shape[1]), passage_emb]
    ).astype(np.float32, copy=False)
    out = np.asarray(
        parts @ stacked, dtype=np.float32
    )  # the sum; normalising makes it the mean's direction
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def describe_and_embed(
    corpus,
    names,
    labels,
    first_seen,
    f_s,
    f_r,
    f_o,
    fact_texts,
    encoder,
    settings: dict,
    passage_emb: np.ndarray,
    llm,
    timings: dict,
    embed_descriptions: bool = True,
):
    """Entity descriptions and the embeddings of names, facts and descriptions: the same for
    every graph construction. (descriptions, entity_emb, fact_emb, desc_emb); desc_emb is None
    when text-mode description vectors are deferred (`embed_descriptions` False)."""
    descriptions, described_facts = entity_descriptions.describe_entities(
        corpus, names, labels, first_seen, f_s, f_r, f_o, settings["description"], llm, timings
    )
    with short_text_batches(encoder, settings["short_text_batch_size"]):
        with timed(timings, "embed_entities"):
            entity_emb = encoder.encode(names, desc="entities")
        with timed(timings, "embed_facts"):
            fact_emb = encode_unique(encoder, fact_texts, "facts")
        desc_emb = None  # text mode, deferred: made by the first retriever that reads them
        if settings["description"]["embedding"] == "composed":
            with timed(timings, "embed_descriptions"):
                desc_emb = composed_description_embeddings(
                    entity_emb,
                    fact_emb,
                    passage_emb,
                    described_facts,
                    np.array([p for p, _ in first_seen], dtype=np.int64),
                )
        elif embed_descriptions:
            with timed(timings, "embed_descriptions"):
                desc_emb = encode_descriptions(encoder, descriptions, settings)
    return descriptions, entity_emb, fact_emb, desc_emb
