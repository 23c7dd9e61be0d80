"""HippoRAG OpenIE files as a graph source (`graph=openie`), and any hopbench graph's extraction
written as one (`hopbench kg-export`).

Two formats, both from OSU-NLP-Group/HippoRAG, both ``{"docs": [record, ...], ...}``:

* v1 (branch ``legacy``, ``output/openie_*_results_*.json``): a record is ``{title, text, passage,
  extracted_entities, extracted_triples}`` with ``passage`` = title + "\\n" + text;
* v2 (``src/hipporag/HippoRAG.py``, ``save_openie_results``): a record is ``{idx, passage,
  extracted_entities, extracted_triples}`` with ``idx`` = "chunk-" + md5(passage), next to
  ``avg_ent_chars`` and ``avg_ent_words`` (mean entity length in characters and words).

HippoRAG indexes a corpus entry as title + "\\n" + text, which is `Passage.content`, so a record
belongs to the corpus passage whose content equals its ``passage`` (v1 without ``passage``:
title + "\\n" + text; v2 without ``passage``: the passage whose md5 is the ``idx``). A record
that matches only after Unicode NFC and whitespace collapsing is used and counted as such.

Reading is strict about what it cannot use and says so: triples that are not exactly three
strings and entities that are not strings are skipped and counted; corpus passages without a
record become passage nodes without entities or facts (status "failed", counted and logged);
records for passages outside the corpus are counted (a file for a larger corpus serves any
subset of it); a file that covers less than half of the corpus is refused with one line, since
it is almost certainly the OpenIE of another corpus.
"""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.text import clean_text

log = logging.getLogger(__name__)

READER_VERSION = 1  # bump when the reading rules change what a record yields
MIN_COVERAGE = 0.5  # below this share of corpus passages matched, the file is refused
EXAMPLES = 5


def chunk_id(passage_text: str) -> str:
    """HippoRAG 2's chunk key: "chunk-" + md5 of the passage text (`compute_mdhash_id`)."""
    return "chunk-" + hashlib.md5(passage_text.encode("utf-8")).hexdigest()


def passage_text(p: Passage) -> str:
    """The text HippoRAG indexes for a corpus entry: title + "\\n" + text."""
    return clean_text(p.content)


def _loose(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).split())


@lru_cache(maxsize=32)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of the file's bytes (what the graph and run hashes cover, not where it lives)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise HopbenchError(
            f"graph.openie.path: no such file {p} (a HippoRAG OpenIE JSON file; "
            "relative paths are taken from the directory you run in)"
        ) from None
    if not p.is_file():
        raise HopbenchError(f"graph.openie.path: {p} is not a file")
    return _sha256_cached(str(p.resolve()), st.st_size, st.st_mtime_ns)


@dataclass
class OpenIEMatch:
    """The records of an OpenIE file laid onto a corpus, with everything that did not fit counted."""

    records: dict[str, PassageExtraction]  # passage id -> record (every corpus passage)
    report: dict = field(default_factory=dict)


def _valid_triple(t) -> bool:
    return isinstance(t, (list, tuple)) and len(t) == 3 and all(isinstance(x, str) for x in t)


def load_docs(path: str | Path) -> tuple[list, dict]:
    """(the file's records, its other top-level keys); fails naming the file if it is not OpenIE."""
    p = Path(path)
    file_sha256(p)  # the clear "no such file" message
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HopbenchError(f"{p}: not a JSON file ({exc})") from None
    except RecursionError:
        raise HopbenchError(f"{p}: not a JSON file (nested too deeply to read)") from None
    if not isinstance(data, dict) or not isinstance(data.get("docs"), list):
        got = type(data).__name__ if not isinstance(data, dict) else f"keys {sorted(data)[:6]}"
        raise HopbenchError(
            f"{p}: not a HippoRAG OpenIE file: expected an object with a 'docs' list, got {got}"
        )
    return data["docs"], {k: v for k, v in data.items() if k != "docs"}


class _CorpusIndex:
    """The corpus's passages by exact text, by loose text (whitespace and Unicode normalised;
    None where two passages collide) and by chunk id."""

    def __init__(self, corpus: list[Passage]) -> None:
        self.exact = {passage_text(c): c.id for c in corpus}
        self.loose: dict[str, str | None] = {}
        for text, pid in self.exact.items():
            key = _loose(text)
            self.loose[key] = None if key in self.loose else pid
        self.by_md5 = {chunk_id(text): pid for text, pid in self.exact.items()}


