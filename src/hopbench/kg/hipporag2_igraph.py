"""HippoRAG 2's graph as the igraph multigraph its code holds, for code that walks it edge by edge.

HippoRAG 2 (``add_new_edges``) puts every directed entry of ``node_to_node_stats`` into an
undirected igraph, so a pair with entries in both directions has two parallel edges. PPR sums
them (kg/hipporag2.py stores that sum), but QAFD's code (Tarzanagh/QAFD-RAG
``src/passage_entity/graph_adapter.py``, ``IGraphQAFD``) walks the igraph itself:

* ``graph.neighbors(v)`` lists a neighbour once per parallel edge, in ascending vertex order;
* ``graph.degree(v)`` counts parallel edges;
* ``graph.get_eid(u, v)`` returns the parallel edge added last (checked on igraph 0.11.8), so
  the weight QAFD reads for a pair is the weight of its last directed entry.

The directed entries, read from the hipporag2 graph (kg/hipporag2.py's docstring has the
rules): a fact pair has (s, o) then (o, s), (s, o) from the first triple joining the pair
(facts are stored in order of first occurrence), each worth the fact count unless a synonym
entry replaced it; a synonym-only pair has its synonym entries in the order
`directed_synonyms` finds them; a passage and each entity of its triples have one entry of
weight 1. The synonym entries are recomputed from the graph's name vectors and settings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.kg.hipporag2 import CONSTRUCTION, directed_synonyms


@dataclass(frozen=True)
class MultiGraph:
    """Adjacency as igraph lists it: row v holds one entry per parallel edge, neighbours
    ascending; `weight` is the weight `get_eid` gives that pair (the same for its copies)."""

    indptr: np.ndarray  # (n + 1,) int64
    indices: np.ndarray  # neighbour per incidence
    weight: np.ndarray  # float64, per incidence

    @property
    def n(self) -> int:
        return len(self.indptr) - 1

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)


def directed_entries(kg) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, weight) of every igraph edge, in an order that puts each pair's
    entries in HippoRAG's insertion order (node ids: entities, then passages)."""
    if kg.manifest.get("construction") != CONSTRUCTION:
        raise HopbenchError(
            "QAFD's code walks HippoRAG 2's graph: this retriever needs "
            "graph.construction=hipporag2"
        )
    syn_cfg = kg.manifest.get("settings", {}).get("synonym")
    if syn_cfg is None:
        raise HopbenchError("the graph's manifest has no synonym settings: rebuild it")
    syn = directed_synonyms(
        kg.entity_embeddings,
        kg.entity_names,
        threshold=float(syn_cfg["threshold"]),
        max_neighbors=int(syn_cfg["max_neighbors"]),
        min_alnum_chars=int(syn_cfg["min_alnum_chars"]),
    )
    rel = kg.relation.tocsr()
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    fact_pairs: set[tuple[int, int]] = set()
    for s, o in zip(kg.fact_subject.tolist(), kg.fact_object.tolist()):
        key = (min(s, o), max(s, o))
        if s == o or key in fact_pairs:
            continue
        fact_pairs.add(key)
        kept = ((s, o) not in syn) + ((o, s) not in syn)
        count = round(2.0 * float(rel[key[0], key[1]]) / kept) if kept else 0
        for u, v in ((s, o), (o, s)):
            src.append(u)
            dst.append(v)
            wts.append(syn[(u, v)] if (u, v) in syn else float(count))
    ctx = kg.context.tocoo()
    E = kg.n_entities
    src += (ctx.row + E).tolist()
    dst += ctx.col.tolist()
    wts += [1.0] * ctx.nnz
    for (u, v), score in syn.items():
        if (min(u, v), max(u, v)) not in fact_pairs:
            src.append(u)
            dst.append(v)
            wts.append(score)
    return (
        np.array(src, dtype=np.int64),
        np.array(dst, dtype=np.int64),
        np.array(wts, dtype=np.float64),
    )


def multigraph(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> MultiGraph:
    """igraph's view (module docstring) of the undirected edges src[i]-dst[i] added in this order."""
    order = np.arange(len(src))
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    # the weight of a pair: its last edge's
    pair = lo * n + hi
    last = {}
    for p, i in zip(pair.tolist(), order.tolist()):
        last[p] = i
    pair_w = weight[[last[p] for p in pair.tolist()]]
    rows = np.concatenate([src, dst])
    cols = np.concatenate([dst, src])
    w = np.concatenate([pair_w, pair_w])
    loops = rows == cols  # igraph lists a loop twice; HippoRAG adds none
    if loops.any():
        raise HopbenchError("a self-loop in the edge list: HippoRAG 2's graph has none")
    srt = np.lexsort((cols, rows))
    rows, cols, w = rows[srt], cols[srt], w[srt]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    return MultiGraph(
        indptr=np.cumsum(indptr), indices=cols.astype(np.int64), weight=w.astype(np.float64)
    )


def hipporag2_multigraph(kg) -> MultiGraph:
    src, dst, w = directed_entries(kg)
    return multigraph(kg.n_nodes, src, dst, w)
