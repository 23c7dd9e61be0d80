"""Text to BM25 terms, the same rules for passages and questions, as bm25s's `tokenize` applies
them: lower-case, the scikit-learn word pattern, English stop words dropped, Snowball stemming.

Ours rather than bm25s's because bm25s numbers a stemmed vocabulary in the order of a Python
set, which changes with the interpreter's hash seed; here a term's id is its first occurrence
in the corpus, so the index is the same in every process. The terms themselves are bm25s's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import Stemmer

from hopbench.core.errors import HopbenchError

# scikit-learn CountVectorizer's token_pattern, bm25s's default: words of two or more characters
WORD_PATTERN = r"(?u)\b\w\w+\b"

# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), also bm25s's "en" list
# (bm25s.stopwords.STOPWORDS_EN): kept here so that a bm25s release cannot change it unseen.
ENGLISH_STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with"
).split()

STOPWORD_LISTS = {"en": tuple(ENGLISH_STOPWORDS), "none": ()}
STEMMERS = ("english", "none")  # english: Snowball English (Porter2) through PyStemmer


class LexicalTerms:
    """The term rules of one BM25 index (each a retriever setting, so in the run hash)."""

    def __init__(self, *, lower: bool, token_pattern: str, stopwords: str, stemmer: str) -> None:
        if stopwords not in STOPWORD_LISTS:
            raise HopbenchError(
                f"retriever.stopwords must be one of {sorted(STOPWORD_LISTS)}, got {stopwords!r}"
            )
        if stemmer not in STEMMERS:
            raise HopbenchError(f"retriever.stemmer must be one of {STEMMERS}, got {stemmer!r}")
        try:
            self._split = re.compile(token_pattern).findall
        except re.error as exc:
            raise HopbenchError(f"retriever.token_pattern {token_pattern!r}: {exc}") from None
        self._lower = lower
        self._stop = frozenset(STOPWORD_LISTS[stopwords])
        self._stem = Stemmer.Stemmer("english").stemWord if stemmer == "english" else None

    def terms(self, text: str) -> list[str]:
        """The text's terms in order, repeats kept (BM25 counts them)."""
        words = self._split(text.lower() if self._lower else text)
        kept = [w for w in words if w not in self._stop]  # stop words match before stemming
        return [self._stem(w) for w in kept] if self._stem is not None else kept

    def index(self, texts: Iterable[str]) -> tuple[list[list[int]], dict[str, int]]:
        """(term ids per text, {term: id}), ids numbered by first occurrence."""
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in self.terms(text)] for text in texts]
        return ids, vocab
