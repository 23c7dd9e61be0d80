"""A HoVer corpus from ProgramFC's gold evidence: paragraphs matched to their supporting titles.

ProgramFC (Pan et al., ACL 2023) published, for the SUPPORTED HoVer dev claims, the full
Wikipedia intro paragraph of every supporting article, one JSON line per claim:
`{"original": <the HoVer claim text>, "gold_evidence": <paragraphs joined by "\\n">, ...}`,
without titles and in shuffled order. This module gives each paragraph its HoVer title.

1. Co-occurrence. The paragraph of title T appears in exactly the evidence lines of the
   claims that cite T, and in no other. Titles and paragraphs are grouped by that set of
   lines (their *signature*); a group holds as many titles as paragraphs when the file is
   consistent, and a one-title group is pinned by co-occurrence alone. (This subsumes
   intersecting the candidate paragraphs over a title's claims and propagating "all but one
   resolved": a paragraph with another signature can never belong to T.)
2. Title words, inside each larger group: a score of how strongly a paragraph opens with
   the title (`title_word_score`) and one assignment per group that maximises the summed
   score (`scipy.optimize.linear_sum_assignment`). A title's *margin* is the best total minus
   the best total with that title kept off its paragraph; a title is assigned with a clear
   margin when it is at least `MIN_MARGIN`, otherwise it is *ambiguous*. A clear title whose
   own score row does not single its paragraph out is counted as placed *by elimination*
   (the group's other titles took the other paragraphs).

Ambiguous titles still get their best paragraph, so every paragraph is in the corpus, but
the claims that cite them are excluded from retrieval metrics (`Question.gold_complete`).
Titles keep HoVer's spelling (`Thomas &amp; Mack Center`); HTML entities are decoded, and
NFKC applied, only to compare titles with each other and with the text.
"""

from __future__ import annotations

import html
import json
import logging
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from hopbench.core.errors import DataError
from hopbench.data.io import field as record_field
from hopbench.data.io import shown, unreadable_json
from hopbench.data.schema import Passage, passage_id

log = logging.getLogger(__name__)

MIN_MARGIN = 0.25  # one fully matched disambiguator (the smallest whole feature, see below)

HOW_COOCCURRENCE = "co-occurrence"
HOW_TITLE_WORDS = "title words"
HOW_ELIMINATION = "elimination"
HOW_AMBIGUOUS = "ambiguous"

_PAREN = re.compile(r"\s*\(([^()]*)\)\s*$")
_WORD = re.compile(r"\w+")
_LEAD_PAREN = re.compile(r"^\W*(.{1,120}?)\s*\(")
# a sentence ends at . ! ? (optionally followed by a closing quote or bracket) before a capital or digit
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”')]))\s+(?=[\"“'(]?[A-Z0-9])")
# the combining diacritical mark blocks (what NFKD splits off accented letters)
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_STOP = frozenset(
    {"the", "a", "an", "of", "and", "in", "on", "at", "to", "for", "de", "la", "le", "s"}
)
_LEAD_WINDOW = 25.0  # words: a title word at position i of the paragraph earns 1 - i / 25
_NICKNAME_WINDOW = (
    40  # words searched for a longer word that a title word begins ("Ed" -> "Edward")
)


def title_key(title: str) -> str:
    """Identity of a title for matching: HTML entities decoded, NFKC (display keeps the original)."""
    return unicodedata.normalize("NFKC", html.unescape(title)).strip()


def fold(text: str) -> str:
    """Entity-decoded, NFKC, lower-cased, accents removed: the form title words are compared in."""
    t = unicodedata.normalize("NFKC", html.unescape(text)).lower()
    if t.isascii():
        return t
    return _COMBINING.sub("", unicodedata.normalize("NFKD", t))


def words(text: str) -> list[str]:
    return _WORD.findall(fold(text))


def split_title(title: str) -> tuple[str, str]:
    """'Life Goes On (Fergie song)' -> ('Life Goes On', 'Fergie song'); no disambiguator -> ''."""
    m = _PAREN.search(title)
    if m is None or not _PAREN.sub("", title).strip():
        return title, ""
    return _PAREN.sub("", title), m.group(1)


def count_sentences(text: str) -> int:
    return len(_SENTENCE_END.split(text.strip()))


def _content(ws: list[str]) -> list[str]:
    kept = [w for w in dict.fromkeys(ws) if w not in _STOP]
    return kept or list(dict.fromkeys(ws))


class _Paragraph:
    """A paragraph's words and the position where each first occurs."""

    def __init__(self, text: str):
        self.text = text
        folded = fold(text)
        self.words = _WORD.findall(folded)
        self.first: dict[str, int] = {}
        for i, w in enumerate(self.words):
            self.first.setdefault(w, i)
        self.n_sentences = count_sentences(text)
        m = _LEAD_PAREN.match(folded)
        self.lead_name = _WORD.findall(m.group(1)) if m else []


