"""One QAFD diffusion per seed entity, as the QAFD answering pipeline runs it to form clusters.

Source: Tarzanagh/QAFD-RAG ``src/retrievers/flow_diffusion.py`` (02cf1e4),
``QueryAwareWeightedFlowDiffusion`` = ``FlowDiffusionRetriever``: ``initialize`` and
``flow_diffusion``, called once per seed by ``find_flow_diffusion_clusters_and_summarize``
(``src/answering/clusters.py``, 0e265e0). On a simple undirected graph (networkx in the
authors' code; a symmetric CSR here, a stored diagonal entry being a self-loop):

1. sink capacity T_v = max(deg v, 1) rescaled so ΣT = 10 (deg: networkx's degree, a self-loop
   counting twice);
2. source mass α·ΣT·(1 + confidence) on the one seed (confidence 0.7 in clusters.py);
3. warm start x: x = e_seed, then twice x ← (e_seed + spread(x)) / 2, where every node with
   x > 0 spreads x evenly over its distinct neighbours (edge weights ignored);
4. query-aware weight ("original" weight_func) w̄_uv = w_uv·(1 + (s_u + s_v)/4) with
   s = max(0, (cos(node, query) + 1)/2); w_uv <= 0 gives 0;
5. iterations (at most `max_iterations`): the nodes with mass > T + ε, in node order; none ->
   stop; one of them drawn with ``random.choice`` from a generator seeded `seed` (the code
   reseeds the global generator with 42 in every instance, i.e. every diffusion); it pushes:
   x_v += step·excess / (Σ_u w̄_vu + 1e-8), mass_v = T_v, each neighbour u with w̄_vu > 0
   gets excess·w̄_vu / (Σ w̄ + 1e-8). A node whose w̄ sum is 0 (or no neighbour) does not push
   but the iteration counts. Every 10th iteration stops if Σ max(0, mass - T) < ε.
6. the result is every node with x > 0 (the warm start alone puts the seed's two-hop
   neighbourhood there), which clusters.py takes as the seed's cluster.

Only the nodes that ever held mass can have excess, so the scan of step 5 runs over them,
kept in node order, instead of over the whole graph: same list, same draws. (The every-10th
sum is NumPy's pairwise sum rather than a running one: it can differ in the last bits.)
tests/retrieve/qafd/test_seed_flow.py checks it against a networkx transcription.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

TINY = 1e-8


@dataclass
class SeedFlow:
    """x > 0 of one seed's diffusion: nodes (by x descending, then node index) and their x."""

    seed: int
    nodes: np.ndarray
    flow: np.ndarray
    iterations: int
    pushes: int
    converged: bool


def node_similarity(
    node_emb: np.ndarray, query_emb: np.ndarray, node_norms: np.ndarray | None = None
) -> np.ndarray:
    """s_v = max(0, (cos(h_v, q) + 1) / 2) per node; 0 for a zero vector (the code's guard).
    `node_norms`: `node_norms_of(node_emb)`, computed once per graph rather than per query."""
    e = np.asarray(node_emb, dtype=np.float64)
    q = np.asarray(query_emb, dtype=np.float64)
    qn = np.linalg.norm(q)
    en = node_norms_of(e) if node_norms is None else node_norms
    ok = (en > 0) & (qn > 0)
    cos = np.zeros(len(e))
    cos[ok] = (e[ok] @ q) / (en[ok] * qn)
    return np.where(ok, np.maximum(0.0, (cos + 1.0) / 2.0), 0.0)


def node_norms_of(node_emb: np.ndarray) -> np.ndarray:
    """The per-node L2 norms `node_similarity` divides by (float64)."""
    return np.linalg.norm(np.asarray(node_emb, dtype=np.float64), axis=1)


def capacities(adj: sp.csr_matrix, total: float = 10.0) -> np.ndarray:
    """T_v = max(deg v, 1) rescaled to sum `total`; deg counts distinct neighbours, a self-loop twice."""
    a = adj.tocsr()
    deg = np.diff(a.indptr).astype(np.float64) + (a.diagonal() != 0)
    t = np.maximum(deg, 1.0)
    return total * t / t.sum()


