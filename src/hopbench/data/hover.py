"""HoVer official format: claims with SUPPORTED/NOT_SUPPORTED labels and supporting titles.

HoVer ships no passage text. `corpus_path` is either
- ProgramFC's gold-evidence JSON Lines (`hover/programfc_hover_dev_gold_evidence.jsonl`, the
  default of `dataset=hover`): the corpus is built from it (`hover_corpus`), and the claims in
  scope are those whose every supporting title got a paragraph (all SUPPORTED dev claims and
  the NOT_SUPPORTED ones whose titles are all covered); claims citing a title whose paragraph
  is ambiguous are kept for label accuracy and excluded from retrieval metrics; or
- a HippoRAG-format corpus (`[{"title","text"}]`) of your own, which must hold every gold
  title; then every claim is kept.
"""

from __future__ import annotations

import html
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hopbench.core.errors import DataError
from hopbench.data.corpus import TitleIndex, load_corpus_file
from hopbench.data.hover_corpus import ClaimTitles, build_hover_corpus, is_evidence_file
from hopbench.data.io import (
    check_unicode,
    check_unique_ids,
    field,
    read_json,
    record_label,
    require_list,
    shown,
)
from hopbench.data.schema import Passage, Question
from hopbench.data.text_limit import check_text_length

log = logging.getLogger(__name__)

LABELS = ("SUPPORTED", "NOT_SUPPORTED")


@dataclass(frozen=True)
class _Claim:
    uid: str
    record: str  # '#12 (id=...)' for error messages
    text: str  # as in the file (ProgramFC's `original` equals it exactly)
    label: str | None
    hops: int | None
    titles: tuple[str, ...]  # distinct supporting titles in supporting_facts order
    max_sentence: dict[str, int]


def _parse(path, i: int, rec) -> _Claim:
    label = record_label(i, rec, "uid")
    field(path, label, rec, "uid", (str, int))
    text = field(path, label, rec, "claim", str, non_empty=True)
    claim_label = rec.get("label")
    if claim_label is not None and claim_label not in LABELS:
        raise DataError(path, label, "label", f"expected one of {LABELS}, got {claim_label!r:.80}")
    hops = rec.get("num_hops")
    if hops is not None and (not isinstance(hops, int) or isinstance(hops, bool) or hops < 1):
        raise DataError(path, label, "num_hops", f"expected a positive integer, got {hops!r:.80}")
    facts = rec.get("supporting_facts") or []
    if not isinstance(facts, list):
        raise DataError(
            path, label, "supporting_facts", f"expected a list, got {type(facts).__name__}"
        )
    titles: dict[str, None] = {}
    max_sentence: dict[str, int] = {}
    for j, fact in enumerate(facts):
        if (
            not isinstance(fact, list)
            or len(fact) != 2
            or not isinstance(fact[0], str)
            or not fact[0].strip()
            or not isinstance(fact[1], int)
            or isinstance(fact[1], bool)
        ):
            raise DataError(
                path, label, f"supporting_facts[{j}]", "expected [title, sentence_index]"
            )
        check_unicode(path, label, f"supporting_facts[{j}]", fact[0])
        check_text_length(path, label, f"supporting_facts[{j}]", fact[0])
        titles.setdefault(fact[0], None)
        max_sentence[fact[0]] = max(max_sentence.get(fact[0], -1), fact[1])
    return _Claim(str(rec["uid"]), label, text, claim_label, hops, tuple(titles), max_sentence)


def load_hover(
    questions_path: str | Path, corpus_path: str | Path | None
) -> tuple[list[Question], list[Passage]]:
    questions, corpus, _ = load_hover_with_stats(questions_path, corpus_path)
    return questions, corpus


def load_hover_with_stats(
    questions_path: str | Path, corpus_path: str | Path | None
) -> tuple[list[Question], list[Passage], dict]:
    """`load_hover` plus the corpus-building and scope figures (empty for a user corpus)."""
    path = questions_path
    if corpus_path is None:
        raise DataError(
            path,
            "-",
            "corpus_path",
            "HoVer ships no passages; set dataset.corpus_path to ProgramFC's gold evidence "
            "(hover/programfc_hover_dev_gold_evidence.jsonl, the default of dataset=hover) or to "
            'a HippoRAG-format corpus ([{"title", "text"}]) holding the claims\' Wikipedia paragraphs',
        )
    records = require_list(path, read_json(path), "claims")
    claims = [_parse(path, i, rec) for i, rec in enumerate(records)]
    check_unique_ids(path, [(c.uid, c.record) for c in claims])
    if is_evidence_file(corpus_path):
        return _from_evidence(path, claims, corpus_path)
    return _from_corpus(path, claims, corpus_path) + ({},)


def _question(c: _Claim, gold_ids: list[str], complete: bool, meta: dict) -> Question:
    return Question(
        id=c.uid,
        text=c.text.strip(),
        answers=[c.label] if c.label else [],
        gold_passage_ids=gold_ids,
        kind="claim",
        label=c.label,
        gold_complete=complete,
        meta={"hops": c.hops, **meta},
    )


def _from_corpus(path, claims: list[_Claim], corpus_path) -> tuple[list[Question], list[Passage]]:
    corpus = load_corpus_file(corpus_path)
    index = TitleIndex(corpus)
    questions = []
    for c in claims:
        gold_ids: list[str] = []
        for t in c.titles:
            pid = index.resolve_title(t) or index.resolve_title(html.unescape(t))
            if pid is None:
                raise DataError(
                    path,
                    c.record,
                    "supporting_facts",
                    f"gold title '{shown(t)}' is absent from the corpus {corpus_path}",
                )
            if pid not in gold_ids:
                gold_ids.append(pid)
        questions.append(_question(c, gold_ids, True, {}))
    return questions, corpus


def _from_evidence(
    path, claims: list[_Claim], evidence_path
) -> tuple[list[Question], list[Passage], dict]:
    built = build_hover_corpus(
        evidence_path, [ClaimTitles(c.uid, c.text, c.titles, c.max_sentence) for c in claims], path
    )
    questions = []
    out_of_scope: Counter = Counter()
    for c in claims:
        found = [built.lookup(t) for t in c.titles]
        if not found or any(a is None for a in found):
            out_of_scope[c.label] += 1
            continue
        uncertain = [a.title for a in found if not a.clear]
        gold_ids = list(dict.fromkeys(a.passage_id for a in found))
        questions.append(
            _question(
                c,
                gold_ids,
                not uncertain,
                {"gold_titles": list(c.titles), "uncertain_titles": uncertain},
            )
        )
    in_scope = Counter((q.label, q.meta["hops"]) for q in questions)
    stats = {
        **built.stats,
        "claims_in_file": len(claims),
        "claims_in_scope": len(questions),
        "claims_out_of_scope": dict(out_of_scope),
        "claims_by_label_and_hops": {
            f"{label} {hops}-hop": n
            for (label, hops), n in sorted(
                in_scope.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0)
            )
        },
        "claims_retrieval_excluded": sum(not q.gold_complete for q in questions),
    }
    log.info(
        "HoVer claims in scope: %d of %d (%s); %d excluded from retrieval metrics",
        len(questions),
        len(claims),
        stats["claims_by_label_and_hops"],
        stats["claims_retrieval_excluded"],
    )
    return questions, built.passages, stats
