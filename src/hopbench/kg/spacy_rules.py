"""Offline extractor: spaCy named entities and noun chunks, triples from the dependency parse.

Entity candidates of a passage are its title, its named entities (minus bare numbers) and every
triple argument. Triples come from rules over each sentence's parse:

* verb relations: nsubj/nsubjpass + dobj/attr/oprd/dative -> (subject, verb [particle], object);
* prepositional attachments: verb + prep/agent + pobj -> (subject, "verb prep", object);
* copulas: "X is the capital of Y" -> (X, "is", capital) and (X, "is capital of", Y);
* appositions: "X, the director of Y," -> (X, "is", director) and (X, "director of", Y).

Subjects are inherited along verb conjunctions ("born in A and died in B") and taken from the
head noun of relative clauses and participial modifiers ("a film directed by Y"). A subject
pronoun (he, she, it, they) is taken to mean the passage title, which is what it almost always
means in a Wikipedia lead paragraph. A subject that is only a common noun ("the film") is
dropped rather than becoming a hub linking every film.
"""

from __future__ import annotations

from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.text import clean_text

RULES_VERSION = 3
NUMERIC_LABELS = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY"}
TITLE_PRONOUNS = {"he", "she", "it", "they"}
RELATIVE_PRONOUNS = {"who", "which", "that", "whom"}
SUBJECT_DEPS = ("nsubj", "nsubjpass")
OBJECT_DEPS = ("dobj", "attr", "oprd", "dative")
PREP_DEPS = ("prep", "agent")
STRIP_LEADING_POS = {"DET", "PRON", "PUNCT", "CCONJ", "PART"}
# lemmatizer: not used. The attribute_ruler is replaced by `spacy_pos` (noun chunks need POS).


def doc_to_extraction(passage: Passage, doc, resolve_pronouns: bool = True) -> PassageExtraction:
    title = clean_text(passage.title).strip()
    spans = _ArgumentSpans(doc)
    found = _TripleSet()
    _verb_triples(doc, spans, found, title if resolve_pronouns else "")
    _apposition_triples(doc, spans, found)
    return PassageExtraction(
        passage_id=passage.id,
        entities=_entity_candidates(title, doc, found.triples),
        triples=found.triples,
    )


class _TripleSet:
    """Triples in the order found, each once; none with an empty part, or subject == object."""

    def __init__(self) -> None:
        self.triples: list[list[str]] = []
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, subj: str | None, rel: str, obj: str | None) -> None:
        rel = " ".join(rel.lower().split())
        if not subj or not obj or not rel or subj.lower() == obj.lower():
            return
        key = (subj, rel, obj)
        if key not in self._seen:
            self._seen.add(key)
            self.triples.append([subj, rel, obj])


def _subject_text(tok, spans: _ArgumentSpans, pronoun_title: str) -> str | None:
    """A subject's text: a subject pronoun is `pronoun_title` ("" when pronouns are not
    resolved), a relative pronoun its clause's head noun; a bare common noun is no subject."""
    if tok.pos_ == "PRON" and tok.lower_ in TITLE_PRONOUNS:
        return pronoun_title or None
    if tok.lower_ in RELATIVE_PRONOUNS and tok.head.dep_ == "relcl":
        return spans.text(tok.head.head)
    if not spans.is_specific(tok):
        return None
    return spans.text(tok)


def _verb_triples(doc, spans: _ArgumentSpans, found: _TripleSet, pronoun_title: str) -> None:
    """Verb relations and their prepositional attachments (the module docstring's first two rules)."""
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        subjects = _subjects_of(verb)
        if not subjects:
            continue
        subj_texts = [s for s in (_subject_text(t, spans, pronoun_title) for t in subjects) if s]
        if not subj_texts:
            continue
        rel = verb.text + "".join(" " + c.text for c in verb.children if c.dep_ == "prt")
        for child in verb.children:
            if child.dep_ in OBJECT_DEPS:
                _object_triples(child, rel, subj_texts, spans, found)
            elif child.dep_ in PREP_DEPS:
                for pobj in _pobjs(child):
                    for s in subj_texts:
                        found.add(s, f"{rel} {child.text}", spans.text(pobj))


def _object_triples(
    child, rel: str, subj_texts: list[str], spans: _ArgumentSpans, found: _TripleSet
) -> None:
    """(subject, verb, object) for an object and its conjuncts, and (subject, "verb object
    prep", pobj) for the object's prepositions ("is the capital of Y")."""
    for obj in _with_conjuncts(child):
        obj_text = spans.text(obj)
        for s in subj_texts:
            found.add(s, rel, obj_text)
        for prep in obj.children:
            if prep.dep_ == "prep":
                for pobj in _pobjs(prep):
                    for s in subj_texts:
                        found.add(s, f"{rel} {obj.text} {prep.text}", spans.text(pobj))


