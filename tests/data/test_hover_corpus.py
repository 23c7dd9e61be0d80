"""HoVer with the corpus built from ProgramFC's gold evidence, on the real files."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from hopbench.data import load_dataset
from hopbench.data.hover import load_hover_with_stats
from hopbench.data.hover_corpus import (
    HOW_AMBIGUOUS,
    HOW_COOCCURRENCE,
    HOW_ELIMINATION,
    HOW_TITLE_WORDS,
    ClaimTitles,
    _Paragraph,
    build_hover_corpus,
    is_evidence_file,
    split_title,
    title_key,
    title_word_score,
    words,
)
from hopbench.evaluate.score import score_question
from hopbench.harness.compose import build_dataset, load_config
from hopbench.report.breakdown import breakdown
from hopbench.report.run_reader import Run

CLAIMS = "hover/hover_dev_release_v1.1.json"
EVIDENCE = "hover/programfc_hover_dev_gold_evidence.jsonl"


@pytest.fixture(scope="module")
def raw(data_dir):
    claims = json.loads((data_dir / CLAIMS).read_text(encoding="utf-8"))
    lines = [
        json.loads(line) for line in (data_dir / EVIDENCE).read_text(encoding="utf-8").splitlines()
    ]
    return claims, lines


@pytest.fixture(scope="module")
def built(data_dir):
    return load_hover_with_stats(data_dir / CLAIMS, data_dir / EVIDENCE)


@pytest.fixture(scope="module")
def aligned(data_dir, raw):
    """The aligner's own view (assignments with how/margin), from the same two files."""
    claims, _ = raw
    parsed = []
    for r in claims:
        titles = tuple(dict.fromkeys(t for t, _ in r["supporting_facts"]))
        top = {t: max(s for tt, s in r["supporting_facts"] if tt == t) for t in titles}
        parsed.append(ClaimTitles(r["uid"], r["claim"], titles, top))
    return build_hover_corpus(data_dir / EVIDENCE, parsed, data_dir / CLAIMS)


def _titles(rec) -> list[str]:
    return list(dict.fromkeys(t for t, _ in rec["supporting_facts"]))


def test_default_config_needs_no_extra_path(data_dir):
    cfg = load_config([f"paths.data_dir={data_dir}", "dataset=hover"])
    ds = build_dataset(cfg)
    assert ds.name == "hover"
    assert (len(ds.questions), len(ds.corpus)) == (3436, 3619)
    assert ds.notes["n_retrieval_excluded"] == 4


def test_counts_of_claims_and_articles(built, raw):
    questions, corpus, stats = built
    claims, lines = raw
    assert stats["evidence_lines"] == len(lines) == 1985 and stats["evidence_lines_unmatched"] == 0
    # one article per distinct supporting title of the covered claims, one paragraph each
    covered = {r["claim"]: r for r in claims}
    titles = {title_key(t) for line in lines for t in _titles(covered[line["original"]])}
    paragraphs = {p.strip() for line in lines for p in line["gold_evidence"].split("\n")}
    assert len(corpus) == len(titles) == len(paragraphs) == 3619
    assert len({p.id for p in corpus}) == len({p.text for p in corpus}) == 3619
    # in scope: every claim whose titles all have text -- computed here from the raw files
    expected = [r for r in claims if all(title_key(t) in titles for t in _titles(r))]
    assert [q.id for q in questions] == [r["uid"] for r in expected]
    by = Counter((q.label, q.meta["hops"]) for q in questions)
    assert by == {
        ("SUPPORTED", 2): 521,
        ("SUPPORTED", 3): 968,
        ("SUPPORTED", 4): 511,
        ("NOT_SUPPORTED", 2): 191,
        ("NOT_SUPPORTED", 3): 773,
        ("NOT_SUPPORTED", 4): 472,
    }
    assert sum(r["label"] == "SUPPORTED" for r in claims) == 2000  # all of them are in scope
    assert stats["claims_out_of_scope"] == {"NOT_SUPPORTED": 564}
    assert all(q.meta["hops"] == len(q.gold_passage_ids) for q in questions)