class SeedFlowDiffusion:
    """The per-seed diffusion over one graph and one query (module docstring)."""

    def __init__(
        self,
        adj: sp.csr_matrix,
        node_sim: np.ndarray,
        *,
        alpha: float = 50.0,
        confidence: float = 0.7,
        epsilon: float = 0.02,
        step_size: float = 0.2,
        max_iterations: int = 500,
        capacity_total: float = 10.0,
        seed: int = 42,
    ) -> None:
        a = adj.tocsr()
        a.sort_indices()
        self.indptr, self.indices = a.indptr, a.indices
        self._distinct_neighbours = bool(a.has_canonical_format)  # no index twice in a row
        self.weight = np.asarray(a.data, dtype=np.float64)
        self.s = np.asarray(node_sim, dtype=np.float64)
        self.cap = capacities(a, capacity_total)
        self.total_cap = float(self.cap.sum())
        self.alpha, self.confidence = alpha, max(0.0, min(1.0, confidence))
        self.epsilon, self.step_size = epsilon, step_size
        self.max_iterations, self.seed = max_iterations, seed
        self._qw: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}

    def _weights(self, v: int) -> tuple[np.ndarray, np.ndarray, float]:
        got = self._qw.get(v)
        if got is None:
            a, b = self.indptr[v], self.indptr[v + 1]
            nbrs = self.indices[a:b]
            w = self.weight[a:b]
            qw = np.where(w > 0, w * (1.0 + (self.s[v] + self.s[nbrs]) / 4.0), 0.0)
            total = 0.0
            for value in qw:  # the code's running sum, in neighbour order
                total += float(value)
            got = self._qw[v] = (nbrs, qw, total)
        return got

    def _warm_start(self, source: int) -> dict[int, float]:
        x = {source: 1.0}
        for _ in range(2):
            new: dict[int, float] = {}
            for v, val in x.items():
                if val > 0:
                    nbrs = self.indices[self.indptr[v] : self.indptr[v + 1]]
                    if len(nbrs):
                        share = val / len(nbrs)
                        for u in nbrs.tolist():
                            new[u] = new.get(u, 0.0) + share
            combined = {source: 1.0}
            for v in set(new) | {source}:
                combined[v] = (combined.get(v, 0.0) + new.get(v, 0.0)) / 2.0
            x = combined
        return x

    @staticmethod
    def _merge(held: np.ndarray, new: np.ndarray) -> np.ndarray:
        """`held` and `new` sorted and disjoint: a linear-time merge, not union1d's sort."""
        return np.insert(held, np.searchsorted(held, new), new)

    def run(self, source: int) -> SeedFlow:
        cap, eps = self.cap, self.epsilon
        x = self._warm_start(source)
        mass = np.zeros(len(cap))
        mass[source] = self.alpha * self.total_cap * (1.0 + self.confidence)
        held = np.array([source], dtype=np.int64)  # nodes that ever held mass, in node order
        in_held = np.zeros(len(cap), dtype=bool)
        in_held[source] = True
        rng = random.Random(self.seed)
        iterations = pushes = 0
        converged = False
        while iterations < self.max_iterations:
            iterations += 1
            over = held[mass[held] > cap[held] + eps]
            if not len(over):
                converged = True
                break
            v = int(rng.choice(over))
            nbrs, qw, w_sum = self._weights(v)
            excess = mass[v] - cap[v]
            if len(nbrs) and w_sum != 0 and excess > 0:
                x[v] = x.get(v, 0.0) + self.step_size * excess / (w_sum + TINY)
                mass[v] = cap[v]
                pos = qw > 0
                to = nbrs[pos]
                mass[to] += excess * qw[pos] / (w_sum + TINY)
                new = to[~in_held[to]]
                if len(new):
                    if not self._distinct_neighbours:
                        new = np.unique(new)
                    in_held[new] = True
                    held = self._merge(held, new)
                pushes += 1
            if iterations % 10 == 0:
                if float(np.maximum(0.0, mass[held] - cap[held]).sum()) < eps:
                    converged = True
                    break
        support = [(v, val) for v, val in x.items() if val > 0]
        support.sort(key=lambda t: (-t[1], t[0]))
        return SeedFlow(
            seed=source,
            nodes=np.array([v for v, _ in support], dtype=np.int64),
            flow=np.array([val for _, val in support], dtype=np.float64),
            iterations=iterations,
            pushes=pushes,
            converged=converged,
        )


def keep_cluster(flow: SeedFlow, min_flow_threshold: float) -> bool:
    """clusters.py: a diffusion gives a cluster to summarise when it reached more than the seed
    and its largest x is at least `min_flow_threshold` (single-node clusters are dropped before
    summarising, ``summarize_clusters_batch_with_llm``)."""
    return len(flow.nodes) > 1 and float(flow.flow.max()) >= min_flow_threshold
