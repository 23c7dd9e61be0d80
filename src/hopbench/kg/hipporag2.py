"""`graph.construction: hipporag2`: the graph HippoRAG 2's own code builds from the same triples.

Read from OSU-NLP-Group/HippoRAG (PyPI ``hipporag==2.0.0a4``), ``src/hipporag/HippoRAG.py``
``index`` / ``add_fact_edges`` / ``add_passage_edges`` / ``add_synonymy_edges`` /
``add_new_edges`` and ``utils/misc_utils.py``, ``utils/llm_utils.py``, ``utils/embed_utils.py``;
this is an independent implementation of that behaviour on hopbench's `KnowledgeGraph`:

* a passage's triples: those of exactly three items, each made a string, duplicates dropped in
  order (``filter_invalid_triples``, on the raw strings); then every item, the relation too,
  goes through ``text_processing``: lower-case, every character outside ``[A-Za-z0-9 ]`` a
  space, outer spaces stripped (inner runs of spaces are kept, non-ASCII letters become spaces,
  a name can become empty);
* entity nodes: the subjects and objects of those triples, nothing else (no titles, no NER
  entities outside a triple), in sorted order (``np.unique``); passage nodes after them;
* facts: the distinct processed ``(s, r, o)`` tuples over the corpus (``flatten_facts``); the
  text embedded for a fact is the string of the Python tuple, ``"('s', 'r', 'o')"``;
  here facts are in order of first occurrence (HippoRAG's is a set's order);
* relation edges: +1 to (s, o) and to (o, s) for every processed triple of every passage, so a
  fact in three passages weighs 3 and two triples that become equal once processed count twice;
  s == o adds no edge (``add_new_edges`` skips self-loops) but is still a fact;
* passage-entity edges: weight 1 between a passage and each subject/object of its triples,
  which are also the passages an entity's seed weight is divided by (``ent_node_to_chunk_ids``);
* synonym edges: for every entity with more than 2 ASCII alphanumerics, its nearest entities
  by cosine of the name embeddings (k = 2047 candidates, any entity but itself and the empty
  name), best first, while the cosine is >= threshold and no more than `max_neighbors` have
  been kept before it (the loop breaks on ``num_nns > 100``, so up to 101 are kept). Each is a
  *directed* entry ``(u, v) = cosine`` that replaces a fact count already in that direction.

HippoRAG puts every directed entry into an undirected igraph, so the PPR weight of a pair is
the sum of its two directions. `relation` and `synonym` hold half of each type's share of that
sum: with `KnowledgeGraph.adjacency(relation=2, synonym=2, context=1)` (the hipporag retriever's
weights) the matrix is HippoRAG's. For a pair without synonym entries relation = the fact
count; for a pair found from both sides synonym = the cosine; a synonym found from one side
only (the other name too short) gives cosine / 2 and keeps half the fact count.

CatRAG, HippoRAG 2's fork, counts a fact on its own direction only (``+= 2`` on (s, o) where
HippoRAG 2 adds 1 to both), so a one-sided synonym there erases the fact weight of that
direction and keeps the other: `relation_own_direction` holds those counts (`own_direction_weights`).
"""

from __future__ import annotations

import re
import time

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.graph import KnowledgeGraph
from hopbench.kg.graph_parts import (
    BuildInputs,
    GraphParts,
    embed_parts,
    finish_graph,
    synonym_limits,
)
from hopbench.kg.stage_timing import timed

CONSTRUCTION = "hipporag2"
KNN_TOP_K = 2047  # BaseConfig.synonymy_edge_topk
FACT_TEXT = "tuple"  # KnowledgeGraph.fact_text: the str() of the processed (s, r, o) tuple

_NOT_KEPT = re.compile(r"[^A-Za-z0-9 ]")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def text_processing(text) -> str:
    """HippoRAG's `text_processing` of one item: lower-case, [^A-Za-z0-9 ] to spaces, strip."""
    if not isinstance(text, str):
        text = str(text)
    return _NOT_KEPT.sub(" ", text.lower()).strip()