def title_word_score(title: str, para: _Paragraph, max_sentence: int = -1) -> float:
    """How strongly `para` reads as the intro of the article `title` (0 to 5.75).

    Wikipedia intros open with their title ("Life Goes On is a song ..."), while the other
    paragraphs of a claim mention it later, if at all. With the title's base (without its
    trailing "(...)") in folded words:
      prefix      1     the paragraph starts with the base (after an optional "the");
      lead        0..2  2 x mean over the base's content words of max(0, 1 - position / 25), a
                        word that only begins a paragraph word (Ed -> Edward) counting half;
      anywhere    0..0.5  0.5 x fraction of the base's content words found anywhere;
      disambig.   0..0.25 0.25 x fraction of the disambiguator's words found ("song", "Fergie");
      lead name   1     the paragraph opens with a name followed by "(" and that name ends
                        with the base or holds all its words ("Tomáš Šmíd (born ..."), the
                        Wikipedia convention that separates a person's article from a tennis
                        draw that opens with the same name;
      sentences   1     the paragraph has more sentences than the highest sentence index
                        HoVer cites for the title (`max_sentence`; always 1 when unknown).
    """
    base, disambiguator = split_title(title)
    tw = words(base)
    fits = 1.0 if para.n_sentences > max_sentence else 0.0
    if not tw:
        return fits
    pw = para.words
    skip = 1 if pw[:1] == ["the"] and tw[:1] != ["the"] else 0
    prefix = 1.0 if pw[skip : skip + len(tw)] == tw else 0.0
    content = _content(tw)

    def position_weight(w: str) -> float:
        if w in para.first:
            return max(0.0, 1.0 - para.first[w] / _LEAD_WINDOW)
        if len(w) >= 2:
            for i, x in enumerate(pw[:_NICKNAME_WINDOW]):
                if x.startswith(w):
                    return 0.5 * max(0.0, 1.0 - i / _LEAD_WINDOW)
        return 0.0

    lead = sum(position_weight(w) for w in content) / len(content)
    anywhere = sum(w in para.first for w in content) / len(content)
    dis = 0.0
    if disambiguator:
        dw = [w for w in words(disambiguator) if w not in _STOP]
        if dw:
            dis = sum(w in para.first for w in dw) / len(dw)
    ln = para.lead_name
    lead_name = (
        1.0
        if ln and (ln[-len(tw) :] == tw or (set(tw) <= set(ln) and len(ln) <= len(tw) + 3))
        else 0.0
    )
    return prefix + 2.0 * lead + 0.5 * anywhere + 0.25 * dis + lead_name + fits


@dataclass(frozen=True)
class EvidenceLine:
    line: int  # 1-based line number in the evidence file
    claim: str  # `original`
    paragraphs: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"line {self.line}"


