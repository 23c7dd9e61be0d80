"""The Hydra entry point: one run = one dataset x one retriever (x one reader) configuration.

    python -m hopbench.run dataset=hotpotqa retriever=dense dataset.limit=20
    python -m hopbench.run -m dataset=musique,hotpotqa

An entry point only: the run is `hopbench.runner.execute`, the objects it runs are built by
`hopbench.compose`. No module of the library imports this one.
"""

from __future__ import annotations

import logging
import sys

import hydra
from omegaconf import DictConfig

from hopbench.errors import HopbenchError
from hopbench.paths import CONFIG_DIR
from hopbench.private import private_umask
from hopbench.runner import execute
from hopbench.secret_values import move_secret_overrides

log = logging.getLogger("hopbench.run")

SUMMARY_KEYS = ["n_questions", "n_retrieval_scored", "recall@2", "recall@5", "fcr@5", "em", "f1", "latency_ms_p50"]


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        metrics = execute(cfg)
    except HopbenchError as exc:
        log.error("%s", exc)
        print(f"hopbench: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:  # the runner said what was kept and how to resume
        print("hopbench: interrupted", file=sys.stderr)
        sys.exit(130)
    print(" ".join(f"{k}={metrics.get(k):.4g}" if isinstance(metrics.get(k), float) else f"{k}={metrics.get(k)}"
                   for k in SUMMARY_KEYS))


def entry() -> None:
    """`main` with secret overrides (graphdb.password=...) moved into the environment first, so
    that Hydra's own records of the command line never hold them (`hopbench.secret_values`)."""
    private_umask()  # before Hydra writes its .hydra/ records (hopbench.private)
    sys.argv = move_secret_overrides(sys.argv)
    main()


if __name__ == "__main__":
    entry()
