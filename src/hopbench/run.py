"""The Hydra entry point: one run = one dataset x one retriever (x one reader) configuration.

    python -m hopbench.run dataset=hotpotqa retriever=dense dataset.limit=20
    python -m hopbench.run -m dataset=musique,hotpotqa

An entry point only: the run is `hopbench.harness.runner.execute`, the objects it runs are built by
`hopbench.harness.compose`. No module of the library imports this one.
"""

from __future__ import annotations

import errno
import logging
import os
import sys

import hydra
from omegaconf import DictConfig

from hopbench.core.errors import HopbenchError
from hopbench.core.lifetime import die_with_parent
from hopbench.core.paths import CONFIG_DIR
from hopbench.core.private import private_umask
from hopbench.core.secret_values import move_secret_overrides
from hopbench.evaluate.metric_registry import SUMMARY, shown_in
from hopbench.harness.runner import execute

log = logging.getLogger("hopbench.run")


def summary_keys() -> list[str]:
    """What the line printed at the end of a run shows: counts, the metrics declared for it, latency."""
    return ["n_questions", "n_retrieval_scored", *shown_in(SUMMARY), "latency_ms_p50"]


# the pid of the process that launched the jobs, for the job processes of a local launcher
LAUNCHER_PID = "HOPBENCH_LAUNCHER_PID"


def main() -> None:
    """The command: a run, or a multirun of them (Hydra parses the command line)."""
    os.environ[LAUNCHER_PID] = str(os.getpid())
    _job()


def end_with_the_launcher() -> None:
    """A job in a process of the joblib launcher (`hydra/launcher=local_parallel`) ends when the
    multirun's process ends, even by kill -9: those processes are its children, and nothing
    else would stop them (they went on computing for minutes, a loaded model each)."""
    launcher = os.environ.get(LAUNCHER_PID)
    if not launcher or int(launcher) == os.getpid():
        return  # the launching process itself (a single run, or Hydra's basic launcher)
    try:
        from hydra.core.hydra_config import HydraConfig

        target = str(HydraConfig.get().launcher.get("_target_", ""))
    except (ValueError, AttributeError):
        return
    if "joblib" in target.lower():
        die_with_parent(int(launcher))  # exits at once if it is already gone


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def _job(cfg: DictConfig) -> None:
    end_with_the_launcher()
    try:
        metrics = execute(cfg)
    except HopbenchError as exc:
        log.error("%s", exc)
        print(f"hopbench: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO):
            raise
        # a full disk, a quota, a read-only or failing file system: what and where, once
        where = f"{exc.filename}: " if exc.filename else ""
        log.error("%s%s", where, exc.strerror)
        print(
            f"hopbench: error: {where}{exc.strerror} (nothing was marked complete; free space "
            f"and run the same command to resume)",
            file=sys.stderr,
        )
        sys.exit(2)
    except KeyboardInterrupt:  # the runner said what was kept and how to resume
        print("hopbench: interrupted", file=sys.stderr)
        sys.exit(130)
    print(
        " ".join(
            f"{k}={metrics.get(k):.4g}"
            if isinstance(metrics.get(k), float)
            else f"{k}={metrics.get(k)}"
            for k in summary_keys()
        )
    )


def entry() -> None:
    """`main` with secret overrides (graphdb.password=...) moved into the environment first, so
    that Hydra's own records of the command line never hold them (`hopbench.core.secret_values`)."""
    private_umask()  # before Hydra writes its .hydra/ records (hopbench.core.private)
    sys.argv = move_secret_overrides(sys.argv)
    main()


if __name__ == "__main__":
    entry()
