"""BM25 baseline: passages ranked by bm25s's BM25 (eager sparse index) over `lexical_terms`.

The defaults are bm25s's (`bm25s.BM25()` and its README's quick start): k1 1.5, b 0.75,
Lucene's variant, English stop words, the Snowball English stemmer (docs/methods/baselines.md).
"""

from __future__ import annotations

import bm25s
import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Question
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.baselines.lexical_terms import WORD_PATTERN, LexicalTerms

# bm25s's variants whose formula needs no other constant (bm25l and bm25+ add a delta)
METHODS = ("lucene", "robertson", "atire")


class BM25Retriever(Retriever):
    """Passages with a positive BM25 score ('title\\ntext', as dense embeds them), best first;
    equal scores in corpus order. A passage sharing no term with the question is not returned."""

    family = "bm25"
    needs_descriptions = False

    def __init__(
        self,
        *,
        k1: float = 1.5,  # bm25s.BM25 default (Lucene's is 1.2, Pyserini's 0.9)
        b: float = 0.75,  # bm25s.BM25 default (Lucene's too)
        method: str = "lucene",  # bm25s.BM25 default: Lucene's idf, tf part without (k1 + 1)
        lower: bool = True,  # bm25s.tokenize default
        token_pattern: str = WORD_PATTERN,  # bm25s.tokenize default (scikit-learn's)
        stopwords: str = "en",  # bm25s's "en": Lucene's English stop set (lexical_terms)
        stemmer: str = "english",  # Snowball English via PyStemmer (bm25s README quick start)
    ) -> None:
        if method not in METHODS:
            raise HopbenchError(f"retriever.method must be one of {METHODS}, got {method!r}")
        if not float(k1) >= 0 or not 0 <= float(b) <= 1:
            raise HopbenchError(
                f"retriever.k1 must be >= 0 and retriever.b in [0, 1], got {k1}, {b}"
            )
        self.k1, self.b, self.method = float(k1), float(b), method
        self.terms = LexicalTerms(
            lower=lower, token_pattern=token_pattern, stopwords=stopwords, stemmer=stemmer
        )
        self._model: bm25s.BM25 | None = None
        self._vocab: dict[str, int] = {}
        self._ids: list[str] = []

    def prepare(self, kg, services: Services) -> None:
        corpus = services.dataset.corpus
        self._ids = [p.id for p in corpus]
        term_ids, self._vocab = self.terms.index(p.content for p in corpus)
        self._model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        self._model.index((term_ids, dict(self._vocab)), show_progress=False)

    def scores(self, text: str) -> np.ndarray:
        """BM25 score of every passage (corpus order) for the text; a repeated query term counts
        each time, as in bm25s and in a Lucene query of the same words."""
        query = [self._vocab[t] for t in self.terms.terms(text) if t in self._vocab]
        if not query:
            return np.zeros(len(self._ids), dtype=np.float32)
        return np.asarray(self._model.get_scores(query))

    def retrieve(self, question: Question, k: int) -> Retrieval:
        scores = self.scores(question.text)
        order = np.lexsort((np.arange(len(scores)), -scores))  # score desc, then corpus order
        top = [int(i) for i in order[: min(k, int(np.count_nonzero(scores > 0)))]]
        return Retrieval([self._ids[i] for i in top], [float(scores[i]) for i in top])
