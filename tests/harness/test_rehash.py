"""Issue #58's re-hash: `hopbench migrate` re-keys run folders from their config.yaml (checked
against the hash they had), result tables and reply files, and doing it twice changes nothing."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import yaml
from omegaconf import OmegaConf

from hopbench.harness import rehash
from hopbench.harness.compose import build_dataset, build_retriever, load_config
from hopbench.harness.paper.reference import REFERENCE_LEADERBOARD
from hopbench.harness.run_migration import cli
from hopbench.harness.runner import execute, plan
from hopbench.llm.reply_file import Reply, read_reply_file, write_reply_file

MOVED = "hopbench.retrieve.moved_away.DenseRetriever"  # a class path that no longer imports
REFERENCE = Path(REFERENCE_LEADERBOARD).parent


def _cfg(tmp_path, data_dir, cache_dir):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={tmp_path / 'runs'}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "dataset=musique_sub",
        ]
    )


def _age(run: Path) -> Path:
    """Turn a run of today into one of before the re-hash: its config.yaml records a `_target_`
    that has moved since, and its folder and metrics.json the hash that target gave."""
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["retriever"]["_target_"] = MOVED
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    stored = OmegaConf.create(config)
    stored.retriever._target_ = rehash.current_target(MOVED)
    old, _ = rehash.hashes(stored, build_dataset(stored), build_retriever(stored), MOVED)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["config_hash"] = old
    (run / "metrics.json").write_text(json.dumps(metrics))
    return run.rename(run.parent / old)


def test_a_migrated_run_is_found_complete_and_skipped_and_migrating_twice_changes_nothing(
    tmp_path, data_dir, cache_dir, capsys
):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    execute(cfg)
    p = plan(cfg)
    new = p.config_hash
    aged = _age(p.store.dir)
    assert aged.name != new and not plan(cfg).skip  # the new code would compute it again

    assert cli(["--runs-dir", str(tmp_path / "runs")]) == 0
    assert "1 of 1 run folders re-keyed" in capsys.readouterr().out
    assert not aged.exists() and plan(cfg).skip  # complete under its new hash: skipped
    metrics = json.loads((aged.parent / new / "metrics.json").read_text())
    assert (metrics["config_hash"], metrics["migrated_from_hash"]) == (new, aged.name)
    rows = (aged.parent / new / "predictions.jsonl").read_bytes()
    execute(cfg)  # skipped: nothing recomputed
    assert (aged.parent / new / "predictions.jsonl").read_bytes() == rows

    before = {f: f.read_bytes() for f in (tmp_path / "runs").rglob("*") if f.is_file()}
    assert cli(["--runs-dir", str(tmp_path / "runs")]) == 0
    assert "0 of 1 run folders re-keyed" in capsys.readouterr().out
    assert {f: f.read_bytes() for f in (tmp_path / "runs").rglob("*") if f.is_file()} == before


def test_a_run_whose_old_hash_is_not_reproduced_is_left_as_it_is(
    tmp_path, data_dir, cache_dir, capsys
):
    cfg = _cfg(tmp_path, data_dir, cache_dir)
    execute(cfg)
    run = _age(plan(cfg).store.dir)
    wrong = run.rename(run.parent / "0123456789ab")
    metrics = json.loads((wrong / "metrics.json").read_text())
    (wrong / "metrics.json").write_text(json.dumps({**metrics, "config_hash": wrong.name}))
    assert cli(["--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert f"{wrong}: not re-keyed: its old hash is not reproduced" in out
    assert wrong.is_dir()


def test_tables_and_the_reply_file_are_re_keyed_once(tmp_path):
    old_new = {"aaaaaaaaaaaa": "bbbbbbbbbbbb"}
    df = pd.DataFrame(
        {
            "dataset": ["d"],
            "retriever": ["dense"],
            "config_hash": ["aaaaaaaaaaaa"],
            "baseline_config_hash": ["aaaaaaaaaaaa"],
            "run_dir": ["d/dense/aaaaaaaaaaaa"],
            "params": ["key=aaaaaaaaaaaa0"],  # not a hash: a longer hex string is left alone
        }
    )
    df.to_parquet(tmp_path / "leaderboard.parquet", index=False)
    df.to_csv(tmp_path / "leaderboard.csv", index=False)
    (tmp_path / "leaderboard.md").write_text("| dense | aaaaaaaaaaaa |\n")
    reply = Reply(
        key="c" * 64, model="m", text="t", prompt_tokens=1, completion_tokens=1, seconds=0.5
    )
    if hasattr(reply, "runs"):  # reply files that name the runs of each entry
        import dataclasses

        reply = dataclasses.replace(reply, runs=("d/dense/aaaaaaaaaaaa",))
    write_reply_file(tmp_path / "llm_replies.jsonl.gz", [reply], {"d/dense/aaaaaaaaaaaa": 1})

    assert rehash.rekey_tables(tmp_path, old_new) == {
        "leaderboard.csv": 3,
        "leaderboard.md": 1,
        "leaderboard.parquet": 3,
    }
    assert rehash.rekey_reply_file(tmp_path / "llm_replies.jsonl.gz", old_new) == 1
    got = pd.read_parquet(tmp_path / "leaderboard.parquet").iloc[0]
    assert (got.config_hash, got.baseline_config_hash, got.run_dir, got.params) == (
        "bbbbbbbbbbbb",
        "bbbbbbbbbbbb",
        "d/dense/bbbbbbbbbbbb",
        "key=aaaaaaaaaaaa0",
    )
    assert (tmp_path / "leaderboard.md").read_text() == "| dense | bbbbbbbbbbbb |\n"
    head, replies = read_reply_file(tmp_path / "llm_replies.jsonl.gz")
    assert list(head["runs"]) == ["d/dense/bbbbbbbbbbbb"] and replies[0].text == "t"

    before = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    assert rehash.rekey_tables(tmp_path, old_new) == {}
    assert rehash.rekey_reply_file(tmp_path / "llm_replies.jsonl.gz", old_new) == 0
    assert {f.name: f.read_bytes() for f in tmp_path.iterdir()} == before


def test_an_old_hash_given_two_new_ones_is_refused():
    import pytest

    with pytest.raises(ValueError, match="old hash aaaaaaaaaaaa maps to two new hashes"):
        rehash.old_to_new(
            [
                {"old_hash": "aaaaaaaaaaaa", "new_hash": "bbbbbbbbbbbb"},
                {"old_hash": "aaaaaaaaaaaa", "new_hash": "cccccccccccc"},
            ]
        )


# retrievers whose reference rows were first made after the re-hash (issue #57's baselines):
# they were born under the new hash, so the map has no line for them
BORN_AFTER_THE_REHASH = {"bm25", "hybrid", "linearrag"}


def test_the_committed_map_names_every_reference_row_once_under_its_new_hash():
    """results/reference/rehash_map.csv: one line per run of the reference made before the
    re-hash, its new hash the one the reference rows carry, its old hash none of theirs; every
    reference row it does not name is of a method added after the re-hash."""
    with open(REFERENCE / "rehash_map.csv", newline="", encoding="utf-8") as fh:
        mapping = list(csv.DictReader(fh))
    with open(REFERENCE_LEADERBOARD, newline="", encoding="utf-8") as fh:
        rows = {(r["dataset"], r["retriever"], r["config_hash"]) for r in csv.DictReader(fh)}
    new = {(m["dataset"], m["retriever"], m["new_hash"]) for m in mapping}
    old = {(m["dataset"], m["retriever"], m["old_hash"]) for m in mapping}
    assert len(new) == len(mapping) and new <= rows
    assert {retriever for _, retriever, _ in rows - new} <= BORN_AFTER_THE_REHASH
    assert not old & rows


def test_the_seeding_node_and_the_flat_keys_of_before_are_one_config_either_way():
    """Issue #58's second step: a stored config's flat seeding keys nest into today's node and
    flatten back unchanged, for every class that holds HippoRAG's seeding."""
    hipporag = {"damping": 0.5, "seeding": "hipporag1", "filter": False, "linking_top_k": 5}
    nested = rehash.nested_seeding(hipporag, "HippoRAGRetriever")
    assert nested == {
        "damping": 0.5,
        "seeding": {"method": "hipporag1", "filter": False, "linking_top_k": 5},
    }
    assert rehash.flat_seeding(nested, "HippoRAGRetriever") == hipporag
    catrag = {"n_seed": 5, "top_phrases": 5, "filter": "auto"}
    nested = rehash.nested_seeding(catrag, "CatRAGRetriever")
    assert nested == {"n_seed": 5, "seeding": {"top_phrases": 5, "filter": "auto"}}
    assert rehash.flat_seeding(nested, "CatRAGRetriever") == catrag
    joint = {"seeding": "keywords", "alpha": 50.0}
    nested = rehash.nested_seeding(joint, "JointFlowDiffusionRetriever")
    assert set(nested["hipporag_seeding"]) == {
        "linking_top_k",
        "top_phrases",
        "passage_node_weight",
        "filter",
    }
    assert rehash.flat_seeding(nested, "JointFlowDiffusionRetriever") == joint
    dense = {"k": 5}
    assert (
        rehash.nested_seeding(dense, "DenseRetriever")
        == rehash.flat_seeding(dense, "DenseRetriever")
        == dense
    )


