"""2WikiMultiHopQA questions in LinearRAG format (`evidence` triples), gold derived from triple subjects."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.data.corpus import load_corpus_file
from hopbench.data.io import (
    check_unicode,
    check_unique_ids,
    field,
    id_field,
    read_json,
    record_label,
    require_list,
    require_object,
)
from hopbench.data.schema import Passage, Question
from hopbench.data.text_limit import check_text_length

_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)\s*$")


def normalise_title(title: str) -> str:
    """NFKC + lower-case + strip a trailing ' (...)', the mapping the datasets README prescribes.

    When several corpus titles share a normalised form, the one whose text contains the
    evidence triple's object is taken; if that is still not unique the subject stays unmapped.
    """
    t = unicodedata.normalize("NFKC", title).lower().strip()
    return _TRAILING_PAREN.sub("", t).strip()


def load_2wiki_linearrag(
    questions_path: str | Path, corpus_path: str | Path | None
) -> tuple[list[Question], list[Passage]]:
    path = questions_path
    if corpus_path is None:
        raise DataError(
            path,
            "-",
            "corpus_path",
            "the LinearRAG 2Wiki format has no passages of its own; set dataset.corpus_path "
            "(e.g. 2wikimultihopqa/2wikimultihopqa_corpus.json)",
        )
    records = require_list(path, read_json(path), "questions")
    corpus = load_corpus_file(corpus_path)
    exact: dict[str, str] = {}
    normalised: dict[str, list[str]] = defaultdict(list)
    text_of = {p.id: p.text.lower() for p in corpus}
    for p in corpus:
        exact.setdefault(p.title, p.id)
        normalised[normalise_title(p.title)].append(p.id)

    questions, labels = [], []
    for i, rec in enumerate(records):
        label = record_label(i, rec, "id", records)
        require_object(path, label, rec)
        id_field(path, label, rec, "id")
        field(path, label, rec, "question", str, non_empty=True)
        field(path, label, rec, "answer", str)
        question_type = field(path, label, rec, "question_type", str, optional=True)
        evidence = field(path, label, rec, "evidence", list, non_empty=True)
        subjects: list[str] = []
        for j, triple in enumerate(evidence):
            if (
                not isinstance(triple, list)
                or len(triple) != 3
                or not all(isinstance(x, str) for x in triple)
            ):
                raise DataError(
                    path,
                    label,
                    f"evidence[{j}]",
                    f"expected [subject, relation, object] strings, got {triple!r:.80}",
                )
            for part in triple:
                check_unicode(path, label, f"evidence[{j}]", part)
                check_text_length(path, label, f"evidence[{j}]", part)
            if triple[0] not in subjects:
                subjects.append(triple[0])
        gold_ids, complete = [], True
        for s in subjects:
            pid = exact.get(s)
            if pid is None:
                candidates = normalised.get(normalise_title(s), [])
                if len(candidates) > 1:  # "Seven Women" -> (1944 film) or (1953 film)?
                    objects = [t[2].lower() for t in evidence if t[0] == s]
                    candidates = [c for c in candidates if any(o in text_of[c] for o in objects)]
                pid = candidates[0] if len(candidates) == 1 else None
            if pid is None:
                complete = False
            elif pid not in gold_ids:
                gold_ids.append(pid)
        labels.append((str(rec["id"]), label))
        questions.append(
            Question(
                id=str(rec["id"]),
                text=rec["question"].strip(),
                answers=[rec["answer"]],
                gold_passage_ids=gold_ids,
                gold_complete=complete,
                meta={"type": question_type, "hops": len(subjects), "gold_subjects": subjects},
            )
        )
    check_unique_ids(path, labels)
    return questions, corpus
