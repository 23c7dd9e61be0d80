"""`hopbench export` then `hopbench import` on real runs: both `datasets` readers read the set,
and the report of the imported runs is the report of the originals, file for file. Slow: two
real runs (the encoder on 20 MuSiQue questions) and three reports."""

import json

import datasets
import pandas as pd
import pytest

from hopbench.cli import main as hopbench
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.report.run_set_format import DATA_FOLDER, TABLES, parquet_name

pytestmark = pytest.mark.slow

# a cut of the report's tables: each must be byte-equal between the two reports
TABLE_FILES = ("leaderboard.csv", "leaderboard_long.csv", "breakdown.csv", "paper_tables.md")


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory, data_dir, cache_dir):
    """Dense and BM25 on 20 MuSiQue questions, no LLM, no reader: a small real run set with a
    paired test (BM25 against dense) in its leaderboard."""
    runs = tmp_path_factory.mktemp("real") / "runs"
    for retriever in ("dense", "bm25"):
        execute(
            load_config(
                [
                    f"paths.data_dir={data_dir}",
                    f"paths.runs_dir={runs}",
                    f"paths.cache_dir={cache_dir}",
                    "progress=false",
                    "dataset=musique",
                    "dataset.limit=20",
                    f"retriever={retriever}",
                ]
            )
        )
    return runs


@pytest.fixture(scope="module")
def exported(real_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("published") / "set"
    assert hopbench(["export", str(out), "--runs-dir", str(real_runs), "--resamples", "2000"]) == 0
    return out


def _report(runs, results):
    argv = ["report", "--runs-dir", str(runs), "--results-dir", str(results)]
    assert hopbench([*argv, "--no-reference", "--no-figures", "--resamples", "2000"]) == 0
    return results


@pytest.fixture(scope="module")
def local_report(real_runs, tmp_path_factory):
    """The report of the original runs."""
    return _report(real_runs, tmp_path_factory.mktemp("local"))


def test_both_datasets_readers_read_the_set(exported, tmp_path):
    on_disk = datasets.load_from_disk(str(exported))
    assert set(on_disk) == set(TABLES)
    assert on_disk["runs"].num_rows == 2 and on_disk["predictions"].num_rows == 40
    assert sorted(on_disk["runs"]["retriever"]) == ["bm25", "dense"]
    for table in TABLES:
        parquet = datasets.load_dataset(
            "parquet",
            data_files=str(exported / DATA_FOLDER / parquet_name(table)),
            split="train",
            cache_dir=str(tmp_path / "hf-cache"),
        )
        assert parquet.to_list() == on_disk[table].to_list(), table
    # the card's YAML names each table's parquet files, as a set on the Hub does
    runs = datasets.load_dataset(str(exported), "runs", split="train", cache_dir=str(tmp_path))
    assert runs.num_rows == 2


def test_a_prediction_row_carries_its_trace_and_ranking(exported, real_runs):
    preds = datasets.load_from_disk(str(exported))["predictions"]
    row = preds[0]
    folder = next(real_runs.glob(f"*/*/{row['config_hash']}"))
    first = json.loads((folder / "predictions.jsonl").read_text().splitlines()[0])
    assert row["id"] == first["id"] and row["ranked_passage_ids"] == first["ranked_passage_ids"]
    assert json.loads(row["trace_json"]) == first["trace"]
    assert json.loads(row["record"]) == first


def test_round_trip_gives_the_same_runs_and_the_same_tables(
    exported, real_runs, local_report, tmp_path
):
    imported = tmp_path / "imported"
    assert hopbench(["import", str(exported), "--runs-dir", str(imported)]) == 0
    for original in real_runs.glob("*/*/*/metrics.json"):
        folder = original.parent
        copy = imported / folder.relative_to(real_runs)
        for name in ("config.yaml", "predictions.jsonl", "metrics.json"):
            assert (copy / name).read_bytes() == (folder / name).read_bytes(), (folder, name)
    _report(imported, tmp_path / "published")
    # byte-equal: run_dir is relative to the runs folder, the bootstrap seeds come from the
    # config hashes, so no column has a reason to differ
    for name in TABLE_FILES:
        local = (local_report / name).read_bytes()
        assert local == (tmp_path / "published" / name).read_bytes(), name
    assert b"bm25" in (local_report / "leaderboard.csv").read_bytes()


def test_the_exported_leaderboard_is_the_reports(exported, local_report):
    board = datasets.load_from_disk(str(exported))["leaderboard"].to_pandas()
    local = pd.read_csv(local_report / "leaderboard.csv")
    cols = ["config_hash", "recall@5", "p_recall@5", "delta_recall@5", "n_questions"]
    pd.testing.assert_frame_equal(
        board[cols].sort_values("config_hash").reset_index(drop=True),
        local[cols].sort_values("config_hash").reset_index(drop=True),
        check_exact=False,
        rtol=1e-12,  # the CSV's text round-trips floats to the last bit; parquet keeps them
        check_dtype=False,
    )


def test_export_never_writes_over_a_folder(real_runs, tmp_path, capsys):
    out = tmp_path / "taken"
    out.mkdir()
    assert hopbench(["export", str(out), "--runs-dir", str(real_runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "never overwrites" in err
    assert list(out.iterdir()) == []
