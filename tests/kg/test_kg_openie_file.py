"""graph=openie (HippoRAG OpenIE files as the graph) and `hopbench kg-export`, on the published
MuSiQue OpenIE and on files crafted from real corpus passages."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from hopbench.cli import kg_stats as stats_cli
from hopbench.cli import main as hopbench_main
from hopbench.core.errors import HopbenchError
from hopbench.data import load_dataset
from hopbench.kg import load_or_build, normalize_name
from hopbench.kg.cache_keys import cache_keys
from hopbench.kg.extraction_run import make_extractor
from hopbench.kg.openie_file import OpenIEFileExtractor, chunk_id, match_openie
from hopbench.kg.settings import resolve_settings, semantic_settings
from tests.kg.kg_helpers import assert_same_graph

PUBLISHED = "musique/openie/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"


@pytest.fixture(scope="module")
def published(data_dir):
    return data_dir / PUBLISHED


@pytest.fixture(scope="module")
def musique(data_dir):
    return load_dataset(
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )


def _openie_cfg(path) -> dict:
    return {"extractor": "openie", "openie": {"path": str(path)}}


class NoEncoder:
    """An encoder that must not be used: the build has to stop before any embedding."""

    identity = "no-encoder"
    batch_size = 8

    def encode(self, texts, desc=""):
        raise AssertionError(f"encoded {len(texts)} {desc} before refusing the file")


def test_published_file_matches_the_whole_musique_corpus(published, musique):
    m = match_openie(published, musique.corpus)
    raw = json.loads(published.read_text(encoding="utf-8"))["docs"]
    # counted here independently of the reader: the file lists the corpus in order
    valid = [
        [
            t
            for t in d["extracted_triples"]
            if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)
        ]
        for d in raw
    ]
    r = m.report
    assert (r["format"], r["corpus_passages"], r["matched"], r["unmatched_passages"]) == (
        "v1",
        1890,
        1890,
        0,
    )
    assert r["records_not_in_corpus"] == r["duplicate_records"] == r["matched_normalised"] == 0
    assert r["triples"] == sum(map(len, valid)) == 17234
    assert (
        r["malformed_triples"]
        == sum(len(d["extracted_triples"]) for d in raw) - r["triples"]
        == 185
    )
    assert r["entities"] == sum(len(d["extracted_entities"]) for d in raw)
    assert r["file_sha256"] == hashlib.sha256(published.read_bytes()).hexdigest()
    for p, d, ts in zip(musique.corpus, raw, valid):
        assert (d["title"], d["text"]) == (p.title, p.text)
        assert m.records[p.id].triples == ts and m.records[p.id].status == "ok"


def test_a_file_for_another_corpus_fails_before_any_work(published, data_dir, tmp_path):
    wiki = load_dataset(
        "2wiki_sub",
        "2wiki",
        data_dir / "2wikimultihopqa/2wikimultihopqa_qa_sub.json",
        data_dir / "2wikimultihopqa/2wikimultihopqa_sub_corpus.json",
    )
    with pytest.raises(HopbenchError) as err:
        load_or_build(wiki, _openie_cfg(published), encoder=NoEncoder(), cache_dir=tmp_path)
    msg = str(err.value)
    assert str(published) in msg and f"only 0 of the corpus's {len(wiki.corpus)} passages" in msg
    assert "another corpus" in msg and "\n" not in msg.replace("\\n", "")
    assert not (tmp_path / "kg" / "graphs").exists()


def test_missing_path_and_non_openie_json_are_refused(tmp_path, musique_sub):
    with pytest.raises(HopbenchError, match="graph.openie.path"):
        resolve_settings({"extractor": "openie"})
    with pytest.raises(HopbenchError, match="no such file"):
        make_extractor(resolve_settings(_openie_cfg(tmp_path / "nope.json"))).identity()
    bad = tmp_path / "list.json"
    bad.write_text(json.dumps([{"passage": "x"}]))
    with pytest.raises(HopbenchError, match="not a HippoRAG OpenIE file"):
        match_openie(bad, musique_sub.corpus)


def test_a_deeply_nested_openie_file_is_one_error(tmp_path, musique_sub):
    """200,000 levels of nesting: the same one-line refusal as any non-JSON file, no traceback."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(HopbenchError, match="not a JSON file"):
        match_openie(deep, musique_sub.corpus)