def test_every_claim_gets_exactly_its_own_paragraphs(built, raw):
    questions, corpus, _ = built
    claims, lines = raw
    text = {p.id: p.text for p in corpus}
    evidence = {
        line["original"]: {p.strip() for p in line["gold_evidence"].split("\n")} for line in lines
    }
    by_uid = {r["uid"]: r for r in claims}
    n = 0
    for q in questions:
        paragraphs = evidence.get(by_uid[q.id]["claim"])
        if paragraphs is not None:
            assert {text[pid] for pid in q.gold_passage_ids} == paragraphs
            n += 1
    assert n == 2001  # 2,000 SUPPORTED + one NOT_SUPPORTED claim whose text is also a SUPPORTED one


def test_titles_keep_hover_spelling(built):
    _, corpus, _ = built
    by_title = {p.title: p for p in corpus}
    assert "Thomas &amp; Mack Center" in by_title and "Thomas & Mack Center" not in by_title
    assert by_title["Thomas &amp; Mack Center"].text.startswith("Thomas & Mack Center is an arena")
    assert by_title["H&amp;R Block"].text.startswith(
        "H&R Block is an American tax preparation company"
    )


def test_known_assignments(built):
    questions, corpus, _ = built
    ds = {p.id: p for p in corpus}
    q = next(q for q in questions if q.id == "042339bf-0374-4ab3-ab49-6df5f12d868e")
    gold = [ds[p] for p in q.gold_passage_ids]
    assert [p.title for p in gold] == ["Life Goes On (Fergie song)", "M.I.L.F. $"]
    assert gold[0].text.startswith('"Life Goes On" is a song recorded by American singer Fergie')
    assert gold[1].text.startswith('"M.I.L.F. $" (pronounced "MILF money")')
    assert q.gold_complete and q.meta["uncertain_titles"] == []


def test_margin_figures(aligned, built):
    stats = built[2]
    how = Counter(a.how for a in aligned.assignments.values())
    assert how == {
        HOW_COOCCURRENCE: 525,
        HOW_TITLE_WORDS: 3013,
        HOW_ELIMINATION: 75,
        HOW_AMBIGUOUS: 6,
    }
    assert stats["titles_by_how"] == dict(how) and stats["titles_clear"] == 3613
    assert stats["group_sizes"] == {"1": 525, "2": 541, "3": 508, "4": 122}
    assert stats["titles_in_inconsistent_groups"] == stats["paragraphs_unassigned"] == 0
    pinned = [a for a in aligned.assignments.values() if a.how == HOW_COOCCURRENCE]
    assert all(a.margin == float("inf") for a in pinned)
    assert all(a.margin >= 0.25 for a in aligned.assignments.values() if a.clear)
    assert all(a.margin < 0.25 for a in aligned.assignments.values() if not a.clear)


def _opening_share(title: str, text: str, n: int = 30) -> float:
    """Share of the title's words (without its "(...)") among the paragraph's first n words."""
    tw = [w for w in words(split_title(title)[0]) if w not in {"the", "a", "an", "of", "and", "in"}]
    tw = tw or words(split_title(title)[0])
    opening = set(words(text)[:n])
    return sum(w in opening for w in tw) / len(tw)


def test_sample_of_assignments_checked_against_title_words(aligned):
    text = {p.id: p.text for p in aligned.passages}
    by_words = [a for a in aligned.assignments.values() if a.how == HOW_TITLE_WORDS]
    sample = by_words[::20]
    assert len(sample) == 151
    assert all(_opening_share(a.title, text[a.passage_id]) >= 0.5 for a in sample)
    # the co-occurrence pins never look at words: their paragraphs open with their titles too
    pinned = [a for a in aligned.assignments.values() if a.how == HOW_COOCCURRENCE]
    opens = sum(_opening_share(a.title, text[a.passage_id]) > 0 for a in pinned)
    assert opens / len(pinned) > 0.98