def valid_triples(triples) -> list[list[str]]:
    """HippoRAG's `filter_invalid_triples`: three items, as strings, first occurrence kept."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for t in triples:
        if len(t) != 3:
            continue
        t = [str(x) for x in t]
        if tuple(t) not in seen:
            seen.add(tuple(t))
            out.append(t)
    return out


def fact_string(s: str, r: str, o: str) -> str:
    """The text HippoRAG embeds for a fact: ``str(fact)`` of the tuple."""
    return str((s, r, o))


def directed_synonyms(
    embeddings: np.ndarray,
    names: list[str],
    threshold: float = 0.8,
    max_neighbors: int = 100,
    min_alnum_chars: int = 3,
    top_k: int = KNN_TOP_K,
    block: int = 1000,
) -> dict[tuple[int, int], float]:
    """`add_synonymy_edges`: {(u, v): cosine} for each query entity u and each kept neighbour v."""
    n = len(names)
    out: dict[tuple[int, int], float] = {}
    if n == 0:
        return out
    x = np.asarray(embeddings, dtype=np.float32)
    x = x / np.maximum(
        np.linalg.norm(x, axis=1, keepdims=True), np.float32(1e-12)
    )  # retrieve_knn normalises
    alnum = [len(_NOT_ALNUM.sub("", nm)) for nm in names]
    queries = np.array([i for i in range(n) if alnum[i] >= min_alnum_chars], dtype=np.int64)
    empty = np.array([nm == "" for nm in names])
    k = min(top_k, n)
    for start in range(0, len(queries), block):
        q = queries[start : start + block]
        sims = x[q] @ x.T
        for row, u in enumerate(q):
            s = sims[row]
            cand = np.flatnonzero(s >= threshold)
            if len(cand) > k:  # only the top_k nearest are candidates
                cand = cand[np.argsort(-s[cand], kind="stable")[:k]]
            cand = cand[np.argsort(-s[cand], kind="stable")]
            kept = 0
            for v in cand:
                if kept > max_neighbors:
                    break
                if v != u and not empty[v]:
                    out[(int(u), int(v))] = float(s[v])
                    kept += 1
    return out


def processed_triples(
    corpus: list[Passage], records: dict[str, PassageExtraction]
) -> tuple[list[list[tuple[str, str, str]]], dict[str, tuple[int, str]], list[str], int]:
    """Each passage's valid triples, processed (``text_processing``); each processed name's first
    passage and raw surface; the passages whose extraction failed; the count of empty ones."""
    failed, n_empty = [], 0
    chunk_triples: list[list[tuple[str, str, str]]] = []
    surfaces: dict[str, tuple[int, str]] = {}  # processed name -> (first passage, raw surface)
    for p_idx, passage in enumerate(corpus):
        rec = records.get(passage.id)
        if rec is None:
            raise HopbenchError(
                f"no extraction record for passage {passage.id} ({passage.title!r})"
            )
        if rec.status != "ok":
            failed.append(passage.id)
        if not passage.text.strip():
            n_empty += 1
        rows = []
        for raw in valid_triples(rec.triples):
            s, r, o = (text_processing(x) for x in raw)
            rows.append((s, r, o))
            surfaces.setdefault(s, (p_idx, raw[0]))
            surfaces.setdefault(o, (p_idx, raw[2]))
        chunk_triples.append(rows)
    return chunk_triples, surfaces, failed, n_empty


def count_triples(
    chunk_triples: list[list[tuple[str, str, str]]], index: dict[str, int]
) -> tuple[
    dict[tuple[str, str, str], int],
    dict[tuple[int, int], int],
    dict[tuple[int, int], int],
    sp.csr_matrix,
]:
    """Over every passage's processed triples: each distinct fact's first passage; per unordered
    entity pair the triples joining them, per ordered pair the triples in that direction (s == o
    counts in neither); and the passage x entity matrix (weight 1 per subject or object)."""
    facts: dict[tuple[str, str, str], int] = {}  # processed tuple -> first passage
    counts: dict[tuple[int, int], int] = {}
    directed: dict[tuple[int, int], int] = {}  # (subject, object) -> occurrences
    ctx_rows, ctx_cols = [], []
    for p_idx, rows in enumerate(chunk_triples):
        ents: set[int] = set()
        for s, r, o in rows:
            facts.setdefault((s, r, o), p_idx)
            si, oi = index[s], index[o]
            ents.update((si, oi))
            if si != oi:
                key = (min(si, oi), max(si, oi))
                counts[key] = counts.get(key, 0) + 1
                directed[(si, oi)] = directed.get((si, oi), 0) + 1
        for e in sorted(ents):
            ctx_rows.append(p_idx)
            ctx_cols.append(e)
    context = sp.csr_matrix(
        (np.ones(len(ctx_rows), dtype=np.float32), (ctx_rows, ctx_cols)),
        shape=(len(chunk_triples), len(index)),
    )
    return facts, counts, directed, context


def assemble_hipporag2(
    corpus: list[Passage],
    records: dict[str, PassageExtraction],
    encoder,
    settings: dict,
    passage_emb: np.ndarray,
    *,
    llm=None,
    timings: dict | None = None,
    descriptions: bool = True,
) -> KnowledgeGraph:
    """The hipporag2 graph (module docstring). Descriptions and vectors are made as for every
    graph (kg/graph_vectors.py; `descriptions` False: text-mode description vectors deferred,
    kg/description_layer.py)."""
    timings = {} if timings is None else timings
    t = time.perf_counter()
    chunk_triples, surfaces, failed, n_empty = processed_triples(corpus, records)
    names = sorted(surfaces)
    index = {nm: i for i, nm in enumerate(names)}
    n_ent = len(names)
    facts, counts, directed, context = count_triples(chunk_triples, index)
    fact_list = list(facts)
    f_s = np.array([index[f[0]] for f in fact_list], dtype=np.int64)
    f_r = [f[1] for f in fact_list]
    f_o = np.array([index[f[2]] for f in fact_list], dtype=np.int64)
    f_p = np.array([facts[f] for f in fact_list], dtype=np.int64)
    sources = fact_source_matrix(chunk_triples, {f: i for i, f in enumerate(fact_list)})
    timings["assemble"] = time.perf_counter() - t

    labels = [" ".join(surfaces[nm][1].split()) or nm for nm in names]
    parts = GraphParts(
        corpus=corpus,
        names=names,
        labels=labels,
        first_seen=[surfaces[nm] for nm in names],
        fact_subject=f_s,
        fact_relation=f_r,
        fact_object=f_o,
        fact_passage=f_p,
        fact_texts=[fact_string(*f) for f in fact_list],
        context=context,
        failed=failed,
        n_empty=n_empty,
    )
    inputs = BuildInputs(encoder, settings, passage_emb, llm, timings, descriptions)
    vectors = embed_parts(parts, inputs)

    with timed(timings, "synonyms"):
        syn = directed_synonyms(vectors.entity_emb, names, **synonym_limits(settings))
    relation, synonym, overwritten = split_weights(counts, syn, n_ent)
    own_direction = own_direction_weights(directed, syn, n_ent)

    title_entity = np.array(
        [index.get(text_processing(p.title), -1) for p in corpus], dtype=np.int64
    )
    return finish_graph(
        parts,
        inputs,
        vectors,
        relation=relation,
        synonym=synonym,
        title_entity=title_entity,
        manifest_head={"construction": CONSTRUCTION, "fact_text": FACT_TEXT},
        extra_counts={
            "fact_pairs": len(counts),
            "synonym_pairs": len({(min(u, v), max(u, v)) for u, v in syn}),
            "directed_synonym_entries": len(syn),
            "fact_directions_overwritten": overwritten,
        },
        fact_sources=sources,
        relation_own_direction=own_direction,
    )


def fact_source_matrix(
    chunk_triples: list[list[tuple[str, str, str]]], fact_index: dict[tuple[str, str, str], int]
) -> sp.csr_matrix:
    """(F x P) 1 where passage p states fact f. HippoRAG keeps every passage of a fact
    (``ent_node_to_chunk_ids``); `fact_passage` keeps only the first."""
    rows, cols = [], []
    for p_idx, triples in enumerate(chunk_triples):
        for f in dict.fromkeys(fact_index[t] for t in triples if t in fact_index):
            rows.append(f)
            cols.append(p_idx)
    m = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)),
        shape=(len(fact_index), len(chunk_triples)),
    )
    m.sum_duplicates()
    m.data[:] = 1.0
    m.sort_indices()
    return m


def fact_sources_from_records(
    kg: KnowledgeGraph, records: dict[str, PassageExtraction]
) -> sp.csr_matrix:
    """`fact_source_matrix` of a graph saved before it was stored, from its extraction records
    (the same processing as `assemble_hipporag2`)."""
    chunk_triples = []
    for pid in kg.passage_ids:
        rec = records.get(pid)
        if rec is None:
            raise HopbenchError(f"no extraction record for passage {pid}")
        chunk_triples.append(
            [tuple(text_processing(x) for x in raw) for raw in valid_triples(rec.triples)]
        )
    index = {kg.fact_triple(i): i for i in range(kg.n_facts)}
    return fact_source_matrix(chunk_triples, index)


def own_direction_weights(
    directed: dict[tuple[int, int], int], syn: dict[tuple[int, int], float], n: int
) -> sp.csr_matrix:
    """CatRAG's fact weights (its ``add_fact_edges`` adds 2 to the fact's own direction only,
    where HippoRAG 2 adds 1 to both): per pair, the occurrences of the pair's facts in each
    direction that no synonym entry overwrote, symmetric. Equals `relation` for every pair
    except those a synonym overwrote from one side only: there `relation` keeps half of the
    pair's count whichever way its facts run, this the count of the direction left."""
    w: dict[tuple[int, int], float] = {}
    for (s, o), c in directed.items():
        if (s, o) not in syn:
            key = (min(s, o), max(s, o))
            w[key] = w.get(key, 0.0) + c
    return symmetric(w, n)