def test_crafted_bad_file_is_read_with_everything_counted(musique_sub, tmp_path):
    c = musique_sub.corpus
    corpus = c[:6]
    text = [f"{p.title}\n{p.text}" for p in corpus]
    docs = [
        # v2 record: two good triples, then 2-, 4-element, non-string and non-list "triples"
        {
            "idx": chunk_id(text[0]),
            "passage": text[0],
            "extracted_entities": ["A", 7, "B"],
            "extracted_triples": [
                ["A", "knows", "B"],
                ["a", "likes", "c"],
                ["A", "broken"],
                ["A", "r", "B", "extra"],
                ["A", 1, "B"],
                "A knows B",
            ],
        },
        {
            "idx": chunk_id(text[1]),
            "passage": text[1],
            "extracted_entities": [],
            "extracted_triples": [],
        },
        # the same passage again: first record kept
        {
            "idx": chunk_id(text[1]),
            "passage": text[1],
            "extracted_entities": ["X"],
            "extracted_triples": [],
        },
        # v2 record without its passage text: matched by idx; and one with a wrong idx
        {
            "idx": chunk_id(text[2]),
            "extracted_entities": ["C"],
            "extracted_triples": [["C", "is", "D"]],
        },
        {
            "idx": "chunk-0000",
            "passage": text[3],
            "extracted_entities": [],
            "extracted_triples": [],
        },
        # v1 record: title + text, passage with extra whitespace (matched after normalisation)
        {
            "title": corpus[4].title,
            "text": corpus[4].text,
            "passage": "  " + text[4].replace(" ", "  ") + " ",
            "extracted_entities": [],
            "extracted_triples": [["E", "near", "F"]],
        },
        # a passage from another corpus, and records that cannot be read
        {
            "passage": "Nowhere\nNot in this corpus.",
            "extracted_entities": [],
            "extracted_triples": [],
        },
        {"extracted_entities": [], "extracted_triples": []},
        "not a record",
    ]  # corpus[5] has no record
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"docs": docs}), encoding="utf-8")
    m = match_openie(f, corpus)
    r = m.report
    assert (r["matched"], r["unmatched_passages"], r["matched_normalised"]) == (5, 1, 1)
    assert (r["triples"], r["malformed_triples"]) == (4, 4)
    assert (r["entities"], r["malformed_entities"]) == (3, 1)
    assert (
        r["duplicate_records"],
        r["records_not_in_corpus"],
        r["malformed_records"],
        r["idx_mismatches"],
    ) == (1, 1, 2, 1)
    assert r["format"] == "v1+v2"
    assert m.records[corpus[0].id].triples == [["A", "knows", "B"], ["a", "likes", "c"]]
    assert m.records[corpus[1].id].entities == []
    assert m.records[corpus[2].id].triples == [["C", "is", "D"]]
    assert m.records[corpus[4].id].triples == [["E", "near", "F"]]
    assert (
        m.records[corpus[5].id].status == "failed" and "no record" in m.records[corpus[5].id].error
    )
    # 5 of 6 is enough; 5 of 18 is not
    with pytest.raises(HopbenchError, match="only 5 of the corpus's 18 passages"):
        match_openie(f, c)


