"""MuSiQue in HippoRAG format: questions with `paragraphs` and `question_decomposition`."""

from __future__ import annotations

from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.data.corpus import TitleIndex, dedupe, load_corpus_file
from hopbench.data.io import (
    check_unique_ids,
    field,
    id_field,
    list_field,
    read_json,
    record_label,
    require_list,
    require_object,
    shown,
)
from hopbench.data.schema import Passage, Question


def load_musique(
    questions_path: str | Path, corpus_path: str | Path | None = None
) -> tuple[list[Question], list[Passage]]:
    path = questions_path
    records = require_list(path, read_json(path), "questions")
    parsed = []  # (label, record, gold (title, text) in hop order, paragraphs as (idx, title, text, supporting))
    for i, rec in enumerate(records):
        label = record_label(i, rec, "id", records)
        require_object(path, label, rec)
        id_field(path, label, rec, "id")
        field(path, label, rec, "question", str, non_empty=True)
        field(path, label, rec, "answer", str)
        list_field(path, label, rec, "answer_aliases", str, optional=True)
        paragraphs = field(path, label, rec, "paragraphs", list, non_empty=True)
        paras = []
        first_at: dict[int, int] = {}
        for j, p in enumerate(paragraphs):
            where = f"paragraphs[{j}]"
            require_object(path, label, p, where)
            idx = field(path, label, p, "idx", int, optional=True, default=j, where=where)
            if idx in first_at:
                raise DataError(
                    path,
                    label,
                    f"{where}.idx",
                    f"duplicate paragraph idx {shown(idx)} (also paragraphs[{first_at[idx]}])",
                )
            first_at[idx] = j
            paras.append(
                (
                    idx,
                    field(path, label, p, "title", str, where=where),
                    field(path, label, p, "paragraph_text", str, where=where),
                    field(path, label, p, "is_supporting", bool, where=where),
                )
            )
        parsed.append((label, rec, _gold_in_hop_order(path, label, rec, paras), paras))
    check_unique_ids(path, [(str(rec["id"]), label) for label, rec, _, _ in parsed])

    if corpus_path is not None:
        corpus = load_corpus_file(corpus_path)
    else:
        corpus = dedupe([(t, x) for _, _, _, paras in parsed for _, t, x, _ in paras])
    index = TitleIndex(corpus)

    questions = []
    for label, rec, gold, _ in parsed:
        gold_ids = []
        for title, text in gold:
            pid = index.by_content(title, text)
            if pid is None:
                raise DataError(
                    path,
                    label,
                    "paragraphs.is_supporting",
                    f"gold paragraph '{shown(title)}' is absent from the corpus {corpus_path}",
                )
            gold_ids.append(pid)
        aliases = (
            rec.get("answer_aliases") or []
        )  # checked above: absent, null or a list of strings
        answers = [rec["answer"]] + [a for a in aliases if a != rec["answer"]]
        hops = len(rec.get("question_decomposition") or []) or None
        questions.append(
            Question(
                id=str(rec["id"]),
                text=rec["question"].strip(),
                answers=answers,
                gold_passage_ids=gold_ids,
                meta={"hops": hops} if hops else {},
            )
        )
    return questions, corpus


def _gold_in_hop_order(path, label, rec, paras) -> list[tuple[str, str]]:
    """Supporting paragraphs ordered by `question_decomposition[].paragraph_support_idx`."""
    by_idx = {idx: (title, text) for idx, title, text, _ in paras}
    supporting = [(idx, title, text) for idx, title, text, sup in paras if sup]
    ordered: list[int] = []
    decomposition = field(
        path, label, rec, "question_decomposition", list, optional=True, default=[]
    )
    for k, step in enumerate(decomposition):
        where = f"question_decomposition[{k}]"
        require_object(path, label, step, where)
        idx = field(path, label, step, "paragraph_support_idx", int, optional=True, where=where)
        if idx is None:
            continue
        if idx not in by_idx:
            raise DataError(
                path,
                label,
                f"{where}.paragraph_support_idx",
                f"refers to paragraph idx {shown(idx)}, which the record does not have",
            )
        if idx not in ordered:
            ordered.append(idx)
    for idx, _, _ in supporting:  # supporting paragraphs the decomposition does not name
        if idx not in ordered:
            ordered.append(idx)
    return [by_idx[i] for i in ordered]