def _apposition_triples(doc, spans: _ArgumentSpans, found: _TripleSet) -> None:
    """Appositions: "X, the director of Y," -> (X, "is", director) and (X, "director of", Y)."""
    for tok in doc:
        if tok.dep_ != "appos":
            continue
        head_text = spans.text(tok.head) if spans.is_specific(tok.head) else None
        if not head_text:
            continue
        found.add(head_text, "is", spans.text(tok))
        for prep in tok.children:
            if prep.dep_ == "prep":
                for pobj in _pobjs(prep):
                    found.add(head_text, f"{tok.text} {prep.text}", spans.text(pobj))


def _entity_candidates(title: str, doc, triples: list[list[str]]) -> list[str]:
    """The title, the named entities (minus bare numbers) and every triple argument, each once
    (case-insensitively), in that order."""
    entities: list[str] = []
    seen: set[str] = set()

    def keep(e: str) -> None:
        if e and e.lower() not in seen:
            seen.add(e.lower())
            entities.append(e)

    if title:
        keep(title)
    for ent in doc.ents:
        if ent.label_ not in NUMERIC_LABELS:
            keep(strip_span(ent))
    for s, _, o in triples:
        keep(s)
        keep(o)
    return entities


def _subjects_of(verb) -> list:
    """Subjects of a verb, inherited from the governing verb or noun when the verb has none."""
    node = verb
    for _ in range(4):
        subs = [c for c in node.children if c.dep_ in SUBJECT_DEPS]
        if subs:
            return [s2 for s in subs for s2 in _with_conjuncts(s)]
        if node.dep_ in ("conj", "xcomp", "advcl") and node.head is not node:
            node = node.head
            continue
        if node.dep_ == "acl" and node.head.pos_ in ("NOUN", "PROPN"):
            return [node.head]
        return []
    return []


def _with_conjuncts(tok) -> list:
    out = [tok]
    frontier = [tok]
    while frontier:
        t = frontier.pop()
        for c in t.children:
            if c.dep_ == "conj" and c.pos_ in ("NOUN", "PROPN", "NUM", "ADJ"):
                out.append(c)
                frontier.append(c)
    return out


def _pobjs(prep) -> list:
    return [o for c in prep.children if c.dep_ == "pobj" for o in _with_conjuncts(c)]


def strip_span(span) -> str:
    """The span's text without what `strip_tokens` drops (question mentions are stripped so too)."""
    toks = strip_tokens(span)
    if not toks:
        return ""
    return span.doc[toks[0].i : toks[-1].i + 1].text.strip()


def strip_tokens(span) -> list:
    """The span's tokens without leading determiners, pronouns, possessives and punctuation
    or trailing punctuation: the part of a phrase that names the entity."""
    toks = list(span)
    while toks and (toks[0].pos_ in STRIP_LEADING_POS or toks[0].dep_ in ("det", "poss", "case")):
        toks = toks[1:]
    while toks and (toks[-1].pos_ == "PUNCT" or toks[-1].dep_ == "case"):
        toks = toks[:-1]
    return toks


class _ArgumentSpans:
    """Maps a head token to the phrase it stands for: its named entity, noun chunk or compound."""

    def __init__(self, doc):
        self.doc = doc
        self.ent_of: dict[int, object] = {}
        for ent in doc.ents:
            for t in ent:
                self.ent_of[t.i] = ent
        self.chunk_of: dict[int, object] = {}
        for chunk in doc.noun_chunks:
            self.chunk_of[chunk.root.i] = chunk

    def text(self, tok) -> str | None:
        ent = self.ent_of.get(tok.i)
        if ent is not None:
            return strip_span(ent) or None
        chunk = self.chunk_of.get(tok.i)
        if chunk is not None:
            if chunk.root.pos_ == "PRON":
                return None
            return strip_span(chunk) or None
        if tok.pos_ in ("PROPN", "NOUN", "NUM"):
            left = [c for c in tok.lefts if c.dep_ in ("compound", "amod", "nummod")]
            start = min([c.i for c in left] + [tok.i])
            return self.doc[start : tok.i + 1].text.strip() or None
        return None

    def is_specific(self, tok) -> bool:
        """Named entity, proper noun or number somewhere in the phrase: a usable subject."""
        if tok.i in self.ent_of:
            return True
        chunk = self.chunk_of.get(tok.i)
        toks = list(chunk) if chunk is not None else [tok]
        return any(t.pos_ in ("PROPN", "NUM") for t in toks)