def test_title_word_score_agrees_with_cooccurrence_where_that_decides(aligned, raw):
    """Ground truth from co-occurrence: the scorer alone picks the pinned paragraph among all of
    each claim's paragraphs (a harder task than inside a group) almost always."""
    claims, lines = raw
    text = {p.id: p.text for p in aligned.passages}
    pinned = {
        k: text[a.passage_id] for k, a in aligned.assignments.items() if a.how == HOW_COOCCURRENCE
    }
    by_text = {r["claim"]: r for r in claims}
    hits = total = 0
    for line in lines:
        rec = by_text[line["original"]]
        paragraphs = [_Paragraph(p.strip()) for p in line["gold_evidence"].split("\n")]
        for t in _titles(rec):
            if title_key(t) in pinned:
                best = max(paragraphs, key=lambda p: title_word_score(t, p))
                hits += best.text == pinned[title_key(t)]
                total += 1
    assert total == 849 and hits / total > 0.98


def test_ambiguous_claims_kept_for_accuracy_not_retrieval(built):
    questions, _, _ = built
    excluded = [q for q in questions if not q.retrieval_scorable]
    assert len(excluded) == 4 and all(q.meta["uncertain_titles"] for q in excluded)
    assert {t for q in excluded for t in q.meta["uncertain_titles"]} >= {
        "The Office (U.S. season 2)",
        "The Office (U.S. TV series)",
    }
    m = score_question(excluded[0], excluded[0].gold_passage_ids, excluded[0].label)
    assert m == {"accuracy": 1.0}
    ok = next(q for q in questions if q.retrieval_scorable)
    m = score_question(
        ok, ok.gold_passage_ids + ["x"], "NOT_SUPPORTED" if ok.label == "SUPPORTED" else "SUPPORTED"
    )
    assert m["recall@5"] == 1.0 and m["fcr@5"] == 1.0 and m["accuracy"] == 0.0


def test_breakdown_groups_claims_by_hops(built, tmp_path):
    questions, corpus, _ = built
    other = [p.id for p in corpus[:10]]
    sample = questions[::10]
    rows = []
    for q in sample:
        ranked = (q.gold_passage_ids[:2] + [p for p in other if p not in q.gold_passage_ids])[:10]
        answer = "SUPPORTED"
        rows.append({"id": q.id, "meta": q.meta, "metrics": score_question(q, ranked, answer)})
    run = Run(
        dir=tmp_path / "hover" / "dense" / "abc",
        metrics={"dataset": "hover", "retriever": "dense"},
        config={},
        predictions=rows,
    )
    df = breakdown([run], n_resamples=50)
    hops = df[df["group_by"] == "hops"].set_index("group")
    assert set(hops.index) == {"2", "3", "4"}
    n = Counter(str(q.meta["hops"]) for q in sample)
    assert hops["n"].to_dict() == dict(n)
    # two gold passages ranked: full chains only for 2-hop claims
    assert (
        hops.loc["2", "fcr@5"] == 1.0
        and hops.loc["3", "fcr@5"] == 0.0
        and hops.loc["4", "fcr@5"] == 0.0
    )
    assert hops.loc["3", "recall@5"] == pytest.approx(2 / 3)
    labels = {h: [q.label for q in sample if str(q.meta["hops"]) == h] for h in ("2", "3", "4")}
    for h, ls in labels.items():
        assert hops.loc[h, "accuracy"] == pytest.approx(ls.count("SUPPORTED") / len(ls))


def test_evidence_file_detection(data_dir, tmp_path):
    assert is_evidence_file(data_dir / EVIDENCE)
    renamed = tmp_path / "evidence.txt"
    renamed.write_bytes((data_dir / EVIDENCE).read_bytes()[:20000].rsplit(b"\n", 1)[0])
    assert is_evidence_file(renamed)
    assert not is_evidence_file(data_dir / "2wikimultihopqa/2wikimultihopqa_corpus.json")
    assert not is_evidence_file(data_dir / "hotpotqa/hotpotqa_train_corpus.json")


def test_limit_keeps_the_whole_corpus(data_dir):
    ds = load_dataset("hover", "hover", data_dir / CLAIMS, data_dir / EVIDENCE, limit=7)
    assert (len(ds.questions), len(ds.corpus)) == (7, 3619)


# --- the alignment on small invented inputs (each rule in isolation) ---------------------------


def _claims(*specs):
    return [ClaimTitles(f"c{i}", f"claim {i}", tuple(titles), {}) for i, titles in enumerate(specs)]


