"""Trace paths of spreading activation: the heaviest simple paths from a seed through
activated nodes, found exactly without listing every path.

A path is a simple walk seed -> target (target != seed) of 1 to `max_hops` hops on the
propagation matrix whose nodes are all activated; its weight is the mean activation of its
nodes. `top_paths` returns the `top` heaviest (ties by the node-index sequence), a path
dropped when its reverse is already listed. tests/retrieve/qasa/sa_oracle.py enumerates them
plainly; the tests check both agree.
"""

from __future__ import annotations

import heapq

import numpy as np
import scipy.sparse as sp

from hopbench.retrieve.kernels._csr import gather_rows

PATH_MAX_HOPS = 4
TOP_PATHS = 30


def top_paths(
    adj: sp.csr_matrix,
    activation: np.ndarray,
    activated: np.ndarray,
    seeds: np.ndarray,
    *,
    max_hops: int = PATH_MAX_HOPS,
    top: int = TOP_PATHS,
    budget: int = 200_000,
) -> tuple[list[tuple[list[int], float]], bool]:
    """The heaviest simple seed -> target paths through activated nodes (module docstring).

    Returns ([(node indices, mean activation)], complete). Exact without listing every
    path (hub-heavy graphs hold millions): paths grow one hop per round, all of a round at
    once in numpy; after each round tau = the 2*top-th heaviest path so far, and a partial
    path is dropped when even its best conceivable extension (`walk_reach`) stays below
    tau. A path's weight is summed in node order, so weights are the floats a plain
    enumeration gives. `budget` caps the partial paths grown; `complete` is False if it cut
    the search (the list is then the best found).
    """
    act = np.where(activated, activation, 0.0)
    keep = 2 * top  # each path has at most one reverse, so the 2*top best hold the answer
    slack = 1e-9  # bounds and weights are summed in other orders; never prune on a rounding
    reach = walk_reach(adj, act, activated, max_hops)
    seed_list = np.array([int(s) for s in seeds if activated[s]], dtype=np.int64)
    paths, totals = seed_list[:, None], act[seed_list]
    found_p: list[np.ndarray] = []
    found_w: list[np.ndarray] = []
    tau = -np.inf
    grown, complete = 0, True
    for n_nodes in range(2, max_hops + 2):  # the paths of this round have n_nodes nodes
        if not paths.shape[0]:
            break
        more = np.arange(1, max_hops + 3 - n_nodes)  # nodes an extension may still add
        last = paths[:, -1]
        best = np.max(
            (totals[:, None] + reach[more[None, :], last[:, None]]) / (n_nodes - 1 + more), axis=1
        )
        alive = best + slack >= tau
        paths, totals, last = paths[alive], totals[alive], last[alive]
        owner, v, _ = gather_rows(adj, last)
        ok = activated[v] & ~(paths[owner] == v[:, None]).any(axis=1)
        owner, v = owner[ok], v[ok]
        if grown + v.size > budget:
            owner, v = owner[: budget - grown], v[: budget - grown]
            complete = False
        grown += v.size
        totals = totals[owner] + act[v]
        paths = np.concatenate([paths[owner], v[:, None]], axis=1)
        w = totals / n_nodes
        pool = np.concatenate([w, *found_w])
        if pool.size >= keep:  # the keep-th heaviest of some paths: never above the final cut
            tau = max(tau, float(np.partition(pool, pool.size - keep)[pool.size - keep]))
        rec = w + slack >= tau
        found_p.append(paths[rec])
        found_w.append(w[rec])
        if not complete:
            break
    cands = [
        (float(w), tuple(int(x) for x in p))
        for ps, ws in zip(found_p, found_w)
        for p, w in zip(ps[ws + slack >= tau], ws[ws + slack >= tau])
    ]
    return heaviest_distinct_paths(cands, top, keep), complete


