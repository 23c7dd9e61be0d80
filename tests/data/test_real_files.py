"""Loaders on the real benchmark subsets: counts, gold passages, hop order."""

import json

from hopbench.data import load_dataset
from hopbench.data.schema import passage_id


def test_musique_subset_counts_and_hop_order(data_dir):
    ds = load_dataset(
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )
    assert len(ds.questions) == 100
    assert len(ds.corpus) == 1890
    raw = json.loads((data_dir / "musique/musique_train.json").read_text())
    q0, r0 = ds.questions[0], raw[0]
    # gold in hop order: decomposition says paragraph idx 6 then 10
    by_idx = {p["idx"]: p for p in r0["paragraphs"]}
    expected = [
        passage_id(
            by_idx[s["paragraph_support_idx"]]["title"],
            by_idx[s["paragraph_support_idx"]]["paragraph_text"],
        )
        for s in r0["question_decomposition"]
    ]
    assert q0.gold_passage_ids == expected
    assert q0.answers == ["G. Stanley Hall", "Stanley Hall"]
    assert all(2 <= len(q.gold_passage_ids) <= 4 for q in ds.questions)
    assert ds.n_retrieval_scorable == 100


def test_musique_derived_corpus_equals_corpus_file(data_dir):
    with_file = load_dataset(
        "m",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )
    derived = load_dataset("m", "musique", data_dir / "musique/musique_train.json")
    assert {p.id for p in derived.corpus} == {p.id for p in with_file.corpus}
    assert [q.gold_passage_ids for q in derived.questions] == [
        q.gold_passage_ids for q in with_file.questions
    ]


def test_musique_tiny_subset(data_dir):
    ds = load_dataset(
        "s",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )
    assert (len(ds.questions), len(ds.corpus)) == (3, 18)


def test_hotpotqa_subset_counts(data_dir):
    ds = load_dataset(
        "hotpotqa",
        "hotpotqa",
        data_dir / "hotpotqa/hotpotqa_train.json",
        data_dir / "hotpotqa/hotpotqa_train_corpus.json",
    )
    assert (len(ds.questions), len(ds.corpus)) == (100, 994)
    q = ds.questions[0]
    assert [ds.passage(p).title for p in q.gold_passage_ids] == ["Alû", "Lilu (mythology)"]
    # HippoRAG joins HotpotQA sentences with "" (no separator; they carry their own leading spaces)
    raw = json.loads((data_dir / "hotpotqa/hotpotqa_train_corpus.json").read_text())
    assert ds.passage(q.gold_passage_ids[0]).text == "".join(raw["Alû"])
    assert all(len(q.gold_passage_ids) == 2 for q in ds.questions)


def test_hotpotqa_derived_corpus_covers_gold(data_dir):
    ds = load_dataset("hotpotqa", "hotpotqa", data_dir / "hotpotqa/hotpotqa_train.json")
    assert len(ds.corpus) == 994
    assert ds.n_retrieval_scorable == 100


def test_2wiki_linearrag_gold_mapping(data_dir):
    ds = load_dataset(
        "2wiki",
        "2wiki_linearrag",
        data_dir / "2wikimultihopqa/2wikimultihopqa_questions.json",
        data_dir / "2wikimultihopqa/2wikimultihopqa_corpus.json",
    )
    assert (len(ds.questions), len(ds.corpus)) == (1000, 6119)
    # 761 map exactly; NFKC + lower + trailing "(...)" stripping and object-based disambiguation -> 868
    assert ds.n_retrieval_scorable == 868
    assert ds.notes["n_retrieval_excluded"] == 132
    first = ds.questions[0]
    assert [ds.passage(p).title for p in first.gold_passage_ids] == [
        "Lothair II",
        "Ermengarde of Tours",
    ]
    assert first.meta["type"] == "compositional"


def test_2wiki_original_format_derived_corpus(data_dir):
    ds = load_dataset("2w", "2wiki", data_dir / "2wikimultihopqa/2wikimultihopqa_qa_sub.json")
    assert len(ds.questions) == 2
    titles = [ds.passage(p).title for p in ds.questions[0].gold_passage_ids]
    assert titles == ["Lothair II", "Ermengarde of Tours"]


def test_limit_cuts_questions_not_corpus(data_dir):
    ds = load_dataset(
        "m",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
        limit=5,
    )
    assert (len(ds.questions), len(ds.corpus)) == (5, 1890)


def test_hover_with_user_corpus(data_dir, tmp_path):
    claims = json.loads((data_dir / "hover/hover_dev_release_v1.1.json").read_text())[:3]
    titles = {f[0] for c in claims for f in c["supporting_facts"]}
    corpus = [{"title": t, "text": f"Paragraph about {t}."} for t in sorted(titles)]
    corpus.append({"title": "Unrelated", "text": "Nothing to see."})
    qpath, cpath = tmp_path / "claims.json", tmp_path / "corpus.json"
    qpath.write_text(json.dumps(claims))
    cpath.write_text(json.dumps(corpus))
    ds = load_dataset("hover", "hover", qpath, cpath)
    assert len(ds.questions) == 3 and len(ds.corpus) == len(titles) + 1
    q = ds.questions[0]
    assert q.kind == "claim" and q.label == "SUPPORTED"
    assert [ds.passage(p).title for p in q.gold_passage_ids] == [
        "Life Goes On (Fergie song)",
        "M.I.L.F. $",
    ]
    assert q.meta["hops"] == 2


def test_hover_real_dev_file_parses_with_covering_corpus(data_dir, tmp_path):
    path = data_dir / "hover/hover_dev_release_v1.1.json"
    claims = json.loads(path.read_text())
    titles = sorted({f[0] for c in claims for f in c["supporting_facts"]})
    cpath = tmp_path / "corpus.json"
    cpath.write_text(json.dumps([{"title": t, "text": t} for t in titles]))
    ds = load_dataset("hover", "hover", path, cpath)
    assert len(ds.questions) == 4000
    assert {q.label for q in ds.questions} == {"SUPPORTED", "NOT_SUPPORTED"}


def test_hub_loader_parses_downloaded_files_with_the_same_code(data_dir):
    from hopbench.data import hub

    calls = []

    def fake_download(repo_id, filename, repo_type, revision, cache_dir):
        calls.append((repo_id, filename, repo_type))
        local = {
            "musique.json": "musique/musique_qa_sub.json",
            "musique_corpus.json": "musique/musique_sub_corpus.json",
        }[filename]
        return str(data_dir / local)

    q, c = hub.fetch_hipporag_files("musique", downloader=fake_download)
    ds = load_dataset("musique", "musique", q, c)
    assert calls == [
        ("osunlp/HippoRAG_2", "musique.json", "dataset"),
        ("osunlp/HippoRAG_2", "musique_corpus.json", "dataset"),
    ]
    assert (len(ds.questions), len(ds.corpus)) == (3, 18)