class _Tally:
    """The match's counts, with a few examples of each problem."""

    def __init__(self, n_records: int) -> None:
        self.counts = {
            "records": n_records,
            "malformed_records": 0,
            "records_not_in_corpus": 0,
            "duplicate_records": 0,
            "matched_normalised": 0,
            "idx_mismatches": 0,
            "triples": 0,
            "malformed_triples": 0,
            "entities": 0,
            "malformed_entities": 0,
        }
        self.examples: dict[str, list] = {
            "malformed_records": [],
            "records_not_in_corpus": [],
            "malformed_triples": [],
            "idx_mismatches": [],
        }
        self.formats: set[str] = set()

    def note(self, kind: str, value) -> None:
        self.counts[kind] += 1
        if kind in self.examples and len(self.examples[kind]) < EXAMPLES:
            self.examples[kind].append(value)


def _record_text(doc: dict):
    """The record's passage: 'passage' (v2), else 'title' and 'text' joined by a newline (v1);
    None or another type if it has neither."""
    text = doc.get("passage")
    if (
        not isinstance(text, str)
        and isinstance(doc.get("title"), str)
        and isinstance(doc.get("text"), str)
    ):
        text = f"{doc['title']}\n{doc['text']}"
    return text


def _passage_of(
    doc: dict, i: int, index: _CorpusIndex, tally: _Tally
) -> tuple[bool, str | None, str]:
    """(readable, passage id or None, the text it was looked up by): by text, exact then loose,
    else by the record's idx (a chunk id); a record with neither is not readable."""
    text = _record_text(doc)
    if isinstance(text, str):
        text = clean_text(text)
        idx = doc.get("idx")
        if isinstance(idx, str) and idx != chunk_id(text):
            tally.note("idx_mismatches", f"docs[{i}]: idx {idx}")
        pid = index.exact.get(text)
        if pid is None:
            pid = index.loose.get(_loose(text))
            if pid is not None:
                tally.counts["matched_normalised"] += 1
        return True, pid, text
    if isinstance(doc.get("idx"), str):
        return True, index.by_md5.get(doc["idx"]), text
    tally.note("malformed_records", f"docs[{i}]: no 'passage', 'title'+'text' or 'idx'")
    return False, None, text


def _read_record(
    doc, i: int, index: _CorpusIndex, tally: _Tally, found: dict[str, PassageExtraction]
) -> None:
    """Add record `i` to `found` under its passage, or count why it is left out."""
    if not isinstance(doc, dict):
        tally.note("malformed_records", f"docs[{i}]: not an object")
        return
    if "idx" in doc:
        tally.formats.add("v2")
    elif "title" in doc or "text" in doc:
        tally.formats.add("v1")
    readable, pid, text = _passage_of(doc, i, index, tally)
    if not readable:
        return
    ents, triples = doc.get("extracted_entities", []), doc.get("extracted_triples", [])
    if not isinstance(ents, list) or not isinstance(triples, list):
        tally.note(
            "malformed_records", f"docs[{i}]: extracted_entities/extracted_triples not lists"
        )
        return
    if pid is None:
        tally.note("records_not_in_corpus", (text or doc.get("idx", ""))[:60])
        return
    if pid in found:
        tally.counts["duplicate_records"] += 1  # the first record of a passage is kept
        return
    good_ents = [e for e in ents if isinstance(e, str)]
    tally.counts["entities"] += len(good_ents)
    tally.counts["malformed_entities"] += len(ents) - len(good_ents)
    good = []
    for t in triples:
        if _valid_triple(t):
            good.append(list(t))
        else:
            tally.note("malformed_triples", t)
    tally.counts["triples"] += len(good)
    found[pid] = PassageExtraction(passage_id=pid, entities=good_ents, triples=good)


