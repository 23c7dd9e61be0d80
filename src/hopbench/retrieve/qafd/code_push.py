"""QAFD's push loop as its authors' code runs it (Tarzanagh/QAFD-RAG, ``IGraphQAFD`` in
``src/passage_entity/graph_adapter.py``, the copy in ``src/hipporag_pipeline/`` at 097c8ee).

On a `MultiGraph` (kg/hipporag2_igraph.py: igraph's neighbour lists, degrees and pair weights):

1. seed weights below `threshold` (1e-5) are dropped, the rest normalised to sum 1 (`sw`);
2. warm start: x = sw, then `warm_steps` (2) times x <- (sw + spread(x)) / 2, where every node
   with x > 0 spreads x evenly over its neighbour entries (a parallel edge counts twice);
3. sink capacity T = max(degree, 1) rescaled to sum 10; mass = α·ΣT·sw on the seeds;
4. each iteration: the nodes with mass > T + ε; none -> stop; else one of them drawn with
   ``random.choice`` from a generator seeded with `seed` for this question (the code reseeds
   the global generator with 42 in every ``IGraphQAFD``, so a question's draws never depend
   on the questions before it); the drawn node pushes: x_v += step·excess / Σ w (its
   structural weights), mass_v = T_v, and each neighbour entry u gets excess·w̄_vu / Σ w̄,
   with the query-aware weight w̄_vu = w·s_v·s_u, s = (cos(node, question) + 1) / 2;
   every 10th iteration stops if Σ max(0, mass - T) < ε; at most `max_iterations` iterations.

The arithmetic follows the code's scalar types so x agrees to the last bits: the cosines are
float32 (the vectors' type), w̄ and its running sum are float32 (a Python float times a
NumPy float32 stays float32), x and mass float64. Sums run in the code's order
(``np.add.accumulate`` and ``np.add.at`` are sequential). tests/retrieve/qafd/test_code_push.py
checks it against a plain-Python transcription of the loop.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from hopbench.kg.hipporag2_igraph import MultiGraph

_TINY = 1e-8  # the code's guard added to both denominators


@dataclass
class CodeFlowResult:
    x: np.ndarray
    iterations: int
    pushes: int
    converged: bool
    seeds: int  # nodes with weight after the threshold


def node_similarity(emb: np.ndarray, q: np.ndarray):
    """The code's ``_cosine_similarity(..., "normalized")`` for one node: (cos + 1) / 2, >= 0."""
    if len(emb) == 0 or len(q) == 0:
        return 0.0
    dot = np.dot(emb, q)
    m1 = np.linalg.norm(emb)
    m2 = np.linalg.norm(q)
    if m1 == 0 or m2 == 0:
        return 0.0
    raw = dot / (m1 * m2)
    return max(0.0, (raw + 1.0) / 2.0)


class _Similarities:
    """s_v per node, computed when first needed (a push touches few nodes)."""

    def __init__(self, node_emb: np.ndarray, q: np.ndarray) -> None:
        self.emb, self.q = node_emb, q
        self.cache: dict[int, object] = {}

    def __call__(self, v: int):
        s = self.cache.get(v)
        if s is None:
            s = self.cache[v] = node_similarity(self.emb[v], self.q)
        return s


def warm_start(g: MultiGraph, sw: np.ndarray, steps: int) -> np.ndarray:
    """x after `steps` lazy uniform walk steps from sw (neighbour entries with multiplicity)."""
    deg = g.degree
    x = sw.copy()
    for _ in range(steps):
        x_new = np.zeros(len(sw))
        rows = np.flatnonzero((x > 0) & (deg > 0))
        if rows.size:
            d = deg[rows]
            starts = g.indptr[rows]
            offs = np.arange(int(d.sum())) - np.repeat(np.cumsum(d) - d, d)
            nbrs = g.indices[np.repeat(starts, d) + offs]
            np.add.at(x_new, nbrs, np.repeat(x[rows] / d, d))
        x = (sw + x_new) / 2.0
    return x


