"""`hopbench import`: a published run set (hopbench.report.run_set_format) back into run folders.

Each run becomes `<runs_dir>/<dataset>/<retriever>/<config hash>/` with its config.yaml,
predictions.jsonl and metrics.json rebuilt byte for byte, so `hopbench report` reads published
runs beside local ones. The whole set is checked before anything is written, and refused
(`DataError`: one line naming the set, the record and the field) when a table or column is
missing, a file's text no longer matches its digest, a name could leave the runs folder, or a
run fails the report's own row checks. A run already there with the same bytes is left as it
is; a different run under the same config hash is never overwritten: the import is refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hopbench.core.errors import DataError, HopbenchError
from hopbench.report.run_check import check_run
from hopbench.report.run_reader import load_run
from hopbench.report.run_set_format import (
    CARD_FILE,
    DATA_FOLDER,
    FORMAT_NAME,
    FORMAT_VERSION,
    PREDICTION_COLUMNS,
    RUN_COLUMNS,
    TABLES,
    parquet_name,
    predictions_text,
    sha256_text,
)

# a dataset, retriever or hash becomes a folder name: no separators, no "..", not hidden
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


@dataclass
class StagedRun:
    """One run of the set, its files' text as the import will write them."""

    dataset: str
    retriever: str
    config_hash: str
    files: dict[str, str]  # file name -> text

    def folder(self, runs_dir: Path) -> Path:
        return runs_dir / self.dataset / self.retriever / self.config_hash


@dataclass
class ImportResult:
    imported: list[Path] = field(default_factory=list)
    already_there: list[Path] = field(default_factory=list)


def read_card_header(source: Path) -> dict:
    """The `hopbench_run_set` block of the set's README.md, checked for format and version."""
    card = source / CARD_FILE
    if not card.is_file():
        raise DataError(card, "file", None, "missing: not a hopbench run set (no dataset card)")
    text = card.read_text(encoding="utf-8")
    parts = text.split("---\n", 2)
    try:
        header = yaml.safe_load(parts[1]) if text.startswith("---\n") and len(parts) == 3 else None
    except yaml.YAMLError as exc:
        raise DataError(card, "YAML header", None, f"not valid YAML ({exc})") from exc
    block = header.get("hopbench_run_set") if isinstance(header, dict) else None
    if not isinstance(block, dict):
        raise DataError(card, "YAML header", "hopbench_run_set", "missing: not a hopbench run set")
    if block.get("format") != FORMAT_NAME or block.get("version") != FORMAT_VERSION:
        raise DataError(
            card,
            "YAML header",
            "hopbench_run_set",
            f"format {block.get('format')!r} version {block.get('version')!r}; this hopbench "
            f"reads {FORMAT_NAME!r} version {FORMAT_VERSION}",
        )
    return block


def read_tables(source: Path) -> dict[str, list[dict]]:
    """The tables' rows: from the `datasets.save_to_disk` copy when there is one, else from
    the parquet files (a set downloaded from the Hub carries only those)."""
    if (source / "dataset_dict.json").is_file():
        from datasets import load_from_disk

        loaded = load_from_disk(str(source))
        missing = [t for t in TABLES if t not in loaded]
        if missing:
            raise DataError(source, "dataset_dict.json", missing[0], "table missing")
        return {t: loaded[t].to_list() for t in TABLES}
    import pyarrow.parquet as pq

    tables = {}
    for t in TABLES:
        path = source / DATA_FOLDER / parquet_name(t)
        if not path.is_file():
            raise DataError(path, "file", None, f"missing: the {t} table")
        tables[t] = pq.read_table(path).to_pylist()
    return tables


def _need(where, i: int, row: dict, columns, record: str) -> None:
    for c in columns:
        if c not in row:
            raise DataError(where, record.format(i=i), c, "column missing")


