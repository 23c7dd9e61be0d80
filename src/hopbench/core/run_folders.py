"""Which folders under the runs folder the report reads as runs (issue #54.6).

A run lives at `<runs_dir>/<dataset>/<retriever>/<config hash>/`. The report takes a folder
only when it and the files it reads are inside the runs folder (a link out of it is left out,
with a warning: the report describes that folder, nothing else), and only when its name is the
config hash the run recorded (a `<hash>.bak` copy is left out, with a warning). Two folders that
hold one config hash (a copy under another name, a link inside the runs folder) would be paired
and compared with each other: the report refuses them.
"""

from __future__ import annotations

import logging
from pathlib import Path

from hopbench.core.errors import HopbenchError

log = logging.getLogger(__name__)

RUN_FILES = ("metrics.json", "predictions.jsonl", "config.yaml")


def candidate_folders(runs_dir: str | Path) -> list[Path]:
    """Folders `<dataset>/<retriever>/<name>/` with a metrics.json, inside the runs folder;
    hidden ones (staging `.<hash>.rerun/`, Hydra's `.hydra/`) are not runs."""
    root = Path(runs_dir)
    real_root = root.resolve()
    out = []
    for p in sorted(root.glob("*/*/*/metrics.json")):
        if any(part.startswith(".") for part in p.relative_to(root).parts):
            continue
        folder = p.parent
        away = next(
            (f for f in (folder, *(folder / n for n in RUN_FILES)) if not _inside(f, real_root)),
            None,
        )
        if away is not None:
            log.warning(
                "%s: left out of the report: %s is outside the runs folder %s (a link)",
                folder,
                away.resolve(),
                root,
            )
            continue
        out.append(folder)
    return out


def _inside(path: Path, real_root: Path) -> bool:
    return path.resolve().is_relative_to(real_root)


def named_by_its_hash(folder: Path, metrics: dict) -> bool:
    """The folder's name is the config hash its metrics.json records (warned when not; a run
    that records none is taken by its folder's name, as `Run.config_hash` does)."""
    recorded = metrics.get("config_hash")
    if recorded is None or folder.name == recorded:
        return True
    log.warning(
        "%s: left out of the report: its name is not the config hash it records (%s); "
        "a copy of a run?",
        folder,
        recorded,
    )
    return False


def check_unique(runs) -> None:
    """Refuse two run folders with one config hash (the same run twice)."""
    seen: dict[str, Path] = {}
    for run in runs:
        first = seen.setdefault(run.config_hash, run.dir)
        if first != run.dir:
            raise HopbenchError(
                f"two run folders hold config hash {run.config_hash}: {first} and {run.dir} "
                "(a copy, or a link inside the runs folder); keep one"
            )
