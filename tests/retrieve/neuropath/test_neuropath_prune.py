"""The reference handling's pruning (issue #55), by hand: above `filter_k` new paths, the kept
ones stay first and the `filter_k` new paths closest to the goal follow, closest first. The
reference is a plain sort of hand-set cosines; the fixtures never have more than 30 new paths."""

from __future__ import annotations

import numpy as np

from hopbench.retrieve.neuropath import reference as ref

# unit vectors at known angles to the goal (1, 0): cosines 0.9, 0.1, 0.99, 0.5, -0.3
COS = {"a->r->b": 0.9, "c->r->d": 0.1, "e->r->f": 0.99, "g->r->h": 0.5, "i->r->j": -0.3}


def _encode(texts):
    out = []
    for t in texts:
        c = 1.0 if t == "goal" else COS[t.replace(" ", "->")]
        out.append([c, float(np.sqrt(1.0 - c * c))])
    return np.asarray(out, dtype=np.float32)


def test_prune_keeps_the_old_paths_then_the_closest_new_ones_closest_first():
    new = list(COS)
    st = ref.PathState(
        paths=["kept", *new], links=[10, 0, 1, 2, 3, 4], visited=[[9], [0], [1], [2], [3], [4]]
    )
    ref.prune(st, 1, "goal", _encode, filter_k=3)
    want = sorted(new, key=lambda p: -COS[p])[:3]  # the reference: a plain sort by cosine
    assert st.paths == ["kept", *want]
    assert st.links == [10] + [new.index(p) for p in want]
    assert st.visited == [[9]] + [[new.index(p)] for p in want]


def test_prune_leaves_filter_k_or_fewer_new_paths_alone():
    st = ref.PathState(paths=["kept", "c->r->d", "a->r->b"], links=[0, 1, 2], visited=[[], [], []])
    ref.prune(st, 1, "goal", _encode, filter_k=2)
    assert st.paths == ["kept", "c->r->d", "a->r->b"]


def test_one_path_over_filter_k_is_pruned():
    new = ["a->r->b", "c->r->d", "e->r->f", "g->r->h"]
    st = ref.PathState(paths=new, links=[0, 1, 2, 3], visited=[[], [], [], []])
    ref.prune(st, 0, "goal", _encode, filter_k=3)
    assert st.paths == ["e->r->f", "a->r->b", "g->r->h"]
