"""`make paper` makes the baselines' rows: bm25 and hybrid each one CPU row on every dataset
(no graph: the two MuSiQue graphs come to one run) and a reader row wherever dense has one."""

from __future__ import annotations

import pytest

from hopbench.harness.paper.grid import expand, load_grid
from hopbench.harness.paper.plan import Planner, plan_grid


@pytest.mark.slow
def test_bm25_and_hybrid_have_the_rows_dense_has(data_dir):
    extra = [f"paths.data_dir={data_dir}"]
    planner = Planner()
    rows = expand(load_grid(), extra, sizes=lambda ds: planner.size(ds, extra))
    wanted = {"dense", "bm25", "hybrid"}
    planned = plan_grid([r for r in rows if r.retriever in wanted], planner)
    assert not [(p.row.overrides, p.error) for p in planned if p.error]
    made = {}
    for p in planned:
        made.setdefault(p.row.retriever, []).append((p.row.kind, p.row.dataset, p.row.reader))
    assert sorted(made["bm25"]) == sorted(made["dense"])
    assert sorted(made["hybrid"]) == sorted(made["dense"])
    assert len(made["bm25"]) == 8  # 4 datasets x (CPU-only, reader)
