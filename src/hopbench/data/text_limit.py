"""The longest text a dataset file may hold (`dataset.max_text_chars`), checked as it is read.

Why: one 52 MB paragraph took a run to 9.7 GB of memory in the tokenizer with no progress
(issue #54); every later step (tokenizer, spaCy, prompts) costs memory in proportion to a text.
Every string a loader reads (a passage's text or title, a question, an answer) is refused when
it is longer than the limit, with one `DataError` naming the file, the record and the field, so
what a run holds in memory is bounded by the limit, not by the file. The default is ~15 times
the longest passage of the bundled benchmarks (6,434 characters, 2Wiki); docs/datasets.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from hopbench.core.errors import DataError, HopbenchError

DEFAULT_MAX_TEXT_CHARS = 100_000

_LIMIT: ContextVar[int] = ContextVar("max_text_chars", default=DEFAULT_MAX_TEXT_CHARS)


def check_limit_setting(value) -> int:
    """`dataset.max_text_chars` as given: a whole number >= 1 (nothing is coerced)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HopbenchError(
            f"dataset.max_text_chars must be a whole number >= 1, got {value!r:.60} "
            f"({type(value).__name__})"
        )
    return value


@contextmanager
def text_limit(max_chars: int) -> Iterator[None]:
    """Loaders called inside refuse texts longer than `max_chars`."""
    token = _LIMIT.set(check_limit_setting(max_chars))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def check_text_length(path, record_label, name: str, text: str) -> str:
    """`text`, unless it is longer than the limit in force: then one DataError."""
    limit = _LIMIT.get()
    if len(text) > limit:
        raise DataError(
            path,
            record_label,
            name,
            f"is {len(text):,} characters long, over the limit of {limit:,} "
            f"(dataset.max_text_chars; docs/datasets.md)",
        )
    return text


def load_within_limit(loader: Callable, questions_path, corpus_path, max_chars: int) -> tuple:
    """`loader(questions_path, corpus_path)` under the limit. The bundled loaders check each
    field as they read it; what any loader returns is checked again here (a format registered
    from outside may not check), naming the question or passage."""
    with text_limit(max_chars):
        questions, corpus = loader(questions_path, corpus_path)
        for q in questions:
            for name, text in (
                ("question", q.text),
                *((f"answers[{i}]", a) for i, a in enumerate(q.answers)),
            ):
                check_text_length(questions_path, f"id={q.id[:80]}", name, text)
        where = corpus_path if corpus_path is not None else questions_path
        for p in corpus:
            for name, text in (("title", p.title), ("text", p.text)):
                check_text_length(where, f"passage {p.title[:80]!r} (id {p.id})", name, text)
    return questions, corpus
