"""The shared knowledge graph every graph retriever reads.

Nodes: entities first (indices 0..E-1), then passages (E..E+P-1, in `dataset.corpus` order).
Stable string ids: an entity's id is ``"e:" + normalised name``; a passage's id is its
`Passage.id`. Retrievers work on integer indices and report string ids.

Edges, one sparse matrix per type (HippoRAG 2: docs/methods/hipporag.md, The graph):

* ``relation`` (E x E, symmetric): number of facts whose subject and object are the pair;
* ``synonym``  (E x E, symmetric): cosine of the entity embeddings where >= threshold;
* ``context``  (P x E): 1 where the passage mentions the entity.

HippoRAG adds each relation and synonym edge in both directions of an undirected igraph, so
its effective weights are 2 x count and 2 x sim; pass multipliers to `adjacency()` to match.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError

EDGE_TYPES = ("relation", "synonym", "context")
ENTITY_PREFIX = "e:"


def entity_node_id(name: str) -> str:
    return ENTITY_PREFIX + name


@dataclass
class KnowledgeGraph:
    """Entity and passage nodes, facts with provenance, embeddings, one CSR per edge type."""

    entity_names: list[str]  # normalised, unique
    entity_labels: list[str]  # first surface form seen, for display and prompts
    entity_descriptions: list[str]
    passage_ids: list[str]  # same order as dataset.corpus
    fact_subject: np.ndarray  # (F,) int entity index
    fact_relation: list[str]  # (F,) relation text
    fact_object: np.ndarray  # (F,) int entity index
    fact_passage: np.ndarray  # (F,) int passage index (provenance)
    entity_embeddings: np.ndarray  # (E, d) float32, L2-normalised
    description_embeddings: np.ndarray | None  # (E, d); None until a retriever that reads them
    # asks (kg/description_layer.py)
    passage_embeddings: np.ndarray  # (P, d)
    fact_embeddings: np.ndarray  # (F, d), of fact_text(i)
    relation: sp.csr_matrix  # (E, E)
    synonym: sp.csr_matrix  # (E, E)
    context: sp.csr_matrix  # (P, E)
    passage_title_entity: np.ndarray  # (P,) int entity index of the title, -1 if none
    failed_passages: list[str] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    # (F, P) 1 where the passage states the fact: only graphs whose facts are deduplicated over
    # the corpus (graph.construction=hipporag2) have it; elsewhere a fact has one passage
    fact_sources: sp.csr_matrix | None = None
    # (E, E) hipporag2 graphs: fact occurrences per pair counted in their own direction, less
    # the directions a synonym entry overwrote (CatRAG's add_fact_edges; kg/hipporag2.py)
    relation_own_direction: sp.csr_matrix | None = None

    def __post_init__(self) -> None:
        self._entity_index = {n: i for i, n in enumerate(self.entity_names)}
        self._passage_index = {p: i for i, p in enumerate(self.passage_ids)}
        self._context_csc = None
        self._entity_facts = None

    # ---- sizes and ids -------------------------------------------------------------------
    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    @property
    def n_passages(self) -> int:
        return len(self.passage_ids)

    @property
    def n_facts(self) -> int:
        return len(self.fact_relation)

    @property
    def n_nodes(self) -> int:
        return self.n_entities + self.n_passages

    @property
    def node_ids(self) -> list[str]:
        """String id of every node, in combined-adjacency order (entities, then passages)."""
        return [entity_node_id(n) for n in self.entity_names] + list(self.passage_ids)

    def entity_index(self, name: str) -> int | None:
        """Index of a normalised entity name (normalise with `hopbench.kg.normalize_name`)."""
        return self._entity_index.get(name)

    def passage_index(self, passage_id: str) -> int | None:
        return self._passage_index.get(passage_id)

    def passage_node(self, passage_index: int) -> int:
        """Combined-graph node index of a passage."""
        return self.n_entities + passage_index

    # ---- facts and provenance -----------------------------------------------------------
    def fact_text(self, i: int) -> str:
        """The text that `fact_embeddings[i]` embeds: 'subject relation object', or on a graph of
        `graph.construction=hipporag2` the str() of the tuple, as HippoRAG 2 embeds it."""
        s, r, o = self.fact_triple(i)
        if self.manifest.get("fact_text") == "tuple":
            return str((s, r, o))
        return f"{s} {r} {o}"

    def fact_texts(self) -> list[str]:
        return [self.fact_text(i) for i in range(self.n_facts)]

    def fact_triple(self, i: int) -> tuple[str, str, str]:
        return (
            self.entity_names[self.fact_subject[i]],
            self.fact_relation[i],
            self.entity_names[self.fact_object[i]],
        )

    def passages_of_fact(self, f: int) -> np.ndarray:
        """Every passage that states fact f (CatRAG's key-fact boost needs them all)."""
        if self.fact_sources is not None:
            m = self.fact_sources
            return m.indices[m.indptr[f] : m.indptr[f + 1]]
        if self.manifest.get("construction") == "hipporag2":
            raise HopbenchError(
                "this hipporag2 graph has no fact_sources (facts are deduplicated over "
                "the corpus, so fact_passage is only the first source): rebuild it"
            )
        return self.fact_passage[f : f + 1]

    @property
    def entity_facts(self) -> sp.csr_matrix:
        """(E x F) 1 where the entity is the fact's subject or object."""
        if self._entity_facts is None:
            f = np.arange(self.n_facts)
            rows = np.concatenate([self.fact_subject, self.fact_object])
            cols = np.concatenate([f, f])
            m = sp.csr_matrix(
                (np.ones(len(rows), dtype=np.float32), (rows, cols)),
                shape=(self.n_entities, self.n_facts),
            )
            m.data[:] = 1.0
            self._entity_facts = m
        return self._entity_facts

    def facts_of_entity(self, e: int) -> np.ndarray:
        m = self.entity_facts
        return m.indices[m.indptr[e] : m.indptr[e + 1]]

    def facts_between(self, u: int, v: int) -> np.ndarray:
        """Facts behind the relation edge u-v (either direction): per-fact provenance of an edge."""
        return np.intersect1d(self.facts_of_entity(u), self.facts_of_entity(v), assume_unique=True)

    # ---- entity <-> passage -------------------------------------------------------------
    def passages_of_entity(self, e: int) -> np.ndarray:
        """Passage indices that mention entity e."""
        if self._context_csc is None:
            self._context_csc = self.context.tocsc()
        c = self._context_csc
        return np.sort(c.indices[c.indptr[e] : c.indptr[e + 1]])

    def entities_of_passage(self, p: int) -> np.ndarray:
        return self.context.indices[self.context.indptr[p] : self.context.indptr[p + 1]]

    def entity_passage_counts(self) -> np.ndarray:
        """(E,) number of passages mentioning each entity (HippoRAG's |chunks containing entity|)."""
        if self._context_csc is None:
            self._context_csc = self.context.tocsc()
        return np.diff(self._context_csc.indptr).astype(np.int64)

    def title_entity(self, p: int) -> int | None:
        """Entity index of passage p's title (None when the title is empty)."""
        e = int(self.passage_title_entity[p])
        return None if e < 0 else e

    # ---- combined graph -----------------------------------------------------------------
    def adjacency(
        self, relation: float = 1.0, synonym: float = 1.0, context: float = 1.0
    ) -> sp.csr_matrix:
        """Square symmetric CSR over all nodes (entities, then passages) with per-type multipliers."""
        ee = (relation * self.relation + synonym * self.synonym).tocsr()
        pe = (context * self.context).tocsr()
        pp = sp.csr_matrix((self.n_passages, self.n_passages), dtype=np.float32)
        a = sp.bmat([[ee, pe.T], [pe, pp]], format="csr", dtype=np.float32)
        a.eliminate_zeros()
        a.sort_indices()
        return a

    def to_networkx(self):
        """Undirected networkx graph; edge attributes per type plus `weight` (all multipliers 1)."""
        import networkx as nx

        g = nx.Graph()
        ids = self.node_ids
        for i, name in enumerate(self.entity_names):
            g.add_node(
                ids[i], kind="entity", index=i, name=name, description=self.entity_descriptions[i]
            )
        for j, pid in enumerate(self.passage_ids):
            g.add_node(pid, kind="passage", index=self.n_entities + j)
        for kind, m, offset_row in (
            ("relation", self.relation, 0),
            ("synonym", self.synonym, 0),
            ("context", self.context, self.n_entities),
        ):
            coo = sp.triu(m, k=0).tocoo() if kind != "context" else m.tocoo()
            for r, c, w in zip(coo.row, coo.col, coo.data):
                u, v = ids[offset_row + r], ids[c]
                if g.has_edge(u, v):
                    g[u][v][kind] = float(w)
                    g[u][v]["weight"] += float(w)
                else:
                    g.add_edge(u, v, **{kind: float(w)}, weight=float(w))
        return g
