"""Which folders under the runs folder are runs (issue #54.6): one discovery for every reader.

A run lives at `<runs_dir>/<dataset>/<retriever>/<config hash>/`. `hopbench report`, `hopbench
show` (a run given by its hash), `hopbench replies export` (every complete run) and the paper's
cost estimate (complete runs, and unfinished ones by their rows) take a folder
only when it and the files it reads are inside the runs folder (a link out of it is left out,
with a warning: they describe that folder, nothing else), and only when its name is the config
hash the run recorded (a `<hash>.bak` copy is left out, with a warning). Two folders that hold
one config hash (a copy under another name, a link inside the runs folder) would be the same
run twice (the report would pair it with itself): they are refused.
"""

from __future__ import annotations

import logging
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.core.metrics_file import read_metrics

log = logging.getLogger(__name__)

RUN_FILES = ("metrics.json", "predictions.jsonl", "config.yaml")


def run_folders(runs_dir: str | Path, reader: str = "the report") -> list[Path]:
    """Every complete run under runs_dir: inside it, not hidden, with a readable metrics.json,
    named by the config hash it records, each hash once (HopbenchError when twice). `reader`
    names who leaves a folder out, in the warnings."""
    folders = []
    for folder in _candidate_folders(runs_dir, reader):
        metrics = read_metrics(folder / "metrics.json")
        if metrics is None:  # empty or cut short: incomplete, warned; a relaunch redoes it
            log.warning("%s: left out of %s until the run is finished again", folder, reader)
            continue
        if _named_by_its_hash(folder, metrics, reader):  # not a `<hash>.bak` copy (warned)
            folders.append(folder)
    _check_unique(folders)
    return folders


def unfinished_run_folders(runs_dir: str | Path, reader: str = "the report") -> list[Path]:
    """Every run still going, or stopped before its end: predictions.jsonl but no readable
    metrics.json; inside runs_dir and not hidden, as run_folders takes them."""
    return [
        folder
        for folder in _candidate_folders(runs_dir, reader, marker="predictions.jsonl")
        if read_metrics(folder / "metrics.json") is None
    ]


def _candidate_folders(
    runs_dir: str | Path, reader: str = "the report", marker: str = "metrics.json"
) -> list[Path]:
    """Folders `<dataset>/<retriever>/<name>/` holding `marker`, inside the runs folder;
    hidden ones (staging `.<hash>.rerun/`, Hydra's `.hydra/`) are not runs."""
    root = Path(runs_dir)
    real_root = root.resolve()
    out = []
    for p in sorted(root.glob(f"*/*/*/{marker}")):
        if any(part.startswith(".") for part in p.relative_to(root).parts):
            continue
        folder = p.parent
        away = next(
            (f for f in (folder, *(folder / n for n in RUN_FILES)) if not _inside(f, real_root)),
            None,
        )
        if away is not None:
            log.warning(
                "%s: left out of %s: %s is outside the runs folder %s (a link)",
                folder,
                reader,
                away.resolve(),
                root,
            )
            continue
        out.append(folder)
    return out


def _inside(path: Path, real_root: Path) -> bool:
    return path.resolve().is_relative_to(real_root)


def _named_by_its_hash(folder: Path, metrics: dict, reader: str = "the report") -> bool:
    """The folder's name is the config hash its metrics.json records (warned when not; a run
    that records none is taken by its folder's name, as `Run.config_hash` does)."""
    recorded = metrics.get("config_hash")
    if recorded is None or folder.name == recorded:
        return True
    log.warning(
        "%s: left out of %s: its name is not the config hash it records (%s); a copy of a run?",
        folder,
        reader,
        recorded,
    )
    return False


def _check_unique(folders: list[Path]) -> None:
    """Refuse two run folders with one config hash (the same run twice); each folder's name is
    its config hash (_named_by_its_hash)."""
    seen: dict[str, Path] = {}
    for folder in folders:
        first = seen.setdefault(folder.name, folder)
        if first != folder:
            raise HopbenchError(
                f"two run folders hold config hash {folder.name}: {first} and {folder} "
                "(a copy, or a link inside the runs folder); keep one"
            )
