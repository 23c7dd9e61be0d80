"""HoVer official format: claims with SUPPORTED/NOT_SUPPORTED labels; the corpus comes from the user."""

from __future__ import annotations

from pathlib import Path

from hopbench.data.corpus import TitleIndex, load_corpus_file
from hopbench.data.io import check_unique_ids, field, read_json, record_label, require_list
from hopbench.data.schema import Passage, Question
from hopbench.errors import DataError

LABELS = ("SUPPORTED", "NOT_SUPPORTED")


def load_hover(questions_path: str | Path, corpus_path: str | Path | None) -> tuple[list[Question], list[Passage]]:
    path = questions_path
    if corpus_path is None:
        raise DataError(path, "-", "corpus_path",
                        "HoVer ships no passages; set dataset.corpus_path to a HippoRAG-format corpus "
                        '([{"title", "text"}]) holding the claims\' Wikipedia paragraphs')
    records = require_list(path, read_json(path), "claims")
    corpus = load_corpus_file(corpus_path)
    index = TitleIndex(corpus)
    questions, labels = [], []
    for i, rec in enumerate(records):
        label = record_label(i, rec, "uid")
        field(path, label, rec, "uid", (str, int))
        field(path, label, rec, "claim", str, non_empty=True)
        claim_label = rec.get("label")
        if claim_label is not None and claim_label not in LABELS:
            raise DataError(path, label, "label", f"expected one of {LABELS}, got {claim_label!r}")
        gold_ids: list[str] = []
        for j, fact in enumerate(rec.get("supporting_facts") or []):
            if not isinstance(fact, list) or not fact or not isinstance(fact[0], str):
                raise DataError(path, label, f"supporting_facts[{j}]", "expected [title, sentence_index]")
            pid = index.resolve_title(fact[0])
            if pid is None:
                raise DataError(path, label, "supporting_facts",
                                f"gold title '{fact[0]}' is absent from the corpus {corpus_path}")
            if pid not in gold_ids:
                gold_ids.append(pid)
        labels.append((str(rec["uid"]), label))
        questions.append(Question(
            id=str(rec["uid"]), text=rec["claim"].strip(), answers=[claim_label] if claim_label else [],
            gold_passage_ids=gold_ids, kind="claim", label=claim_label,
            meta={"hops": rec.get("num_hops")},
        ))
    check_unique_ids(path, labels)
    return questions, corpus
