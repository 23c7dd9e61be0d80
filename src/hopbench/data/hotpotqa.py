"""HotpotQA distractor format and the original 2WikiMultiHopQA format (`context` + `supporting_facts`)."""

from __future__ import annotations

from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.data.corpus import TitleIndex, dedupe, load_corpus_file
from hopbench.data.io import (
    check_unicode,
    check_unique_ids,
    field,
    read_json,
    record_label,
    require_list,
    require_object,
    shown,
)
from hopbench.data.schema import Passage, Question
from hopbench.data.text_limit import check_text_length

META_KEYS = ("type", "level")  # kept in Question.meta; strings or null


def load_context_format(
    questions_path: str | Path, corpus_path: str | Path | None = None, id_field: str = "_id"
) -> tuple[list[Question], list[Passage]]:
    path = questions_path
    records = require_list(path, read_json(path), "questions")
    parsed = []
    for i, rec in enumerate(records):
        label = record_label(i, rec, id_field, records)
        require_object(path, label, rec)
        field(path, label, rec, id_field, (str, int), non_empty=True)
        field(path, label, rec, "question", str, non_empty=True)
        field(path, label, rec, "answer", str)
        for key in META_KEYS:
            field(path, label, rec, key, str, optional=True)
        context = field(path, label, rec, "context", list)
        ctx = {}
        for j, item in enumerate(context):
            if (
                not isinstance(item, list)
                or len(item) != 2
                or not isinstance(item[0], str)
                or not isinstance(item[1], list)
                or not all(isinstance(s, str) for s in item[1])
            ):
                raise DataError(
                    path,
                    label,
                    f"context[{j}]",
                    f"expected [title, [sentence, ...]] (strings), got {item!r:.80}",
                )
            title, text = item[0], "".join(item[1])
            for part in (title, text):
                check_unicode(path, label, f"context[{j}]", part)
                check_text_length(path, label, f"context[{j}]", part)
            ctx[title] = text
        facts = field(path, label, rec, "supporting_facts", list, non_empty=True)
        titles: list[str] = []
        for j, fact in enumerate(facts):
            if (
                not isinstance(fact, list)
                or len(fact) != 2
                or not isinstance(fact[0], str)
                or isinstance(fact[1], bool)
                or not isinstance(fact[1], int)
            ):
                raise DataError(
                    path,
                    label,
                    f"supporting_facts[{j}]",
                    f"expected [title, sentence_index] (a string and an integer), got {fact!r:.80}",
                )
            check_unicode(path, label, f"supporting_facts[{j}]", fact[0])
            if fact[0] not in titles:
                titles.append(fact[0])
        parsed.append((label, rec, ctx, titles))
    check_unique_ids(path, [(str(rec[id_field]), label) for label, rec, _, _ in parsed])

    if corpus_path is not None:
        corpus = load_corpus_file(corpus_path)
    else:
        corpus = dedupe([(t, x) for _, _, ctx, _ in parsed for t, x in ctx.items()])
    index = TitleIndex(corpus)

    questions = []
    for label, rec, ctx, titles in parsed:
        gold_ids = []
        for title in titles:
            pid = index.resolve_title(title, ctx.get(title))
            if pid is None:
                raise DataError(
                    path,
                    label,
                    "supporting_facts",
                    f"gold title '{shown(title)}' is absent from the corpus"
                    f"{' ' + str(corpus_path) if corpus_path else ''}",
                )
            gold_ids.append(pid)
        meta = {k: rec[k] for k in META_KEYS if k in rec}
        meta["hops"] = len(titles)
        questions.append(
            Question(
                id=str(rec[id_field]),
                text=rec["question"].strip(),
                answers=[rec["answer"]],
                gold_passage_ids=gold_ids,
                meta=meta,
            )
        )
    return questions, corpus