def heaviest_distinct_paths(
    cands: list[tuple[float, tuple[int, ...]]], top: int, keep: int
) -> list[tuple[list[int], float]]:
    """The `top` heaviest of (weight, path) candidates, ties by path, a path and its reverse
    counted once; only the `keep` heaviest are looked at (2 * top always suffices)."""
    out: list[tuple[list[int], float]] = []
    kept: set[tuple[int, ...]] = set()
    for w, p in heapq.nsmallest(keep, cands, key=lambda t: (-t[0], t[1])):
        if p in kept or p[::-1] in kept:
            continue
        kept.add(p)
        out.append((list(p), w))
        if len(out) >= top:
            break
    return out


def walk_reach(
    adj: sp.csr_matrix, act: np.ndarray, activated: np.ndarray, steps: int
) -> np.ndarray:
    """reach[m, v] = the largest activation sum of m further nodes on any walk from v through
    activated nodes (m = 0..steps; max-plus products on the activated subgraph). No simple
    path extending a path that ends at v by m nodes can add more: `top_paths`' bound."""
    reach = np.zeros((steps + 1, adj.shape[0]))
    on = np.flatnonzero(activated)
    owner, nb, _ = gather_rows(adj, on)
    ok = activated[nb] & (nb != on[owner])
    owner, nb = owner[ok], nb[ok]
    if nb.size == 0:
        return reach
    first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    rows = on[owner[first]]
    for m in range(1, steps + 1):
        reach[m, rows] = np.maximum.reduceat(act[nb] + reach[m - 1, nb], first)
    return reach


def relationship_path_rows(
    adj: sp.csr_matrix,
    activation: dict[int, float],
    seeds,
    *,
    max_hops: int = PATH_MAX_HOPS,
    budget: int = 3_000_000,
) -> tuple[list[tuple[float, tuple[int, ...]]], bool]:
    """Every row the authors' path block enumerates, by plain depth-first search.

    Their Cypher (``MATCH path = (seed)-[:RELATES_TO*1..4]-(target)`` over activated nodes,
    simple, seed != target) yields one row per RELATIONSHIP sequence: with ``edges: pairs`` a
    pair joined in both directions is two relationships, so adj[u, v] (1 or 2) multiplies the
    rows. Weight: activations summed left to right from 0.0, divided by the node count, as
    their ``reduce``. `activation` maps the activated nodes to their values. Returns
    ([(weight, node tuple)] unsorted, complete); stops after `budget` rows (complete False).
    """
    indptr, indices, data = adj.indptr, adj.indices, adj.data
    rows: list[tuple[float, tuple[int, ...]]] = []
    for s in seeds:
        s = int(s)
        if s not in activation:
            continue
        stack = [((s,), 1)]
        while stack:
            path, mult = stack.pop()
            for j in range(indptr[path[-1]], indptr[path[-1] + 1]):
                v = int(indices[j])
                if v not in activation or v in path:
                    continue
                p2, m2 = path + (v,), mult * int(data[j])
                w = 0.0
                for n in p2:
                    w = w + activation[n]
                rows.extend([(w / len(p2), p2)] * m2)
                if len(p2) <= max_hops:
                    stack.append((p2, m2))
                if len(rows) > budget:
                    return rows, False
    return rows, True


def dedupe_path_rows(rows: list[tuple[list[str], float]]) -> list[tuple[list[str], float]]:
    """The authors' clean-up of their top path rows, in order: keep the first of a node
    sequence and its reverse, then drop a path that another kept path starts with (read
    forwards) or ends with (read backwards)."""
    seen: set[tuple] = set()
    kept: list[tuple[list[str], float]] = []
    for names, w in rows:
        key = tuple(names)
        if key in seen or key[::-1] in seen:
            continue
        seen.add(key)
        kept.append((list(names), w))
    out = []
    for names, w in kept:
        p = tuple(names)
        inside = any(
            len(p) < len(o) and (o[: len(p)] == p or o[-len(p) :] == p[::-1])
            for o in (tuple(n) for n, _ in kept)
        )
        if not inside:
            out.append((names, w))
    return out
