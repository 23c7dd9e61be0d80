"""Corpus files (HippoRAG list format or HotpotQA title->sentences dict) and title lookup."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.data.io import check_unicode, field, read_json, record_label, shown
from hopbench.data.schema import Passage, passage_id
from hopbench.data.text_limit import check_text_length


def load_corpus_file(path: str | Path) -> list[Passage]:
    """Read `[{"title","text"}]` or `{title: [sentences]}` (sentences joined with "" as HippoRAG does)."""
    data = read_json(path)
    if isinstance(data, dict):
        items = []
        for title, sentences in data.items():
            if isinstance(sentences, str):
                text = sentences
            elif isinstance(sentences, list) and all(isinstance(s, str) for s in sentences):
                text = "".join(sentences)
            else:
                raise DataError(
                    path,
                    f"title={shown(title)!r}",
                    "sentences",
                    f"expected a list of strings (or one string), got {sentences!r:.80}",
                )
            label = f"title={shown(title)!r}"
            for name, part in (("title", title), ("sentences", text)):
                check_unicode(path, label, name, check_text_length(path, label, name, part))
            items.append((title, text))
    elif isinstance(data, list):
        items = []
        for i, rec in enumerate(data):
            label = record_label(i, rec, None, data)
            title = field(path, label, rec, "title", str)
            text = field(path, label, rec, "text", str)
            items.append((title, text))
    else:
        raise DataError(
            path,
            "-",
            None,
            f"expected a list of passages or a title->sentences object, got {type(data).__name__}",
        )
    if not items:
        raise DataError(path, "-", None, "holds no passages (an empty corpus)")
    return dedupe(items)


def dedupe(items: list[tuple[str, str]]) -> list[Passage]:
    """Union of passages, de-duplicated by title + text (MuSiQue titles repeat with different text)."""
    seen: set[str] = set()
    out: list[Passage] = []
    for title, text in items:
        pid = passage_id(title, text)
        if pid not in seen:
            seen.add(pid)
            out.append(Passage(pid, title, text))
    return out


class TitleIndex:
    """Maps gold titles (and title + text) onto corpus passage ids."""

    def __init__(self, corpus: list[Passage]):
        self.by_id = {p.id: p for p in corpus}
        self.by_title: dict[str, list[str]] = defaultdict(list)
        for p in corpus:
            self.by_title[p.title].append(p.id)

    def by_content(self, title: str, text: str) -> str | None:
        pid = passage_id(title, text)
        return pid if pid in self.by_id else None

    def resolve_title(self, title: str, context_text: str | None = None) -> str | None:
        """The passage with this title; when titles repeat, the one whose text matches the context."""
        pids = self.by_title.get(title, [])
        if len(pids) == 1:
            return pids[0]
        if len(pids) > 1 and context_text is not None:
            return self.by_content(title, context_text)
        return None
