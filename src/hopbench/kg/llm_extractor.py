"""LLM extractor: HippoRAG 2's two-step OpenIE (named entities, then triples conditioned on them).

Talks to any client with `chat_json(messages, schema, *, schema_name, max_tokens=...) -> dict`
that asks for JSON-schema output and raises after its own bounded retries. A passage whose
answer stays invalid (or is too long for the context, or times out) is recorded as failed, with
the error, and still becomes a passage node with its title entity; the build counts failures
instead of dropping them. Other errors (server unreachable) stop the build; it resumes later.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from hopbench.core.concurrency import completed
from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.text import clean_text
from hopbench.llm.prompts import chat

log = logging.getLogger(__name__)

PROMPT_VERSION = 1

NER_SYSTEM = (
    "You find the named entities in a Wikipedia-style passage. List every person, organisation, "
    "place, creative work, event, date and other proper name the passage mentions, copied exactly "
    "as written, each once. Answer with JSON only."
)
NER_EXAMPLE_IN = (
    "Title: Lake Tekapo\n"
    "Lake Tekapo is the second-largest of three roughly parallel lakes in the Mackenzie Basin of "
    "New Zealand's South Island. The township on its southern shore was founded in 1953."
)
NER_EXAMPLE_OUT = {
    "named_entities": ["Lake Tekapo", "Mackenzie Basin", "New Zealand", "South Island", "1953"]
}

TRIPLE_SYSTEM = (
    "You turn a passage into a small knowledge graph of [subject, relation, object] triples. "
    "Each triple states one fact from the passage. Use the given named entities as subjects or "
    "objects wherever possible (at least one of the two in every triple). Replace pronouns with "
    "the names they refer to. Keep relations short (a verb phrase). Answer with JSON only."
)
TRIPLE_EXAMPLE_OUT = {
    "triples": [
        ["Lake Tekapo", "is in", "Mackenzie Basin"],
        ["Mackenzie Basin", "is in", "South Island"],
        ["South Island", "is part of", "New Zealand"],
        ["Lake Tekapo", "is", "second-largest of three parallel lakes"],
        ["township on Lake Tekapo", "founded in", "1953"],
    ]
}

NER_SCHEMA = {
    "type": "object",
    "properties": {"named_entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["named_entities"],
    "additionalProperties": False,
}
TRIPLE_SCHEMA = {
    "type": "object",
    "properties": {
        "triples": {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
        }
    },
    "required": ["triples"],
    "additionalProperties": False,
}


def _passage_block(p: Passage) -> str:
    return f"Title: {clean_text(p.title)}\n{clean_text(p.text)}"


def ner_messages(p: Passage) -> list[dict]:
    return chat(NER_SYSTEM, NER_EXAMPLE_IN, json.dumps(NER_EXAMPLE_OUT), _passage_block(p))


def triple_messages(p: Passage, entities: list[str]) -> list[dict]:
    def user(block: str, ents: list[str]) -> str:
        return f"{block}\n\nNamed entities: {json.dumps(ents, ensure_ascii=False)}"

    return chat(
        TRIPLE_SYSTEM,
        user(NER_EXAMPLE_IN, NER_EXAMPLE_OUT["named_entities"]),
        json.dumps(TRIPLE_EXAMPLE_OUT),
        user(_passage_block(p), entities),
    )


def parse_entities(answer: Any) -> list[str]:
    """Strings from the `named_entities` field, de-duplicated; anything else is an error."""
    if not isinstance(answer, dict) or not isinstance(answer.get("named_entities"), list):
        raise TypeError(f"NER answer lacks a 'named_entities' list: {str(answer)[:200]}")
    out, seen = [], set()
    for e in answer["named_entities"]:
        if isinstance(e, str) and e.strip() and e.strip().lower() not in seen:
            seen.add(e.strip().lower())
            out.append(e.strip())
    return out


def parse_triples(answer: Any) -> list[list[str]]:
    """Valid [s, r, o] string triples; malformed items are skipped (as HippoRAG filters them)."""
    if not isinstance(answer, dict) or not isinstance(answer.get("triples"), list):
        raise TypeError(f"triple answer lacks a 'triples' list: {str(answer)[:200]}")
    out, seen = [], set()
    for t in answer["triples"]:
        if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t):
            key = tuple(x.strip() for x in t)
            if key not in seen:
                seen.add(key)
                out.append(list(key))
    return out


class LLMExtractor:
    """Two LLM calls per passage: NER, then NER-conditioned triples."""

    name = "llm"

    def __init__(
        self,
        llm,
        max_tokens_ner: int = 512,
        max_tokens_triples: int = 1024,
        llm_identity: str | None = None,
        concurrency: int = 1,
    ):
        if llm is None:
            raise ValueError(
                "graph.extractor=llm needs an LLM; choose one with llm=local (or openai/server)"
            )
        self.llm = llm
        self.max_tokens_ner = max_tokens_ner
        self.max_tokens_triples = max_tokens_triples
        self.llm_identity = llm_identity or client_identity(llm)
        self.concurrency = int(concurrency)  # passages in flight: runtime only, not in identity()

    def identity(self) -> dict:
        prompts = json.dumps(
            [
                NER_SYSTEM,
                NER_EXAMPLE_IN,
                NER_EXAMPLE_OUT,
                TRIPLE_SYSTEM,
                TRIPLE_EXAMPLE_OUT,
                NER_SCHEMA,
                TRIPLE_SCHEMA,
            ],
            sort_keys=True,
        )
        return {
            "extractor": "llm",
            "llm": self.llm_identity,
            "prompt_version": PROMPT_VERSION,
            "prompts_sha": hashlib.sha256(prompts.encode()).hexdigest()[:16],
            "max_tokens": [self.max_tokens_ner, self.max_tokens_triples],
        }

    def extract_one(self, p: Passage) -> PassageExtraction:
        try:
            ents = parse_entities(
                self.llm.chat_json(
                    ner_messages(p),
                    NER_SCHEMA,
                    schema_name="named_entities",
                    max_tokens=self.max_tokens_ner,
                )
            )
            triples = parse_triples(
                self.llm.chat_json(
                    triple_messages(p, ents),
                    TRIPLE_SCHEMA,
                    schema_name="triples",
                    max_tokens=self.max_tokens_triples,
                )
            )
        except Exception as exc:
            if not is_passage_failure(exc):
                raise  # server down, rate limit, ...: stop; the build resumes from the log later
            log.warning("extraction failed for passage %s (%s): %s", p.id, p.title, exc)
            return PassageExtraction(
                passage_id=p.id, status="failed", error=f"{type(exc).__name__}: {exc}"[:500]
            )
        title = clean_text(p.title).strip()
        entities = ([title] if title else []) + ents
        for s, _, o in triples:
            entities += [s, o]
        seen, uniq = set(), []
        for e in entities:
            if e.lower() not in seen:
                seen.add(e.lower())
                uniq.append(e)
        return PassageExtraction(passage_id=p.id, entities=uniq, triples=triples)

    def extract(self, passages: Iterable[Passage]) -> Iterator[PassageExtraction]:
        """Records as passages finish (`concurrency` at once; the log is keyed by passage id, so
        the order does not matter, and a fatal error keeps what finished)."""
        yield from completed(self.extract_one, passages, self.concurrency, name="extract")


# Errors that belong to one passage (the client already retried): record the passage as failed.
# Anything else (server unreachable or too slow, rate limit, a bug) stops the build instead of marking every
# remaining passage as failed. Matched by class name so this module need not import the client.
PASSAGE_ERROR_NAMES = {"LLMFormatError", "LLMContextOverflowError"}  # as hopbench.llm.policy


def is_passage_failure(exc: BaseException) -> bool:
    if isinstance(exc, (ValueError, KeyError, TypeError)):
        return True
    return any(cls.__name__ in PASSAGE_ERROR_NAMES for cls in type(exc).__mro__)


def client_identity(llm) -> str:
    """What names the model behind a client, for cache keys: `identity`, else a model attribute."""
    for attr in ("identity", "model_identity", "model", "model_name"):
        value = getattr(llm, attr, None)
        if isinstance(value, str) and value:
            return value
        if callable(value):
            try:
                out = value()
            except TypeError:
                continue
            if isinstance(out, str) and out:
                return out
    return type(llm).__name__