def test_a_hipporag_config_hashes_differently_in_each_form_and_the_old_forms_are_flat():
    cfg = load_config(["retriever=hipporag", "retriever.seeding.filter=false"])
    semantic_new = {"retriever": {"class": "HippoRAGRetriever", **cfg_node(cfg)}}
    mid = rehash.mid_form(semantic_new)["retriever"]
    old = rehash.legacy_form(semantic_new, "hopbench.retrieve.hipporag.HippoRAGRetriever")
    assert mid["seeding"] == "hipporag2" and mid["filter"] is False and "class" in mid
    assert old["retriever"]["_target_"] == "hopbench.retrieve.hipporag.HippoRAGRetriever"
    assert "class" not in old["retriever"] and old["retriever"]["linking_top_k"] == 5


def cfg_node(cfg) -> dict:
    node = OmegaConf.to_container(cfg.retriever, resolve=True)
    return {k: v for k, v in node.items() if k != "_target_"}


def test_no_tracked_page_quotes_a_hash_the_re_hash_replaced():
    """Benchmarks' results, docs and notebooks name runs by today's hash (rehash_map.csv)."""
    import subprocess

    root = REFERENCE.parents[1]
    stale = {k for k, v in rehash.read_map(REFERENCE / "rehash_map.csv").items() if k != v}
    files = subprocess.run(
        ["git", "ls-files", "benchmarks", "docs", "README.md", "experiments"],
        capture_output=True,
        text=True,
        cwd=root,
        check=True,
    ).stdout.split()
    found = [
        f"{f}: {m.group(0)}"
        for f in files
        if f.endswith((".md", ".csv", ".sh", ".txt", ".ipynb")) and (root / f).is_file()
        for m in rehash._HASH.finditer((root / f).read_text(encoding="utf-8"))
        if m.group(0) in stale
    ]
    assert not found, found[:10]
