"""The cluster launchers exercised (issue #59): a 4-point sweep under Ray (a local instance on
127.0.0.1, `hydra/launcher=ray_cluster`) and under submitit's local executor (the SLURM
launcher's plugin, `hydra/launcher=submitit_local`) gives the rows of the basic launcher's sweep,
run by run. `make test-cluster` installs the extras (`.[cluster]`) and sets
HOPBENCH_CLUSTER_TESTS=1, under which a missing plugin fails instead of skipping."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.helpers.run_rows import hopbench_run, rows_by_hash

SWEEP = ["retriever=spreading_activation", "retriever.decay=0.5,0.7", "retriever.depth=1,2"]
# a local Ray instance on the loopback only, no dashboard, the machine's two cores
RAY_LOCAL = [
    "hydra/launcher=ray_cluster",
    "+hydra.launcher.ray.init._node_ip_address=127.0.0.1",
    "+hydra.launcher.ray.init.include_dashboard=false",
    "+hydra.launcher.ray.init.num_cpus=2",
]
LAUNCHERS = {
    "ray": ("hydra_plugins.hydra_ray_launcher", RAY_LOCAL),
    "submitit_local": ("hydra_plugins.hydra_submitit_launcher", ["hydra/launcher=submitit_local"]),
}


def need_plugin(module: str) -> None:
    if importlib.util.find_spec(module) is not None:
        return
    if os.environ.get("HOPBENCH_CLUSTER_TESTS") == "1":
        pytest.fail(f"{module} is not installed (make test-cluster installs .[cluster])")
    pytest.skip(f"{module} not installed: `make test-cluster` runs this")


def sweep(launcher_args, runs, data_dir, cache_dir, cwd, env):
    hopbench_run(
        [
            "-m",
            *launcher_args,
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            f"runs_dir={runs}",
            "progress=false",
            "dataset=musique_sub",
            *SWEEP,
        ],
        cwd,
        env,
    )
    return rows_by_hash(runs, "musique_sub", "spreading_activation")


@pytest.fixture(scope="module")
def basic_rows(tmp_path_factory, data_dir, cache_dir, child_env, musique_kg):
    tmp = tmp_path_factory.mktemp("basic")
    rows = sweep([], tmp / "runs", data_dir, cache_dir, tmp, child_env)
    assert len(rows) == 4
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_a_cluster_launcher_gives_the_basic_launchers_rows(
    name, basic_rows, tmp_path, data_dir, cache_dir, child_env
):
    module, launcher_args = LAUNCHERS[name]
    need_plugin(module)
    rows = sweep(launcher_args, tmp_path / "runs", data_dir, cache_dir, tmp_path, child_env)
    assert sorted(rows) == sorted(basic_rows)  # the same four run hashes
    for h, by_id in rows.items():
        assert len(by_id) == 3
        assert by_id == basic_rows[h], (name, h)  # every field but the timings, floats with ==