def _safe(where, record: str, row: dict, key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not SAFE_NAME.match(value) or value in (".", ".."):
        raise DataError(where, record, key, f"{value!r} is not a safe folder name")
    return value


def _digest_checked(where, record: str, key: str, text: str | None, digest: str | None) -> None:
    if text is None and digest is None:
        return
    if text is None or digest != sha256_text(text):
        raise DataError(where, record, key, "its text does not match its digest (edited?)")


def _checked_metrics(where, record: str, row: dict) -> None:
    """metrics.json parses to an object that names the same run as the row."""
    try:
        metrics = json.loads(row["metrics_json"])
    except (TypeError, ValueError) as exc:
        raise DataError(where, record, "metrics_json", f"not valid JSON ({exc})") from exc
    if not isinstance(metrics, dict):
        raise DataError(where, record, "metrics_json", "not a JSON object")
    for key in ("dataset", "retriever", "config_hash"):
        if metrics.get(key) not in (None, row[key]):
            raise DataError(
                where, record, f"metrics_json.{key}", f"{metrics[key]!r}, the row says {row[key]!r}"
            )


def _prediction_lines(where, preds: list[dict], hashes: set[str]) -> dict[str, list[str]]:
    """The predictions.jsonl lines of each run, in order; every row checked to belong to a
    run of the set and to say what its record says."""
    by_run: dict[str, dict[int, str]] = {}
    for i, row in enumerate(preds):
        record = f"predictions row {i}"
        _need(where, i, row, PREDICTION_COLUMNS, "predictions row {i}")
        if row["config_hash"] not in hashes:
            raise DataError(
                where, record, "config_hash", f"{row['config_hash']!r} is no run of the set"
            )
        try:
            parsed = json.loads(row["record"])
        except (TypeError, ValueError) as exc:
            raise DataError(where, record, "record", f"not valid JSON ({exc})") from exc
        if not isinstance(parsed, dict) or str(parsed.get("id")) != row["id"]:
            raise DataError(where, record, "id", "differs from the id of its record")
        lines = by_run.setdefault(row["config_hash"], {})
        if row["line"] in lines:
            raise DataError(where, record, "line", f"line {row['line']} of the run twice")
        lines[row["line"]] = row["record"]
    return {h: [lines[k] for k in sorted(lines)] for h, lines in by_run.items()}


def check_set(source: Path, tables: dict[str, list[dict]]) -> list[StagedRun]:
    """Every run of the set with its files' text, or DataError at the first thing that does
    not check."""
    where = source
    staged, hashes = [], set()
    for i, row in enumerate(tables["runs"]):
        _need(where, i, row, RUN_COLUMNS, "runs row {i}")
        h = _safe(where, f"runs row {i}", row, "config_hash")
        record = f"run {h}"
        if h in hashes:
            raise DataError(where, record, "config_hash", "twice in the runs table")
        hashes.add(h)
        dataset, retriever = (
            _safe(where, record, row, "dataset"),
            _safe(where, record, row, "retriever"),
        )
        _digest_checked(where, record, "metrics_json", row["metrics_json"], row["metrics_sha256"])
        _digest_checked(where, record, "config_yaml", row["config_yaml"], row["config_sha256"])
        _checked_metrics(where, record, row)
        files = {"metrics.json": row["metrics_json"]}
        if row["config_yaml"] is not None:
            files["config.yaml"] = row["config_yaml"]
        staged.append(StagedRun(dataset, retriever, h, files))
    lines = _prediction_lines(where, tables["predictions"], hashes)
    for run, row in zip(staged, tables["runs"], strict=True):
        record = f"run {run.config_hash}"
        got = lines.get(run.config_hash, [])
        if len(got) != row["n_lines"]:
            raise DataError(
                where, record, "n_lines", f"{row['n_lines']}, the predictions table has {len(got)}"
            )
        text = predictions_text(got)
        _digest_checked(where, record, "predictions_sha256", text, row["predictions_sha256"])
        run.files["predictions.jsonl"] = text
    return staged


def _existing(runs_dir: Path, run: StagedRun) -> list[Path]:
    """Folders under runs_dir already named by this run's config hash."""
    return sorted(p for p in runs_dir.glob(f"*/*/{run.config_hash}") if p.is_dir())


def _same_run(folder: Path, run: StagedRun) -> bool:
    names = {p.name for p in folder.iterdir() if p.is_file()}
    if names != set(run.files):
        return False
    return all((folder / n).read_text(encoding="utf-8") == t for n, t in run.files.items())


def split_by_presence(runs_dir: Path, staged: list[StagedRun], source: Path):
    """(runs to write, folders already holding the same run); HopbenchError for a config hash
    that names a different run, or a run in another folder, under runs_dir."""
    new, there = [], []
    for run in staged:
        found = _existing(runs_dir, run)
        if not found:
            new.append(run)
            continue
        folder = found[0]
        if len(found) == 1 and folder == run.folder(runs_dir) and _same_run(folder, run):
            there.append(folder)
            continue
        raise HopbenchError(
            f"{source}: run {run.config_hash}: {folder} already holds config hash "
            f"{run.config_hash} with other content or in another place; nothing was imported "
            "(an import never overwrites a run)"
        )
    return new, there


def _stage(runs_dir: Path, run: StagedRun, source: Path) -> Path:
    """Write one run into a hidden folder beside its place and check it as the report would."""
    final = run.folder(runs_dir)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{run.config_hash}.import"
    shutil.rmtree(tmp, ignore_errors=True)  # left by an import that was killed
    tmp.mkdir()
    for name in ("config.yaml", "predictions.jsonl", "metrics.json"):  # metrics.json last
        if name in run.files:
            (tmp / name).write_text(run.files[name], encoding="utf-8")
    try:
        loaded = load_run(tmp)
        check_run(tmp, loaded.metrics, loaded.predictions)
    except DataError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataError(source, f"run {run.config_hash}", exc.field, exc.problem) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def import_run_set(source, runs_dir) -> ImportResult:
    """Check the whole set, then write each new run; nothing is written when anything fails."""
    source, runs_dir = Path(source), Path(runs_dir)
    if not source.is_dir():
        raise HopbenchError(
            f"{source}: not a folder (a run set is the folder `hopbench export` wrote)"
        )
    read_card_header(source)
    staged = check_set(source, read_tables(source))
    new, there = split_by_presence(runs_dir, staged, source)
    temps: list[tuple[Path, StagedRun]] = []
    try:
        for run in new:
            temps.append((_stage(runs_dir, run, source), run))
    except BaseException:
        for tmp, _ in temps:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    result = ImportResult(already_there=there)
    for tmp, run in temps:
        os.rename(tmp, run.folder(runs_dir))
        result.imported.append(run.folder(runs_dir))
    return result