def test_openie_graph_holds_exactly_the_files_triples(
    published, musique_sub, encoder, cache_dir, data_dir, capsys
):
    kg = load_or_build(musique_sub, _openie_cfg(published), encoder=encoder, cache_dir=cache_dir)
    rep = kg.manifest["extraction_report"]
    assert (rep["matched"], rep["records_not_in_corpus"]) == (18, 1890 - 18)
    raw = {
        f"{d['title']}\n{d['text']}": d
        for d in json.loads(published.read_text(encoding="utf-8"))["docs"]
    }
    expected = set()
    for j, p in enumerate(musique_sub.corpus):
        for t in raw[p.content]["extracted_triples"]:
            if len(t) == 3:
                s, r, o = normalize_name(t[0]), " ".join(t[1].lower().split()), normalize_name(t[2])
                if s and o and r and s != o:
                    expected.add((s, r, o, j))
    got = {
        (kg.entity_names[s], r, kg.entity_names[o], int(p))
        for s, r, o, p in zip(kg.fact_subject, kg.fact_relation, kg.fact_object, kg.fact_passage)
    }
    assert got == expected and kg.n_facts == len(expected)
    assert kg.failed_passages == []
    assert np.allclose(np.linalg.norm(kg.fact_embeddings, axis=1), 1, atol=1e-5)
    rc = stats_cli(
        [
            "dataset=musique_sub",
            "graph=openie",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and kg.manifest["graph_key"] in out and "18/18 corpus passages matched" in out


def test_export_then_load_gives_the_same_graph(
    musique_sub, musique_kg, encoder, cache_dir, data_dir, tmp_path, capsys
):
    out = tmp_path / "sub_spacy_openie.json"
    rc = hopbench_main(
        [
            "kg-export",
            "dataset=musique_sub",
            "graph=spacy",
            f"paths.data_dir={data_dir}",
            f"paths.cache_dir={cache_dir}",
            "progress=false",
            "--out",
            str(out),
        ]
    )
    assert rc == 0 and f"wrote {out}: 18 passages" in capsys.readouterr().out
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(doc) == ["avg_ent_chars", "avg_ent_words", "docs"]
    assert len(doc["docs"]) == 18
    for d, p in zip(doc["docs"], musique_sub.corpus):
        assert sorted(d) == ["extracted_entities", "extracted_triples", "idx", "passage"]
        assert d["passage"] == f"{p.title}\n{p.text}"
        assert d["idx"] == "chunk-" + hashlib.md5(d["passage"].encode()).hexdigest()
    ents = [e for d in doc["docs"] for e in d["extracted_entities"]]
    assert doc["avg_ent_chars"] == round(sum(map(len, ents)) / len(ents), 4)
    assert sum(len(d["extracted_triples"]) for d in doc["docs"]) > 0

    back = load_or_build(
        musique_sub, _openie_cfg(out), encoder=encoder, cache_dir=tmp_path / "cache"
    )
    assert back.manifest["extraction_report"]["malformed_triples"] == 0
    assert (
        back.manifest["graph_key"] != musique_kg.manifest["graph_key"]
    )  # another extractor identity
    assert_same_graph(back, musique_kg)


def test_hash_covers_the_files_bytes_not_its_path(musique_sub, published, tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes(published.read_bytes())
    changed = tmp_path / "changed.json"
    data = json.loads(published.read_text(encoding="utf-8"))
    data["docs"][0]["extracted_triples"][0][1] = "was published by"
    changed.write_text(json.dumps(data), encoding="utf-8")

    def keys(path):
        s = resolve_settings(_openie_cfg(path))
        return cache_keys(list(musique_sub.corpus), s, make_extractor(s), NoEncoder())[
            :2
        ], semantic_settings(s)

    (k_pub, sem_pub), (k_copy, sem_copy), (k_changed, sem_changed) = (
        keys(published),
        keys(copy),
        keys(changed),
    )
    assert k_pub == k_copy and sem_pub == sem_copy  # where the file lives does not matter
    assert k_changed[0] != k_pub[0] and k_changed[1] != k_pub[1] and sem_changed != sem_pub
    assert sem_pub["openie"] == {"sha256": hashlib.sha256(published.read_bytes()).hexdigest()}
    # other extractors' run settings are as before graph=openie existed
    assert "openie" not in semantic_settings(resolve_settings(None))
    assert OpenIEFileExtractor(copy).identity() == OpenIEFileExtractor(published).identity()


def test_export_needs_out(capsys):
    assert hopbench_main(["kg-export", "dataset=musique_sub"]) == 2
    assert "--out FILE is required" in capsys.readouterr().err


def test_resumed_extraction_serves_passages_without_records(published, musique_sub, tmp_path):
    """A resumed build asks only for the passages not yet logged, which may all lack a record:
    coverage is judged once on the whole corpus (check_corpus), not on that remainder."""
    raw = {
        f"{d['title']}\n{d['text']}": d
        for d in json.loads(published.read_text(encoding="utf-8"))["docs"]
    }
    have, lack = musique_sub.corpus[:10], musique_sub.corpus[10:]
    f = tmp_path / "part.json"
    f.write_text(json.dumps({"docs": [raw[p.content] for p in have]}), encoding="utf-8")
    ex = OpenIEFileExtractor(f)
    assert ex.check_corpus(musique_sub.corpus)["unmatched_passages"] == len(lack)
    recs = list(ex.extract(lack))
    assert [r.passage_id for r in recs] == [p.id for p in lack]
    assert all(r.status == "failed" and not r.triples for r in recs)
    with pytest.raises(HopbenchError, match="another corpus"):
        list(OpenIEFileExtractor(f).extract(lack))  # unchecked: the passages given are judged
