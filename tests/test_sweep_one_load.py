"""One load per sweep (issue #59): a 4-point decay x depth multirun of spreading_activation on
30 real MuSiQue questions loads the graph once in its one process, and each point's rows are
the rows of that point run alone in a process of its own (latency apart)."""

from __future__ import annotations

import re

import pytest

from tests.helpers.run_rows import hopbench_run, rows_by_hash

POINTS = [(decay, depth) for decay in ("0.5", "0.7") for depth in ("1", "2")]


def common(data_dir, cache_dir, runs):
    return [
        f"paths.data_dir={data_dir}",
        f"paths.cache_dir={cache_dir}",
        f"runs_dir={runs}",
        "progress=false",
        "dataset=musique",
        "dataset.limit=30",
        "retriever=spreading_activation",
        "hydra.job_logging.root.level=INFO",
    ]


@pytest.mark.slow
def test_a_sweep_loads_once_and_gives_each_point_its_own_rows(
    tmp_path, data_dir, cache_dir, child_env, musique_graph
):
    swept = tmp_path / "swept"
    hopbench_run(
        [
            "-m",
            *common(data_dir, cache_dir, swept),
            "retriever.decay=" + ",".join(sorted({d for d, _ in POINTS})),
            "retriever.depth=" + ",".join(sorted({k for _, k in POINTS})),
        ],
        tmp_path,
        child_env,
    )
    logs = "".join(p.read_text() for p in (swept / ".hydra").glob("multirun_*/*/*.log"))
    assert logs.count("knowledge graph reused from this process's memo") == len(POINTS) - 1, logs
    # the one read of the graph from its folder
    assert len(re.findall(r"knowledge graph \w+ loaded from", logs)) == 1, logs
    sweep_rows = rows_by_hash(swept, "musique", "spreading_activation")
    assert len(sweep_rows) == len(POINTS)  # a run folder and hash per point

    alone_rows = {}
    for decay, depth in POINTS:
        alone = tmp_path / f"alone_{decay}_{depth}"
        hopbench_run(
            [
                *common(data_dir, cache_dir, alone),
                f"retriever.decay={decay}",
                f"retriever.depth={depth}",
            ],
            tmp_path,
            child_env,
        )
        alone_rows.update(rows_by_hash(alone, "musique", "spreading_activation"))
    assert sorted(alone_rows) == sorted(sweep_rows)  # the same four hashes
    for h, rows in sweep_rows.items():
        assert len(rows) == 30
        assert rows == alone_rows[h], h  # every field, floats compared with ==
