"""BM25 scores equal a direct computation of the formula; the ranking and its ties."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Dataset, Question
from hopbench.harness.compose import build_retriever, load_config
from hopbench.retrieve.base import Services
from hopbench.retrieve.baselines.bm25 import BM25Retriever

# bm25s scores in float32: 1e-5 relative is ~100 float32 ulps, far below any score gap that matters
RTOL = 1e-5


def reference_scores(docs: list[list[str]], k1, b, method):
    """BM25 written out (Kamphuis et al., ECIR 2020, the variants' formulas as bm25s scores
    them: Lucene and Robertson without the constant (k1 + 1) factor, Robertson's idf floored at
    0): a function of the query's terms giving every document's score."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(t for d in docs for t in set(d))
    tfs = [Counter(d) for d in docs]
    norms = [k1 * (1 - b + b * len(d) / avgdl) for d in docs]

    def idf(t):
        if method == "lucene":
            return math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
        if method == "robertson":
            return math.log(max(1.0, (n - df[t] + 0.5) / (df[t] + 0.5)))
        return math.log(n / df[t])  # atire

    def part(tf, norm):
        return tf * (k1 + 1) / (tf + norm) if method == "atire" else tf / (tf + norm)

    def scores(query: list[str]) -> list[float]:
        known = [t for t in query if df[t]]  # a repeated query term counts each time
        return [
            sum(idf(t) * part(tf[t], norm) for t in known if tf[t]) for tf, norm in zip(tfs, norms)
        ]

    return scores


def _queries(ds: Dataset) -> list[str]:
    """The questions, and each passage's title (short queries, several matching passages)."""
    return [q.text for q in ds.questions] + [p.title for p in ds.corpus]


@pytest.mark.parametrize(
    ("method", "k1", "b"), [("lucene", 1.5, 0.75), ("robertson", 1.2, 0.4), ("atire", 0.9, 1.0)]
)
def test_scores_equal_the_formula_on_a_real_corpus(musique_dataset, method, k1, b):
    """1,890 MuSiQue passages; every passage's score for 100 questions and 200 titles."""
    r = BM25Retriever(k1=k1, b=b, method=method)
    r.prepare(None, Services(dataset=musique_dataset, encoder=None))
    reference = reference_scores(
        [r.terms.terms(p.content) for p in musique_dataset.corpus], k1, b, method
    )
    for text in _queries(musique_dataset)[:300]:
        expected = reference(r.terms.terms(text))
        np.testing.assert_allclose(r.scores(text), expected, rtol=RTOL, atol=1e-6, err_msg=text)


def test_the_ranking_is_the_positive_scores_best_first(musique_dataset):
    r = BM25Retriever()
    r.prepare(None, Services(dataset=musique_dataset, encoder=None))
    ids = [p.id for p in musique_dataset.corpus]
    for q in musique_dataset.questions:
        got = r.retrieve(q, 10)
        scores = r.scores(q.text)
        assert len(got.passage_ids) == min(10, int((scores > 0).sum()))
        assert got.scores == sorted(got.scores, reverse=True) and min(got.scores) > 0
        assert got.scores == pytest.approx([scores[ids.index(p)] for p in got.passage_ids])
        assert min(got.scores) >= np.sort(scores)[-len(got.passage_ids)]


def test_equal_scores_keep_corpus_order_and_no_match_returns_nothing(musique_sub):
    """A passage twice (a later copy with another id) ties with itself: the earlier comes first."""
    first = musique_sub.corpus[3]
    twin = type(first)(id="twin", title=first.title, text=first.text)
    corpus = [twin if i == 1 else p for i, p in enumerate(musique_sub.corpus)] + [first]
    ds = Dataset("twins", musique_sub.questions, corpus)
    r = BM25Retriever()
    r.prepare(None, Services(dataset=ds, encoder=None))
    q = Question("q", first.title, [])
    got = r.retrieve(q, 3)
    assert got.passage_ids[:2] == ["twin", first.id] and got.scores[0] == got.scores[1]
    assert r.retrieve(Question("q", "the of and", []), 5).passage_ids == []  # stop words only
    assert r.retrieve(Question("q", "zzyzxqq", []), 5).passage_ids == []  # no corpus term


def test_the_config_holds_every_setting_and_a_bad_one_is_one_line():
    cfg = load_config(["retriever=bm25"])
    assert {k: cfg.retriever[k] for k in ("k1", "b", "method", "stopwords", "stemmer")} == {
        "k1": 1.5,
        "b": 0.75,
        "method": "lucene",
        "stopwords": "en",
        "stemmer": "english",
    }
    assert cfg.retriever.lower is True and cfg.retriever.token_pattern == r"(?u)\b\w\w+\b"
    assert isinstance(build_retriever(cfg), BM25Retriever)
    with pytest.raises(HopbenchError, match="retriever.method"):
        build_retriever(load_config(["retriever=bm25", "retriever.method=bm25l"]))
    with pytest.raises(HopbenchError, match="retriever.k1"):
        build_retriever(load_config(["retriever=bm25", "retriever.k1=-1"]))


def test_the_method_record_names_every_setting():
    """metrics.json's `method.defaults` (what the report shows) holds the term rules too."""
    from hopbench.harness.method_info import method_defaults

    assert method_defaults("bm25") == {
        "k1": 1.5,
        "b": 0.75,
        "method": "lucene",
        "lower": True,
        "token_pattern": r"(?u)\b\w\w+\b",
        "stopwords": "en",
        "stemmer": "english",
    }