def symmetric(d: dict[tuple[int, int], float], n: int) -> sp.csr_matrix:
    """(n, n) float32 with d[(a, b)] at (a, b) and (b, a)."""
    if not d:
        return sp.csr_matrix((n, n), dtype=np.float32)
    keys = np.array(list(d), dtype=np.int64)
    vals = np.array(list(d.values()), dtype=np.float32)
    rows = np.concatenate([keys[:, 0], keys[:, 1]])
    cols = np.concatenate([keys[:, 1], keys[:, 0]])
    m = sp.csr_matrix((np.concatenate([vals, vals]), (rows, cols)), shape=(n, n))
    m.sort_indices()
    return m


def split_weights(
    counts: dict[tuple[int, int], int], syn: dict[tuple[int, int], float], n: int
) -> tuple[sp.csr_matrix, sp.csr_matrix, int]:
    """(relation, synonym, fact directions overwritten): symmetric matrices whose doubled sum is
    HippoRAG's undirected weight, the sum over both directions of
    ``synonym score if the direction has one else fact count`` (module docstring)."""
    rel_w: dict[tuple[int, int], float] = {}
    syn_w: dict[tuple[int, int], float] = {}
    overwritten = 0
    for (a, b), c in counts.items():
        kept = sum((u, v) not in syn for u, v in ((a, b), (b, a)))
        overwritten += 2 - kept
        if kept:
            rel_w[(a, b)] = c * kept / 2.0
    for (u, v), score in syn.items():
        key = (min(u, v), max(u, v))
        syn_w[key] = syn_w.get(key, 0.0) + score / 2.0
    return symmetric(rel_w, n), symmetric(syn_w, n), overwritten
