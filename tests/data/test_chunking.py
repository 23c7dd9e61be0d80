"""dataset.chunking=tokens: windows, overlap, text kept verbatim, and the gold credit rule."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data.chunking import (
    chunk_corpus,
    credit_questions,
    credited_chunk,
    load_tokenizer,
)
from hopbench.data.schema import Passage, Question, passage_id


def _passage(title: str, text: str) -> Passage:
    return Passage(passage_id(title, text), title, text)


CORPUS = [
    _passage("Alpha", "Alpha is a river in the north. " * 6),
    _passage("Beta", "Beta Town lies on the Alpha. It was founded in 1820."),
    _passage("Gamma", "Gamma was born in Beta Town and wrote about rivers. " * 4),
    _passage("Delta", "Delta is short."),
]


def _tokens(texts):
    tok = load_tokenizer()
    return [len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False)]


def test_windows_cover_the_corpus_with_the_overlap():
    chunked = chunk_corpus(CORPUS, size=40, overlap=10)
    total = sum(_tokens([p.content for p in CORPUS]))
    assert chunked.n_tokens == total
    # starts every 30 tokens, while a window would hold more than the overlap
    assert len(chunked.chunks) == len(range(0, total - 10, 30))
    assert all(n <= 40 for n in chunked.chunk_tokens)
    assert chunked.chunk_tokens[:-1] == [40] * (len(chunked.chunks) - 1)


def test_chunk_text_is_the_original_text_not_a_decoding():
    chunked = chunk_corpus(CORPUS, size=1000, overlap=100)
    assert len(chunked.chunks) == 1
    assert chunked.chunks[0].text == "\n\n".join(p.content for p in CORPUS)  # case kept


def test_every_passage_is_credited_to_the_chunk_holding_most_of_it():
    chunked = chunk_corpus(CORPUS, size=40, overlap=10)
    by_id = {c.id: c for c in chunked.chunks}
    for p in CORPUS:
        chunk = by_id[chunked.credit[p.id]]
        # Beta and Delta are shorter than the overlap: their chunk holds the whole text
        if p.title in ("Beta", "Delta"):
            assert p.content in chunk.text


def test_credited_chunk_picks_the_largest_share_and_the_earlier_on_a_tie():
    starts = [0, 30, 60]  # size 40, overlap 10
    assert credited_chunk((35, 55), starts, 40) == 1  # 5 tokens in chunk 0, 20 in chunk 1
    assert credited_chunk((25, 45), starts, 40) == 0  # 15 and 15: the earlier
    assert credited_chunk((30, 40), starts, 40) == 0  # all 10 in both: the earlier
    assert credited_chunk((72, 80), starts, 40) == 2  # only the last holds it
    assert credited_chunk((5, 5), starts, 40) == 0  # an empty passage: where it would start


def test_questions_get_the_distinct_gold_chunks_and_keep_their_passages():
    chunked = chunk_corpus(CORPUS, size=1000, overlap=100)
    q = Question("q1", "Where was Gamma born?", ["Beta Town"], [CORPUS[1].id, CORPUS[2].id])
    (credited,) = credit_questions([q], chunked.credit)
    assert credited.gold_passage_ids == [chunked.chunks[0].id]  # both in the one chunk
    assert credited.meta["gold_passage_ids"] == [CORPUS[1].id, CORPUS[2].id]
    assert credited.retrieval_scorable


@pytest.mark.parametrize("size,overlap", [(0, 0), (100, 100), (100, -1), (True, 0), (10.5, 1)])
def test_bad_window_settings_are_refused_naming_the_key(size, overlap):
    with pytest.raises(HopbenchError, match=r"dataset\.chunk_"):
        chunk_corpus(CORPUS, size=size, overlap=overlap)