def code_flow_diffusion(
    g: MultiGraph,
    source: np.ndarray,
    node_emb: np.ndarray,
    q_emb: np.ndarray,
    *,
    alpha: float = 2.0,
    epsilon: float = 0.01,
    max_iterations: int = 500,
    step_size: float = 0.2,
    threshold: float = 1e-5,
    warm_steps: int = 2,
    seed: int = 42,
) -> CodeFlowResult:
    """x of the code's push loop (module docstring) for seed weights `source` over all nodes."""
    sw = seed_weights(source, threshold, g.n)
    x = warm_start(g, sw, warm_steps)
    cap = sink_capacity(g.degree)
    total_sink = np.sum(cap)
    mass = np.zeros(g.n)
    on = sw > 0
    mass[on] = alpha * total_sink * sw[on]

    sim = _Similarities(node_emb, q_emb)
    rng = random.Random(seed)
    weights_of: dict[int, tuple] = {}

    def push(v: int) -> bool:
        got = weights_of.get(v)
        if got is None:
            got = weights_of[v] = push_weights(g, v, sim)
        nbrs, qw, w_qa, w_struct = got
        if w_qa == 0:
            return False
        excess = mass[v] - cap[v]
        if excess <= 0:
            return False
        if w_struct == 0:
            w_struct = w_qa
        x[v] += step_size * excess / (w_struct + _TINY)
        mass[v] = cap[v]
        pos = qw > 0
        denom = np.float64(w_qa + np.float32(_TINY))
        np.add.at(mass, nbrs[pos], excess * qw[pos].astype(np.float64) / denom)
        return True

    iterations = pushes = 0
    converged = False
    while iterations < max_iterations:
        iterations += 1
        over = np.nonzero(mass > (cap + epsilon))[0]
        if len(over) == 0:
            converged = True
            break
        if push(int(rng.choice(over))):
            pushes += 1
        if iterations % 10 == 0 and np.sum(np.maximum(0, mass - cap)) < epsilon:
            converged = True
            break
    return CodeFlowResult(
        x=x, iterations=iterations, pushes=pushes, converged=converged, seeds=int(on.sum())
    )


def seed_weights(source: np.ndarray, threshold: float, n: int) -> np.ndarray:
    """Step 1: weights below threshold dropped, the rest over their sum (uniform if none)."""
    sw = np.copy(source).astype(np.float64)
    sw[sw < threshold] = 0.0
    total = np.sum(sw)
    sw = sw / total if total > 0 else np.ones(n) / n
    return sw


def sink_capacity(deg: np.ndarray) -> np.ndarray:
    """Step 3's T: max(degree, 1) rescaled to sum 10."""
    cap = np.maximum(deg, 1).astype(np.float64)
    cap = 10.0 * cap / np.sum(cap)
    return cap


def push_weights(g: MultiGraph, v: int, sim: _Similarities) -> tuple:
    """What a push from v reads, fixed per question: its neighbour entries, their float32
    query-aware weights w·s_v·s_u (0 where w <= 0), and the running sums Σ w̄ and Σ w in the
    code's order. An isolated node has no entries and both sums 0 (it never pushes)."""
    a, b = g.indptr[v], g.indptr[v + 1]
    if a == b:
        return g.indices[a:b], np.zeros(0, dtype=np.float32), 0, 0
    nbrs = g.indices[a:b]
    w = g.weight[a:b]
    sv = sim(v)
    su = np.array([sim(int(u)) for u in nbrs], dtype=np.float32)
    qw = (w.astype(np.float32) * np.float32(sv)) * su
    qw[w <= 0] = 0.0
    return nbrs, qw, np.add.accumulate(qw)[-1], np.add.accumulate(w)[-1]


def rank_passages(x_passages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The code's ranking: scores x / Σx (uniform when Σx = 0), order ``argsort(scores)[::-1]``."""
    total = np.sum(x_passages)
    scores = x_passages / total if total > 0 else np.ones(len(x_passages)) / max(len(x_passages), 1)
    order = np.argsort(scores)[::-1]
    return order, scores
