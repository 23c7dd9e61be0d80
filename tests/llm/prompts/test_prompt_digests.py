"""Every prompt's exact bytes, pinned: the response cache (and so every LLM run's reproducibility)
keys on the messages and the schema, so a refactor of the prompt modules must not move a byte.
A deliberate prompt change updates the digest here, and the run hashes change with it."""

from __future__ import annotations

import hashlib
import json

import pytest

from hopbench.data.schema import Passage
from hopbench.kg import descriptions, llm_extractor
from hopbench.llm.prompts import (
    qa,
    question_entities,
    verify,
)
from hopbench.retrieve.catrag.prompts import (
    entity_summary,
    fact_filter_demos,
    neighbour_lines,
    neighbour_scores,
)
from hopbench.retrieve.hipporag.prompts import fact_filter
from hopbench.retrieve.neuropath.prompts import neuropath_ner, neuropath_tracker, path_tracker
from hopbench.retrieve.qafd.prompts import keywords, qafd_clusters, qafd_keywords
from hopbench.retrieve.qasa.prompts import qasa_entities

PASSAGES = [
    Passage("p1", "Kiruna", "Kiruna is the northernmost town in Sweden."),
    Passage("p2", "Sweden", "Sweden is a Nordic country."),
]
TRIPLES = [("kiruna", "located in", "sweden"), ("sweden", "is a", "nordic country")]
NEIGHBOURS = [
    neighbour_scores.Neighbour("sweden", [TRIPLES[0]], "(sweden | is a | nordic country)")
]
QUESTION = "In which country is Kiruna?"


def _digest(messages, schema=None) -> str:
    blob = json.dumps({"messages": messages, "schema": schema}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


CASES = {
    "qa": lambda: _digest(qa.messages(QUESTION, PASSAGES), qa.SCHEMA),
    "verify": lambda: _digest(verify.messages("Kiruna is in Norway.", PASSAGES), verify.SCHEMA),
    "entity_description": lambda: _digest(
        descriptions.description_messages(
            "kiruna", ["kiruna located in sweden"], "Kiruna is the northernmost town in Sweden."
        ),
        descriptions.DESCRIPTION_SCHEMA,
    ),
    "entity_summary": lambda: _digest(entity_summary.messages("kiruna", TRIPLES)),
    "fact_filter": lambda: _digest(fact_filter.messages(QUESTION, TRIPLES), fact_filter.SCHEMA),
    "fact_filter_demos": lambda: _digest(
        fact_filter_demos.messages(QUESTION, TRIPLES), fact_filter_demos.SCHEMA
    ),
    "keywords": lambda: _digest(keywords.messages(QUESTION), keywords.SCHEMA),
    "neighbour_lines": lambda: _digest(
        neighbour_lines.messages(
            QUESTION,
            TRIPLES,
            "kiruna",
            [neighbour_lines.Neighbour("sweden", [TRIPLES[0]], "sweden is a nordic country. ")],
        )
    ),
    "neighbour_scores": lambda: _digest(
        neighbour_scores.messages(QUESTION, TRIPLES, "kiruna", NEIGHBOURS),
        neighbour_scores.schema(len(NEIGHBOURS)),
    ),
    "path_tracker": lambda: _digest(
        path_tracker.messages(
            QUESTION,
            [path_tracker.render_path(TRIPLES[:1], "sweden")],
            "Kiruna is in Sweden.",
            "the country",
        ),
        path_tracker.SCHEMA,
    ),
    "path_tracker_one_shot": lambda: _digest(
        path_tracker.messages(
            QUESTION, [path_tracker.render_path(TRIPLES[:1], None)], one_shot=True
        ),
        path_tracker.SCHEMA,
    ),
    "neuropath_tracker": lambda: _digest(
        neuropath_tracker.messages(
            QUESTION, neuropath_tracker.render_paths(["kiruna->located in->sweden; "], ["sweden"])
        ),
        neuropath_tracker.SCHEMA,
    ),
    "neuropath_tracker_one_shot": lambda: _digest(
        neuropath_tracker.messages(
            QUESTION,
            neuropath_tracker.render_paths(["kiruna->located in->sweden; "], [None]),
            one_shot=True,
        ),
        neuropath_tracker.SCHEMA,
    ),
    "neuropath_ner": lambda: _digest(neuropath_ner.messages(QUESTION), neuropath_ner.SCHEMA),
    "openie_ner": lambda: _digest(llm_extractor.ner_messages(PASSAGES[0])),
    "openie_triples": lambda: _digest(
        llm_extractor.triple_messages(PASSAGES[0], ["Kiruna", "Sweden"])
    ),
    "question_entities": lambda: _digest(
        question_entities.messages(QUESTION), question_entities.SCHEMA
    ),
    "qasa_question_entities": lambda: _digest(
        qasa_entities.messages(QUESTION), qasa_entities.SCHEMA
    ),
    "qafd_keywords": lambda: _digest(qafd_keywords.messages(QUESTION), qafd_keywords.SCHEMA),
    "qafd_clusters": lambda: _digest(
        qafd_clusters.messages(
            [("Kiruna", [("kiruna", "a town", 0.9), ("sweden", "a country", 0.25)])]
        )
    ),
    "qa_with_notes": lambda: _digest(
        qa.messages(QUESTION, PASSAGES, notes=["Kiruna lies in Sweden."]), qa.SCHEMA
    ),
}

PINNED = {
    "entity_description": "61e90957003fb563",
    "entity_summary": "a9d7f062d53c3c3a",
    "fact_filter": "b3f78cec54a0ac42",
    "fact_filter_demos": "12aa62e85cbf3e6d",
    "keywords": "45e11e24aedcd602",
    "neighbour_lines": "5a8bd01eb0a7116e",
    "neighbour_scores": "f35a896b1a03b74c",
    "neuropath_ner": "4030647f16b1180e",
    "neuropath_tracker": "7635e07698244d38",
    "neuropath_tracker_one_shot": "b1ed0c0d01398780",
    "openie_ner": "08e6e46e7270a727",
    "openie_triples": "57818d28ec83daa6",
    "path_tracker": "1dee7b0370b813bb",
    "path_tracker_one_shot": "5e1418b29f861a66",
    "qa": "e288cd74490ebb6a",
    "qa_with_notes": "19fad1604cefae23",
    "qafd_clusters": "35c9fdb6191b1dfc",
    "qafd_keywords": "9c8fdaf264ff732e",
    "qasa_question_entities": "ab808dd0981deae2",
    "question_entities": "bf1fa206243e06b2",
    "verify": "09814e7a7b0da694",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_prompt_bytes_are_unchanged(name):
    assert CASES[name]() == PINNED[name]
