"""Synthetic and title-mention graphs for the kernel tests and benchmarks (not the knowledge graph).

`title_mention_graph` builds an entity-passage graph from a real corpus with plain string
matching: one entity per distinct passage title, a context edge (weight 1) from each
passage to every entity whose title it mentions (and to its own title), and relation-like
edges (weight 2 per co-occurrence, as HippoRAG's parallel edges give) between the passage's
own title entity and the entities it mentions. Its shape (bipartite core, hubs, isolated
passages) resembles a HippoRAG graph. `random_graph` gives synthetic graphs of any size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass
class MentionGraph:
    adj: sp.csr_matrix  # symmetric, (n_passages + n_entities) square
    n_passages: int  # nodes [0, n_passages) are passages in corpus order
    entity_names: list[str]  # node n_passages + i is entity_names[i]

    def mentions(self, text: str, max_len: int = 6) -> np.ndarray:
        """Entity node indices whose name occurs (as whole words) in `text`."""
        index = {name: i for i, name in enumerate(self.entity_names)}
        found = _find(_words(text), index, max_len)
        return np.array(sorted(found), dtype=np.int64) + self.n_passages


def _find(words: list[str], index: dict[str, int], max_len: int) -> set[int]:
    found = set()
    for i in range(len(words)):
        for k in range(1, max_len + 1):
            if i + k > len(words):
                break
            hit = index.get(" ".join(words[i : i + k]))
            if hit is not None:
                found.add(hit)
    return found


def title_mention_graph(
    titles: list[str], texts: list[str], *, min_chars: int = 4, max_len: int = 6
) -> MentionGraph:
    """Entity-passage graph of a corpus (see module docstring); titles of < min_chars
    characters or > max_len words are not used as entities."""
    names = sorted({" ".join(_words(t)) for t in titles})
    names = [s for s in names if len(s) >= min_chars and len(s.split()) <= max_len]
    index = {name: i for i, name in enumerate(names)}
    n_p, n_e = len(texts), len(names)
    rows, cols, vals = [], [], []
    for p, (title, text) in enumerate(zip(titles, texts)):
        own = index.get(" ".join(_words(title)))
        found = _find(_words(title + " " + text), index, max_len)
        for e in found:
            rows.append(p)
            cols.append(n_p + e)
            vals.append(1.0)
            if own is not None and e != own:
                rows.append(n_p + own)
                cols.append(n_p + e)
                vals.append(2.0)
    a = sp.coo_matrix((vals, (rows, cols)), shape=(n_p + n_e, n_p + n_e)).tocsr()
    a = (a + a.T).tocsr()
    a.sum_duplicates()
    return MentionGraph(adj=a, n_passages=n_p, entity_names=names)


def random_graph(
    n_nodes: int, n_edges: int, *, seed: int = 0, isolated: int = 0, weighted: bool = True
) -> sp.csr_matrix:
    """Symmetric random graph with about `n_edges` undirected edges (no self-loops) among
    the first n_nodes - isolated nodes, heavy-tailed degrees (endpoints drawn ∝ 1/rank^0.7),
    weights uniform in [0.1, 2] (or 1), and `isolated` trailing nodes with no edges."""
    rng = np.random.default_rng(seed)
    k = n_nodes - isolated
    pref = 1.0 / np.arange(1, k + 1) ** 0.7
    pref /= pref.sum()
    u = rng.choice(k, size=n_edges, p=pref)
    v = rng.integers(0, k, size=n_edges)
    keep = u != v
    u, v = u[keep], v[keep]
    w = rng.uniform(0.1, 2.0, size=u.size) if weighted else np.ones(u.size)
    perm = rng.permutation(k)  # hubs anywhere, not only at low indices
    a = sp.coo_matrix((w, (perm[u], perm[v])), shape=(n_nodes, n_nodes)).tocsr()
    a = (a + a.T).tocsr()
    a.sum_duplicates()
    return a
