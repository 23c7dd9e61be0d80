"""A digest of a run's questions and their gold, recorded in metrics.json (`question_set_digest`).

The report computes its tables from predictions.jsonl; the digest lets it check that the rows
are the questions the run was asked, with the gold it was scored against: a row added, dropped,
renamed or given other gold answers or passages changes it. The runner takes it from the
dataset's questions, the report from the rows (`Row.to_dict` writes the same fields), both
through `gold_record`, so the two agree byte for byte. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable, Mapping

QUESTION_SET_DIGEST = "question_set_digest"  # its key in metrics.json


def gold_record(qid, answers, passage_ids, complete, kind, label) -> list:
    """What the digest covers of one question: its id and everything its scores depend on."""
    return [str(qid), list(answers), list(passage_ids), bool(complete), str(kind), label]


def question_gold(question) -> list:
    """The gold record of a `hopbench.data.schema.Question`."""
    q = question
    return gold_record(q.id, q.answers, q.gold_passage_ids, q.gold_complete, q.kind, q.label)


def row_gold(row: Mapping) -> list:
    """The gold record of a predictions.jsonl row (missing fields as `Row.from_dict` reads them)."""
    return gold_record(
        row["id"],
        row.get("gold_answers") or [],
        row.get("gold_passage_ids") or [],
        row.get("gold_complete", True),
        row.get("kind", "qa"),
        row.get("label"),
    )


def question_set_digest(records: Iterable[list]) -> str:
    """sha256 of the gold records in id order, one canonical JSON line each."""
    h = hashlib.sha256()
    for record in sorted(records, key=lambda r: r[0]):
        line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        h.update(line.encode("utf-8") + b"\n")
    return "sha256:" + h.hexdigest()
