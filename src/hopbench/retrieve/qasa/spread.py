"""Query-aware spreading activation (QASA), as the reference Cypher computes it.

Source: kinfi4/qasa-graph-rag @dc8f948, ``qasa_rag/retrieval/qasa_retriever.py``
(``_PROPAGATION_QA`` and ``_PROPAGATION_UNIFORM``, repeated ``max_steps`` times), and
docs/methods/qasa.md. One step, applied synchronously to the activation map of the step before:

    I_v = δ · gate_v · Σ_{u : a_u defined, a_u > θ, (a_v undefined or a_v < a_u)} A[u, v] · a_u
    a_v ← (a_v if defined else 0) + I_v        only where I_v > θ (v becomes defined)

with gate_v = max(0, cos(desc_emb_v, q_emb)) (`semantic_gate`), or gate_v = 1 for the
ungated ablation (``gate=None``). Defaults: δ = 0.7, T = 3 steps, θ = 0.01.

How the Cypher pins the details down:
- "Defined" means the node is a key of ``resource_map``: the seeds (activation
  score / max score, which may be <= θ) and every node that ever received I_v > θ.
  An undefined node accepts activation from any source; a defined one only from
  sources strictly more active than itself (``resource_map[dst] IS NULL OR
  resource_map[dst] < src_res``). Every source has a_u > θ >= 0, so a node defined at 0
  accepts every source just as an undefined one does; the two differ in being in the
  map (`activated`: returned, usable in paths). A seed at or below θ never spreads.
- a_v < a_u is read as in exact arithmetic: a_v < a_u * TIE_FACTOR (1 - 1e-12), so two
  values within 1e-12 relative are a tie and neither feeds the other. Without the gate,
  exact ties are common (siblings fed by the same sources, summed along different routes);
  the float sums can differ in the last bit and a plain `<` then lets rounding decide.
  Issue #27: on MuSiQue 2hop__65690_85374 (depth 4, no gate) "montana" and "south dakota"
  are equal in exact arithmetic after step 3; this kernel's sums split them by one ulp and
  fed montana 0.4038 more, while Neo4j's sums (hopbench's query and the authors' own,
  run by their code) happened to round equal. hopbench's query uses the same factor
  (`$tie_factor`), so both sides follow the exact rule whatever the summation order; the
  authors' Cypher compares plainly (a named difference, docs/methods/qasa.md).
- Edges are undirected: ``(src)-[:RELATES_TO]-(dst)`` matches either direction.
- The ``relation`` property and any weight are unused, but Cypher returns one row per
  relationship, so a pair joined by k relationships (counting both directions)
  contributes k times. The kernel multiplies by A[u, v]: pass relationship counts
  (e.g. R + Rᵀ for a directed count matrix R) for the Neo4j semantics, or a 0/1
  pattern to count each neighbour once. A must be symmetric (not checked, for speed).
- A self-loop never contributes (a_u < a_u is false), as in Cypher.
- The QA variant skips destinations without a description embedding; give them
  gate 0 (a zero embedding row does that), since I_v = 0 never passes I_v > θ >= 0.
- Sources are read from the map as it was at the start of the step (the whole step is
  one ``CALL`` subquery over the old map, merged afterwards), hence synchronous.

The step touches only the edges leaving currently active nodes (`gather_rows`), so a
query costs O(edges around the activated region), not O(graph). The gate may also be given
lazily (`LazyGate`): then it is computed only for the nodes whose ungated input already
passes θ (gate <= 1 cannot lift anything else over it), not as an E x d product per query. The batched form runs
b questions at once on (n, b) arrays, flattening (node, question) pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.kernels._csr import as_csr, gather_rows
from hopbench.retrieve.kernels._rows import same_float_rows


@dataclass
class SpreadResult:
    """Activations after T steps. `activation` is 0 where not `activated` (undefined)."""

    activation: np.ndarray  # (n,) or (n, b) float64
    activated: np.ndarray  # same shape, bool: the node is in the resource map
    first_step: (
        np.ndarray
    )  # same shape, int: 0 for seeds, t for nodes first reached at step t, -1 never


def semantic_gate(desc_emb: np.ndarray, query_emb: np.ndarray) -> np.ndarray:
    """gate_v = max(0, cos(desc_emb_v, q)); (n,) for one query (d,), (n, b) for queries (b, d).

    Rows of zeros (entities without a description embedding) get gate 0.
    """
    e = np.asarray(desc_emb, dtype=np.float64)
    q = np.asarray(query_emb, dtype=np.float64)
    en = np.linalg.norm(e, axis=1)
    en[en == 0] = 1.0
    if q.ndim == 1:
        qn = np.linalg.norm(q) or 1.0
        return np.maximum(0.0, (e @ q) / (en * qn))
    qn = np.linalg.norm(q, axis=1)
    qn[qn == 0] = 1.0
    return np.maximum(0.0, (e @ q.T) / en[:, None] / qn[None, :])


# a_v < a_u * TIE_FACTOR is the step's "less active than the source": float sums of equal exact
# values differ by a few ulps (n terms: ~n 2^-53 relative), far below 1e-12; real differences
# between activations are far above it
TIE_RTOL = 1e-12
TIE_FACTOR = 1.0 - TIE_RTOL

# cos of unit vectors is <= 1 up to rounding; the lazy gate's pre-filter assumes at most this
GATE_MAX = 1.0 + 1e-9


UPPER_SLACK = 1e-3


class Int8Rows:
    """Unit rows as int8 codes with a per-row scale, and a proven per-row error bound.

    Why: `LazyGate.upper` reads a row of every node that might pass θ (~2,300 per 2Wiki
    question); int8 codes are a quarter of float32's bytes (timings:
    benchmarks/speed/results/retrieval_kernels.md). The bound: with x = s c + r,
    <x, q> <= s <c, q> + |r| for a unit q, and the float32 dot over d integer-valued terms
    stays within (d + 2) 2^-23 |s c| of exact, far below UPPER_SLACK.
    """

    def __init__(self, unit: np.ndarray) -> None:
        unit = np.asarray(unit, dtype=np.float64)
        scale = np.abs(unit).max(axis=1) / 127.0 if unit.size else np.zeros(unit.shape[0])
        scale[scale == 0] = 1.0
        self.codes = np.rint(unit / scale[:, None]).astype(np.int8)
        self.scale = scale
        self.err = np.linalg.norm(unit - self.codes * scale[:, None], axis=1)

    def upper(self, rows: np.ndarray, q_unit32: np.ndarray) -> np.ndarray:
        """Upper bounds on <unit[rows], q> for a unit q given in float32."""
        dots = (self.codes[rows].astype(np.float32) @ q_unit32).astype(np.float64)
        return dots * self.scale[rows] + self.err[rows]


class LazyGate:
    """`semantic_gate(desc_emb, q)` evaluated only for the nodes asked for.

    desc_unit: row-normalised description embeddings (zero rows stay zero), float64, built
    once per graph; q: one question embedding. `take(nodes)` gives the floats of `full()`
    (the retriever's `gate_vector`) at those nodes (`same_float_rows`).
    """

    def __init__(
        self, desc_unit: np.ndarray, query_emb: np.ndarray, bound_rows: Int8Rows | None = None
    ) -> None:
        q = np.asarray(query_emb, dtype=np.float64)
        self.desc_unit, self.bound_rows = desc_unit, bound_rows
        self.q_unit = q / (np.linalg.norm(q) or 1.0)
        self.q_unit32 = self.q_unit.astype(np.float32)
        # gates computed so far (NaN: not yet); the steps of one query reach many of the same
        # nodes, and `same_float_rows` gives the same floats whatever subset asks
        self._known = np.full(desc_unit.shape[0], np.nan)

    def take(self, nodes: np.ndarray) -> np.ndarray:
        need = nodes[np.isnan(self._known[nodes])]
        if need.size:
            self._known[need] = np.maximum(0.0, same_float_rows(self.desc_unit, need, self.q_unit))
        return self._known[nodes]

    def upper(self, nodes: np.ndarray) -> np.ndarray | None:
        """An upper bound on `take(nodes)`: the gate itself where already computed, else from
        the int8 rows (`Int8Rows`, an eighth of the float64 bytes), or None without them.

        The float32 query differs from the float64 one by <= 2^-24 per unit of norm, and the
        float32 dot stays within (d + 2) * 2^-23 of exact; UPPER_SLACK covers both many times.
        """
        if self.bound_rows is None:
            return None
        out = self._known[nodes]
        todo = np.isnan(out)
        out[todo] = np.maximum(0.0, self.bound_rows.upper(nodes[todo], self.q_unit32) + UPPER_SLACK)
        return out

    def full(self) -> np.ndarray:
        return np.maximum(0.0, self.desc_unit @ self.q_unit)


def _lazily_gated(
    incoming: np.ndarray, keys: np.ndarray, gates: list[LazyGate], threshold: float
) -> np.ndarray:
    """incoming x gate at the flat keys (node * b + question) whose product could pass θ, 0
    elsewhere: each question's gate computed only for its own nodes that could pass."""
    b = len(gates)
    node, col = np.divmod(keys, b)
    gated = np.zeros_like(incoming)
    for j in np.unique(col):
        sel = np.flatnonzero(col == j) if b > 1 else np.arange(keys.size)
        x, nodes = incoming[sel], node[sel]
        maybe = np.flatnonzero(x * GATE_MAX > threshold)  # only these can pass θ after gating
        ub = gates[j].upper(nodes[maybe])
        if ub is not None:  # fl(x * g) <= fl(x * ub) when g <= ub: the rest cannot pass
            maybe = maybe[x[maybe] * ub > threshold]
        g = gates[j].take(nodes[maybe])
        if g.size and g.max() > GATE_MAX:
            raise ValueError(f"gate values must be <= 1, got {g.max()}")
        gated[sel[maybe]] = x[maybe] * g
    return gated


def unit_rows(emb: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64 (zero rows stay zero): LazyGate's matrix."""
    e = np.asarray(emb, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1)
    norms[norms == 0] = 1.0
    return e / norms[:, None]


def spreading_activation(
    adj: sp.spmatrix,
    seeds: np.ndarray,
    seed_activation: np.ndarray,
    gate: np.ndarray | LazyGate | None = None,
    *,
    decay: float = 0.7,
    steps: int = 3,
    threshold: float = 0.01,
) -> SpreadResult:
    """Run T synchronous QASA steps for one question. See the module docstring for the rule.

    seeds: node indices (unique); seed_activation: their initial activations (>= 0);
    gate: (n,) gate per node, a `LazyGate` (same result, computed only where needed), or
    None for the ungated variant.
    """
    seeds = np.asarray(seeds, dtype=np.int64)
    if gate is not None and not isinstance(gate, LazyGate):
        gate = np.asarray(gate)[:, None]
    res = spreading_activation_batch(
        adj, [(seeds, seed_activation)], gate, decay=decay, steps=steps, threshold=threshold
    )
    return SpreadResult(res.activation[:, 0], res.activated[:, 0], res.first_step[:, 0])


def spreading_activation_batch(
    adj: sp.spmatrix,
    seeds: list[tuple[np.ndarray, np.ndarray]],
    gates: np.ndarray | LazyGate | list[LazyGate] | None = None,
    *,
    decay: float = 0.7,
    steps: int = 3,
    threshold: float = 0.01,
) -> SpreadResult:
    """Run QASA for b questions at once: seeds[j] = (indices, activations) of question j,
    gates (n, b), None, a `LazyGate` (b = 1) or one `LazyGate` per question. Column j of the
    result equals `spreading_activation` for question j; with lazy gates, to the last bit
    (each column's step input is summed in the same order, and gated by the same floats).
    """
    a = adj if isinstance(adj, sp.csr_matrix) and adj.has_canonical_format else as_csr(adj)
    n, b = a.shape[0], len(seeds)
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    gates = _checked_gates(gates, n, b)
    act, defined, first = _seeded(seeds, n)
    flat_act, flat_def = act.reshape(-1), defined.reshape(-1)  # views, row-major: k = v*b + j
    flat_first = first.reshape(-1)
    known = np.flatnonzero(flat_def)  # defined (node, question) keys; only these can be sources
    for t in range(1, steps + 1):
        src = known[flat_act[known] > threshold]
        if src.size == 0:
            break
        keys, incoming = _step_input(a, src, flat_act, flat_def, b)
        incoming = incoming.astype(np.float64) * decay
        if isinstance(gates, list):
            incoming = _lazily_gated(incoming, keys, gates, threshold)
        elif gates is not None:
            incoming *= gates.reshape(-1)[keys]
        keep = incoming > threshold
        fresh = _merge_step(flat_act, flat_def, flat_first, keys[keep], incoming[keep], t)
        known = np.concatenate([known, fresh])
    return SpreadResult(act, defined, first)


def _checked_gates(
    gates: np.ndarray | LazyGate | list[LazyGate] | None, n: int, b: int
) -> np.ndarray | list[LazyGate] | None:
    """The gates as one `LazyGate` per question (a list), an (n, b) float64 array, or None;
    a count or shape that does not match the b questions is an error, not a broadcast."""
    if isinstance(gates, LazyGate):
        gates = [gates]
    lazy = isinstance(gates, list)
    if lazy and len(gates) != b:
        raise ValueError(f"one LazyGate per question: {len(gates)} for {b} questions")
    if gates is not None and not lazy:
        gates = np.asarray(gates, dtype=np.float64)
        if gates.shape != (n, b):
            raise ValueError(f"gates must have shape {(n, b)}, got {gates.shape}")
    return gates


def _seeded(
    seeds: list[tuple[np.ndarray, np.ndarray]], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The resource map before step 1, as (activation, defined, first_step) arrays (n, b):
    each question's seeds defined at their activation and step 0. Repeated or out-of-range
    seeds are errors (the Cypher's map would keep one value per node)."""
    b = len(seeds)
    act = np.zeros((n, b))
    defined = np.zeros((n, b), dtype=bool)
    first = np.full((n, b), -1, dtype=np.int64)
    for j, (idx, val) in enumerate(seeds):
        idx = np.asarray(idx, dtype=np.int64)
        val = np.asarray(val, dtype=np.float64)
        if idx.shape != val.shape:
            raise ValueError(f"question {j}: {idx.shape[0]} seeds but {val.shape[0]} activations")
        if np.unique(idx).size != idx.size:
            raise ValueError(
                f"question {j}: seed indices repeat; merge them (the Cypher keeps max)"
            )
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"question {j}: seed index out of range for {n} nodes")
        act[idx, j] = val
        defined[idx, j] = True
        first[idx, j] = 0
    return act, defined, first


def _step_input(
    a: sp.csr_matrix, src: np.ndarray, flat_act: np.ndarray, flat_def: np.ndarray, b: int
) -> tuple[np.ndarray, np.ndarray]:
    """Σ A[u, v] a_u over the sources u (flat keys) that may feed v, per flat key v*b + j
    reached (keys sorted): the step's input before decay and gate, summed in the same order
    whichever of the two aggregations runs."""
    n = a.shape[0]
    u, j = np.divmod(src, b)
    owner, v, w = gather_rows(a, u)
    a_src = flat_act[src][owner]
    dst = v * b + j[owner]
    ok = ~flat_def[dst] | (flat_act[dst] < a_src * TIE_FACTOR)
    dst, contrib = dst[ok], (w * a_src)[ok]
    if 8 * dst.size < n * b:  # few edges touched: aggregate locally, no O(n) pass
        keys, inv = np.unique(dst, return_inverse=True)
        incoming = np.bincount(inv, weights=contrib, minlength=keys.size)
    else:
        incoming = np.bincount(dst, weights=contrib, minlength=n * b)
        keys = np.flatnonzero(incoming)
        incoming = incoming[keys]
    return keys, incoming


def _merge_step(
    flat_act: np.ndarray,
    flat_def: np.ndarray,
    flat_first: np.ndarray,
    keys: np.ndarray,
    incoming: np.ndarray,
    t: int,
) -> np.ndarray:
    """Add the step's inputs (already past θ) to the map in place, all at once (synchronous:
    they were computed from the old map); returns the keys defined for the first time."""
    fresh = keys[~flat_def[keys]]
    flat_first[fresh] = t
    flat_act[keys] = np.where(flat_def[keys], flat_act[keys], 0.0) + incoming
    flat_def[keys] = True
    return fresh
