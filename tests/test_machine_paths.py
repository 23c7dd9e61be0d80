"""No tracked text file names a folder of the machine it was written on.

Why: an absolute path under a home or work folder (a run folder, a log, a script's default) is
wrong on every other checkout and tells a reader about one developer's disk, not the project.
Run folders in tables are relative to the runs folder; scripts take such folders as arguments.
Illustrative paths (`/data/...`, `/mnt/...`) are fine: only home and work folders are matched.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()  # it spells the patterns out

# A path starts a token (not inside a word or a relative path such as ../work/x): /root/...,
# /home/<user>/..., /Users/<user>/..., /work/..., and pytest's temporary folders.
MACHINE_PATH = re.compile(
    r"(?<![\w.~-])/(?:root/|home/[^/\s]+/|Users/[^/\s]+/|work/|tmp/pytest-)", re.IGNORECASE
)


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in out.decode().split("\0"):
        path = ROOT / name
        if not name or name == THIS or not path.is_file():
            continue  # deleted in the working tree but not yet from the index
        head = path.read_bytes()[:8192]
        if b"\0" not in head:  # binary files (parquet, gzip, images) are not text
            files.append(path)
    return files


def machine_paths(path: Path) -> list[str]:
    """`file:line: text` for each line of a text file that holds a machine path."""
    text = path.read_text(encoding="utf-8", errors="replace")
    rel = path.relative_to(ROOT).as_posix()
    return [
        f"{rel}:{i}: {line.strip()[:120]}"
        for i, line in enumerate(text.splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]


@pytest.mark.parametrize(
    "line, hit",
    [
        ("run_dir: /work/tmp/s31/scratch/musique/dense/abc", True),
        ("cache at /home/alice/.cache/hopbench", True),
        ("'/root/.cache/huggingface'", True),
        ("hydra.searchpath=[file:///Users/bob/configs]", True),
        ("/tmp/pytest-of-root/pytest-3/test_x0/runs", True),
        ("DATA_DIR ?= ../shared/datasets", False),
        ("dataset.questions_path=/data/musique_dev.jsonl", False),
        ("https://example.org/work/page", False),
        ("~/work/notes", False),
    ],
)
def test_the_pattern_tells_machine_paths_from_others(line, hit):
    assert bool(MACHINE_PATH.search(line)) is hit


def test_no_tracked_text_file_has_a_machine_path():
    files = _tracked_text_files()
    assert len(files) > 100  # the walk saw the checkout
    hits = [h for f in files for h in machine_paths(f)]
    shown = "\n".join(hits[:40]) + (f"\n... and {len(hits) - 40} more" if len(hits) > 40 else "")
    assert not hits, f"{len(hits)} line(s) with an absolute home or work path:\n{shown}"