def match_openie(
    path: str | Path, corpus: list[Passage], min_coverage: float = MIN_COVERAGE
) -> OpenIEMatch:
    """Lay the file's records onto `corpus` (see the module docstring); raise if they cover less
    than `min_coverage` of it."""
    p = Path(path)
    docs, _ = load_docs(p)
    index, tally = _CorpusIndex(corpus), _Tally(len(docs))
    found: dict[str, PassageExtraction] = {}
    for i, doc in enumerate(docs):
        _read_record(doc, i, index, tally, found)

    c = tally.counts
    missing = [q for q in corpus if q.id not in found]
    n = len(corpus)
    if n and len(found) < min_coverage * n:
        raise HopbenchError(
            f"{p}: only {len(found)} of the corpus's {n} passages have a record in this OpenIE file "
            f"({c['records']} records, {c['records_not_in_corpus']} for passages outside the corpus): "
            "it looks like the OpenIE of another corpus (a record matches a passage by its 'title\\ntext')"
        )
    records = dict(found)
    for q in missing:
        records[q.id] = PassageExtraction(
            passage_id=q.id, status="failed", error=f"no record for this passage in {p.name}"
        )
    report = {
        "file": str(p),
        "file_sha256": file_sha256(p),
        "format": "+".join(sorted(tally.formats)) or "?",
        "corpus_passages": n,
        "matched": len(found),
        "unmatched_passages": len(missing),
        "unmatched_examples": [f"{q.id} {q.title!r}" for q in missing[:EXAMPLES]],
        **c,
        "examples": {k: v for k, v in tally.examples.items() if v},
    }
    return OpenIEMatch(records=records, report=report)


def summarize(report: dict) -> str:
    """One paragraph for the log and the CLI."""
    r = report
    parts = [
        f"{r['matched']}/{r['corpus_passages']} corpus passages matched"
        + (
            f" ({r['matched_normalised']} after whitespace/Unicode normalisation)"
            if r["matched_normalised"]
            else ""
        ),
        f"{r['triples']:,} triples kept, {r['malformed_triples']} malformed skipped",
        f"{r['entities']:,} entities"
        + (f", {r['malformed_entities']} malformed skipped" if r["malformed_entities"] else ""),
    ]
    for key, what in (
        ("unmatched_passages", "corpus passages without a record (no facts)"),
        ("records_not_in_corpus", "records for passages outside the corpus"),
        ("duplicate_records", "duplicate records (first kept)"),
        ("malformed_records", "malformed records skipped"),
        ("idx_mismatches", "records whose idx is not chunk-md5(passage)"),
    ):
        if r.get(key):
            parts.append(f"{r[key]} {what}")
    return f"OpenIE file {Path(r['file']).name} ({r['format']}): " + "; ".join(parts)


class OpenIEFileExtractor:
    """An extractor that reads a HippoRAG OpenIE file instead of extracting (`graph.extractor=openie`)."""

    name = "openie"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._report: dict | None = None

    def identity(self) -> dict:
        """The file's content (not its path) and the reading rules."""
        return {
            "extractor": "openie",
            "file_sha256": file_sha256(self.path),
            "reader": READER_VERSION,
        }

    def check_corpus(self, corpus: list[Passage]) -> dict:
        """Match the file to the corpus before anything is built: refuse another corpus's file early,
        log what did not fit, and return the counts (kept in the graph manifest)."""
        report = match_openie(self.path, list(corpus)).report
        self._report = report
        level = (
            logging.WARNING
            if (
                report["unmatched_passages"]
                or report["malformed_triples"]
                or report["malformed_records"]
            )
            else logging.INFO
        )
        log.log(level, "%s", summarize(report))
        if report["unmatched_examples"]:
            log.warning(
                "passages without a record, e.g. %s", "; ".join(report["unmatched_examples"])
            )
        return report

    def extract(self, passages: Iterable[Passage]) -> Iterator[PassageExtraction]:
        passages = list(passages)
        # `passages` may be the part of the corpus not yet in the extraction log (a resumed build):
        # once check_corpus has judged the coverage on the whole corpus, these only need records
        coverage = 0.0 if self._report is not None else MIN_COVERAGE
        records = match_openie(self.path, passages, coverage).records if passages else {}
        for p in passages:
            yield records[p.id]


# ---- export -----------------------------------------------------------------------------------
def openie_document(corpus: list[Passage], records: dict[str, PassageExtraction]) -> dict:
    """The corpus's extraction in HippoRAG 2's OpenIE format (the keys `save_openie_results` writes)."""
    docs = []
    for p in corpus:
        rec = records.get(p.id)
        if rec is None:
            raise HopbenchError(f"no extraction record for passage {p.id} ({p.title!r})")
        text = passage_text(p)
        docs.append(
            {
                "idx": chunk_id(text),
                "passage": text,
                "extracted_entities": list(rec.entities),
                "extracted_triples": [list(t) for t in rec.triples],
            }
        )
    ents = [e for d in docs for e in d["extracted_entities"]]
    return {
        "docs": docs,
        "avg_ent_chars": round(sum(len(e) for e in ents) / len(ents), 4) if ents else 0,
        "avg_ent_words": round(sum(len(e.split()) for e in ents) / len(ents), 4) if ents else 0,
    }