def _write_lines(tmp_path, paragraphs_per_claim):
    path = tmp_path / "ev.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"original": f"claim {i}", "gold_evidence": "\n".join(ps)})
            for i, ps in enumerate(paragraphs_per_claim)
        )
        + "\n"
    )
    return path


def test_cooccurrence_pins_titles_without_any_title_words(tmp_path):
    # "Alpha" is in claims 0 and 1, "Beta" only in 0, "Gamma" only in 1: every signature is unique,
    # so no word is needed (the texts name nothing)
    claims = _claims(["Alpha", "Beta"], ["Gamma", "Alpha"])
    path = _write_lines(tmp_path, [["text b", "text a"], ["text a", "text g"]])
    out = build_hover_corpus(path, claims, "claims.json")
    got = {
        a.title: (next(p.text for p in out.passages if p.id == a.passage_id), a.how)
        for a in out.assignments.values()
    }
    assert got == {
        "Alpha": ("text a", HOW_COOCCURRENCE),
        "Beta": ("text b", HOW_COOCCURRENCE),
        "Gamma": ("text g", HOW_COOCCURRENCE),
    }


def test_title_words_elimination_and_ambiguity(tmp_path):
    claims = _claims(
        ["Red Fox", "Blue Whale"],
        ["Zed (song)", "Zed (film)"],
        ["Amber Lake", "2001 Cup – Singles"],
    )
    path = _write_lines(
        tmp_path,
        [
            ["The blue whale is a marine mammal.", "The red fox is the largest of the true foxes."],
            ["Zed is a work.", "Zed is a thing."],
            [
                "Amber Lake was the defending champion.",
                "Amber Lake (born 1970) is a tennis player.",
            ],
        ],
    )
    out = build_hover_corpus(path, claims, "claims.json")
    text = {p.id: p.text for p in out.passages}
    a = {x.title: x for x in out.assignments.values()}
    assert (
        text[a["Red Fox"].passage_id].startswith("The red fox")
        and a["Red Fox"].how == HOW_TITLE_WORDS
    )
    assert text[a["Blue Whale"].passage_id].startswith("The blue whale")
    assert a["Zed (song)"].how == a["Zed (film)"].how == HOW_AMBIGUOUS  # nothing tells them apart
    assert text[a["Amber Lake"].passage_id].startswith(
        "Amber Lake (born"
    )  # the lead-name convention
    assert a["2001 Cup – Singles"].how == HOW_ELIMINATION  # no word of its own
    assert text[a["2001 Cup – Singles"].passage_id] == "Amber Lake was the defending champion."


def test_ambiguous_titles_exclude_their_claims_from_retrieval(tmp_path):
    claims = [
        {
            "uid": "s",
            "claim": "Zed is both.",
            "label": "SUPPORTED",
            "num_hops": 2,
            "supporting_facts": [["Zed (song)", 0], ["Zed (film)", 0]],
        },
        {
            "uid": "n",
            "claim": "Zed and Red Fox.",
            "label": "NOT_SUPPORTED",
            "num_hops": 2,
            "supporting_facts": [["Red Fox", 0], ["Zed (film)", 0]],
        },
        {
            "uid": "o",
            "claim": "Red Fox and Moon.",
            "label": "NOT_SUPPORTED",
            "num_hops": 2,
            "supporting_facts": [["Red Fox", 0], ["Moon", 0]],
        },
        {
            "uid": "r",
            "claim": "The red fox is red.",
            "label": "SUPPORTED",
            "num_hops": 1,
            "supporting_facts": [["Red Fox", 0]],
        },
    ]
    qpath = tmp_path / "claims.json"
    qpath.write_text(json.dumps(claims))
    epath = tmp_path / "ev.jsonl"
    epath.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"original": "Zed is both.", "gold_evidence": "Zed is a work.\nZed is a thing."},
                {"original": "The red fox is red.", "gold_evidence": "The red fox is a fox."},
            ]
        )
    )
    ds = load_dataset("hover", "hover", qpath, epath)
    assert [q.id for q in ds.questions] == [
        "s",
        "n",
        "r",
    ]  # "Moon" has no text: "o" is out of scope
    assert [q.gold_complete for q in ds.questions] == [False, False, True]
    assert ds.notes["n_retrieval_excluded"] == 2 and len(ds.corpus) == 3
