"""BM25 terms follow bm25s's rules and are numbered the same way in every process."""

from __future__ import annotations

import json
import subprocess
import sys

import bm25s
import pytest
import Stemmer

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.baselines.lexical_terms import (
    ENGLISH_STOPWORDS,
    WORD_PATTERN,
    LexicalTerms,
)

DEFAULTS = {"lower": True, "token_pattern": WORD_PATTERN, "stopwords": "en", "stemmer": "english"}


def test_the_terms_are_bm25s_tokenize_with_its_readme_settings(musique_sub):
    """Same words, stop words and stems as `bm25s.tokenize(stopwords="en", stemmer=...)`."""
    ours = LexicalTerms(**DEFAULTS)
    texts = [p.content for p in musique_sub.corpus] + [q.text for q in musique_sub.questions]
    theirs = bm25s.tokenize(
        texts,
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        return_ids=False,
        show_progress=False,
    )
    assert [ours.terms(t) for t in texts] == theirs
    assert tuple(ENGLISH_STOPWORDS) == tuple(bm25s.stopwords.STOPWORDS_EN)


def test_each_rule_is_applied():
    text = "The Cats were running to Lisbon, a city"
    assert LexicalTerms(**DEFAULTS).terms(text) == ["cat", "were", "run", "lisbon", "citi"]
    raw = LexicalTerms(lower=False, token_pattern=WORD_PATTERN, stopwords="none", stemmer="none")
    assert raw.terms(text) == ["The", "Cats", "were", "running", "to", "Lisbon", "city"]


PROGRAM = """
import json, sys
from hopbench.data import load_dataset
from hopbench.retrieve.baselines.lexical_terms import WORD_PATTERN, LexicalTerms
d = sys.argv[1]
ds = load_dataset("m", "musique", d + "/musique/musique_qa_sub.json",
                  d + "/musique/musique_sub_corpus.json")
terms = LexicalTerms(lower=True, token_pattern=WORD_PATTERN, stopwords="en", stemmer="english")
print(json.dumps(terms.index(p.content for p in ds.corpus)))
"""


def test_term_ids_do_not_depend_on_the_hash_seed(data_dir, child_env):
    """bm25s numbers stemmed terms in set order (PYTHONHASHSEED); ours by first occurrence."""
    out = []
    for seed in ("1", "2"):
        env = {**child_env, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", PROGRAM, str(data_dir)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(run.stdout))
    assert out[0] == out[1]
    ids, vocab = out[0]
    assert list(vocab.values()) == list(range(len(vocab))) and ids[0][0] == 0


@pytest.mark.parametrize(
    ("field", "value"), [("stopwords", "german"), ("stemmer", "porter"), ("token_pattern", "(")]
)
def test_a_bad_rule_is_one_line_naming_the_setting(field, value):
    with pytest.raises(HopbenchError, match=f"retriever.{field}"):
        LexicalTerms(**{**DEFAULTS, field: value})