def is_evidence_file(path: str | Path) -> bool:
    """True for ProgramFC's JSON Lines (`.jsonl`, or a first line holding `gold_evidence`)."""
    path = Path(path)
    if path.suffix.lower() == ".jsonl":
        return True
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        first = fh.readline(1 << 20).strip()
    if not first.startswith(b"{"):
        return False
    try:
        rec = json.loads(first.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, too deep: the reader says why
        return False
    return isinstance(rec, dict) and isinstance(rec.get("gold_evidence"), str) and "original" in rec


def read_evidence(path: str | Path) -> list[EvidenceLine]:
    """Validated evidence lines; a bad line fails naming the file, the line and the field."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "-", None, "file not found")
    out: list[EvidenceLine] = []
    first_line: dict[str, EvidenceLine] = {}
    for n, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        label = f"line {n}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                path, label, None, f"not valid UTF-8 at byte {exc.start} of the line"
            ) from None
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                path, label, None, f"invalid JSON at column {exc.colno}: {exc.msg}"
            ) from None
        except (RecursionError, ValueError) as exc:
            raise DataError(path, label, None, f"invalid JSON: {unreadable_json(exc)}") from None
        claim = record_field(path, label, rec, "original", str, non_empty=True)
        evidence = record_field(path, label, rec, "gold_evidence", str, non_empty=True)
        paragraphs = tuple(p.strip() for p in evidence.split("\n"))
        seen: dict[str, int] = {}
        for k, p in enumerate(paragraphs):
            if not p:
                raise DataError(
                    path, label, "gold_evidence", f"paragraph {k + 1} of {len(paragraphs)} is empty"
                )
            if p in seen:
                raise DataError(
                    path,
                    label,
                    "gold_evidence",
                    f"paragraph {k + 1} repeats paragraph {seen[p] + 1}",
                )
            seen[p] = k
        item = EvidenceLine(n, claim, paragraphs)
        prev = first_line.get(claim)
        if prev is not None:
            if set(prev.paragraphs) != set(paragraphs):
                raise DataError(
                    path,
                    label,
                    "original",
                    f"the same claim as {prev.label} with different gold_evidence",
                )
            continue
        first_line[claim] = item
        out.append(item)
    if not out:
        raise DataError(path, "-", None, "no evidence lines")
    return out


@dataclass(frozen=True)
class ClaimTitles:
    """What the aligner needs from a HoVer claim record."""

    uid: str
    claim: str
    titles: tuple[str, ...]  # distinct supporting titles, in supporting_facts order
    max_sentence: dict[str, int]  # title -> highest sentence index cited


@dataclass(frozen=True)
class Assignment:
    title: str  # HoVer's spelling (the first one seen)
    passage_id: str
    how: str  # co-occurrence | title words | elimination | ambiguous
    margin: float  # inf when pinned by co-occurrence

    @property
    def clear(self) -> bool:
        return self.how != HOW_AMBIGUOUS


@dataclass
class HoverCorpus:
    passages: list[Passage]
    assignments: dict[str, Assignment]  # title_key -> assignment
    stats: dict = field(default_factory=dict)

    def lookup(self, title: str) -> Assignment | None:
        return self.assignments.get(title_key(title))


def _solve(scores: np.ndarray) -> tuple[np.ndarray, float]:
    rows, cols = linear_sum_assignment(scores, maximize=True)
    order = np.argsort(rows)
    return cols[order], float(scores[rows, cols].sum())


def assign_group(
    scores: np.ndarray, min_margin: float = MIN_MARGIN
) -> list[tuple[int, float, str]]:
    """For a square titles x paragraphs score matrix: per title (paragraph, margin, how)."""
    n = scores.shape[0]
    cols, best = _solve(scores)
    out = []
    forbid = -1e6 - abs(scores).sum()
    for i in range(n):
        alt = scores.copy()
        alt[i, cols[i]] = forbid
        margin = round(best - _solve(alt)[1], 6)
        others = np.delete(scores[i], cols[i])
        own = round(float(scores[i, cols[i]] - others.max()), 6) if others.size else float("inf")
        if margin < min_margin:
            how = HOW_AMBIGUOUS
        elif own >= min_margin:
            how = HOW_TITLE_WORDS
        else:
            how = HOW_ELIMINATION
        out.append((int(cols[i]), margin, how))
    return out


def _claims_by_text(
    claims: list[ClaimTitles],
) -> tuple[dict[str, list[ClaimTitles]], dict[str, int], dict[str, str]]:
    """The claims by text; per title key, the highest supporting sentence index and the first
    spelling of the title."""
    by_text: dict[str, list[ClaimTitles]] = defaultdict(list)
    max_sentence: dict[str, int] = defaultdict(lambda: -1)
    spelling: dict[str, str] = {}
    for c in claims:
        by_text[c.claim].append(c)
        for t in c.titles:
            k = title_key(t)
            spelling.setdefault(k, t)
            max_sentence[k] = max(max_sentence[k], c.max_sentence.get(t, -1))
    return by_text, max_sentence, spelling


def _lines_with_titles(
    lines: list[EvidenceLine],
    by_text: dict[str, list[ClaimTitles]],
    evidence_path: str | Path,
    claims_path: str | Path,
) -> tuple[list[tuple[EvidenceLine, list[str]]], int]:
    """Each evidence line that matches a claim, with that claim's title keys; and the count of
    lines that match none. A line whose claims disagree, or whose paragraph count is not its
    title count, is refused."""
    line_titles: list[tuple[EvidenceLine, list[str]]] = []
    n_unmatched = 0
    for ev in lines:
        matches = by_text.get(ev.claim)
        if not matches:
            n_unmatched += 1
            continue
        keys = list(dict.fromkeys(title_key(t) for t in matches[0].titles))
        for other in matches[1:]:
            if set(title_key(t) for t in other.titles) != set(keys):
                raise DataError(
                    evidence_path,
                    ev.label,
                    "original",
                    f"matches claims {shown(matches[0].uid)} and {shown(other.uid)} of {claims_path}, whose "
                    "supporting titles differ: cannot tell which one the evidence is for",
                )
        if len(ev.paragraphs) != len(keys):
            raise DataError(
                evidence_path,
                ev.label,
                "gold_evidence",
                f"{len(ev.paragraphs)} paragraphs, but claim {shown(matches[0].uid)} of {claims_path} "
                f"has {len(keys)} distinct supporting titles",
            )
        line_titles.append((ev, keys))
    return line_titles, n_unmatched


def _groups_by_lines(line_titles: list[tuple[EvidenceLine, list[str]]]):
    """Titles and paragraphs grouped by the exact set of lines they occur on: a title can only
    be one of the paragraphs of its group. (title -> lines, paragraph -> lines, titles by line
    set, paragraphs by line set), each in order of first appearance."""
    title_lines: dict[str, list[int]] = defaultdict(list)
    para_lines: dict[str, list[int]] = defaultdict(list)
    for i, (ev, keys) in enumerate(line_titles):
        for k in keys:
            title_lines[k].append(i)
        for p in ev.paragraphs:
            para_lines[p].append(i)
    groups_t: dict[tuple[int, ...], list[str]] = defaultdict(list)
    groups_p: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for k, ls in title_lines.items():
        groups_t[tuple(ls)].append(k)
    for p, ls in para_lines.items():
        groups_p[tuple(ls)].append(p)
    return title_lines, para_lines, groups_t, groups_p


def _assign_groups(
    groups_t, groups_p, spelling: dict[str, str], max_sentence: dict[str, int], min_margin: float
) -> tuple[dict[str, tuple[str, float, str]], int]:
    """title key -> (paragraph, margin, how) for every group; and the count of titles in groups
    the file contradicts (no paragraphs, or not as many as titles)."""
    result: dict[str, tuple[str, float, str]] = {}
    n_inconsistent = 0
    for sig, keys in groups_t.items():
        paras = groups_p.get(sig, [])
        if len(keys) == 1 and len(paras) == 1:
            result[keys[0]] = (paras[0], float("inf"), HOW_COOCCURRENCE)
            continue
        if not paras:
            n_inconsistent += len(keys)
            continue
        parsed = [_Paragraph(p) for p in paras]
        scores = np.array(
            [[title_word_score(spelling[k], pp, max_sentence[k]) for pp in parsed] for k in keys]
        )
        if len(keys) == len(paras):
            for k, (j, margin, how) in zip(keys, assign_group(scores, min_margin)):
                result[k] = (paras[j], margin, how)
        else:  # the file contradicts itself for these lines: best guesses, none of them trusted
            n_inconsistent += len(keys)
            rows, cols = linear_sum_assignment(scores, maximize=True)
            for i, j in zip(rows, cols):
                result[keys[i]] = (paras[j], float("nan"), HOW_AMBIGUOUS)
    return result, n_inconsistent


def build_hover_corpus(
    evidence_path: str | Path,
    claims: list[ClaimTitles],
    claims_path: str | Path,
    min_margin: float = MIN_MARGIN,
) -> HoverCorpus:
    """Align every evidence paragraph with a supporting title of the claim it is given for."""
    lines = read_evidence(evidence_path)
    by_text, max_sentence, spelling = _claims_by_text(claims)
    line_titles, n_unmatched = _lines_with_titles(lines, by_text, evidence_path, claims_path)
    title_lines, para_lines, groups_t, groups_p = _groups_by_lines(line_titles)
    result, n_inconsistent = _assign_groups(groups_t, groups_p, spelling, max_sentence, min_margin)

    passages: list[Passage] = []
    assignments: dict[str, Assignment] = {}
    for k in title_lines:  # corpus order: first appearance in the evidence file
        if k not in result:
            continue
        text, margin, how = result[k]
        title = spelling[k]
        pid = passage_id(title, text)
        passages.append(Passage(pid, title, text))
        assignments[k] = Assignment(title, pid, how, margin)

    used = {result[k][0] for k in assignments}
    counts = {
        h: sum(a.how == h for a in assignments.values())
        for h in (HOW_COOCCURRENCE, HOW_TITLE_WORDS, HOW_ELIMINATION, HOW_AMBIGUOUS)
    }
    finite = sorted(a.margin for a in assignments.values() if np.isfinite(a.margin))
    stats = {
        "evidence_lines": len(lines),
        "evidence_lines_unmatched": n_unmatched,
        "paragraphs": len(para_lines),
        "titles": len(title_lines),
        "articles": len(passages),
        "paragraphs_unassigned": len(para_lines) - len(used),
        "titles_without_text": len(title_lines) - len(assignments),
        "titles_in_inconsistent_groups": n_inconsistent,
        "group_sizes": {
            str(n): sum(len(v) == n for v in groups_t.values())
            for n in sorted({len(v) for v in groups_t.values()})
        },
        "titles_by_how": counts,
        "titles_clear": sum(a.clear for a in assignments.values()),
        "min_margin": min_margin,
        "margin_quantiles": (
            {q: finite[min(len(finite) - 1, int(q * len(finite)))] for q in (0.01, 0.05, 0.5)}
            if finite
            else {}
        ),
    }
    log.info(
        "HoVer corpus from %s: %d articles; titles %s (margin >= %s)",
        evidence_path,
        len(passages),
        counts,
        min_margin,
    )
    return HoverCorpus(passages=passages, assignments=assignments, stats=stats)
