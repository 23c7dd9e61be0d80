"""Entity descriptions: the text the spreading-activation gate compares with the question.

Default: the entity's own facts plus the sentence that first mentions it, cut to a bounded
length (a description is embedded once per entity, so its length drives the build time).
Optional: an LLM summary for entities with enough facts to be worth summarising (CatRAG builds
summaries only for entities with more than 3 facts); others keep the default description.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from tqdm import tqdm

from hopbench.core.errors import HopbenchError
from hopbench.kg.llm_extractor import is_passage_failure
from hopbench.kg.text import clean_text, first_mention, normalize_name, split_sentences
from hopbench.llm.prompts import chat

log = logging.getLogger(__name__)

DESCRIPTION_SCHEMA = {
    "type": "object",
    "properties": {"description": {"type": "string"}},
    "required": ["description"],
    "additionalProperties": False,
}
DESCRIPTION_SYSTEM = (
    "You write a one- or two-sentence description of an entity from the facts given about it. "
    "Use only the given facts. Answer with JSON only."
)


def truncate(text: str, max_chars: int) -> str:
    """Cut at a word boundary so the embedding never sees half a word."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return cut[:space] if space > max_chars // 2 else cut


def default_description(label: str, facts: list[str], sentence: str | None, max_chars: int) -> str:
    """'Label: fact; fact. First sentence mentioning it.' bounded to max_chars."""
    parts = [label]
    if facts:
        parts[0] += ": " + "; ".join(facts)
    text = parts[0] + ("." if facts else "")
    if sentence:
        text += " " + sentence
    return truncate(text, max_chars)


def description_messages(label: str, facts: list[str], sentence: str | None) -> list[dict]:
    lines = "\n".join(f"- {f}" for f in facts)
    context = f"\nSentence: {sentence}" if sentence else ""
    return chat(DESCRIPTION_SYSTEM, f"Entity: {label}\nFacts:\n{lines}{context}")


def llm_description(
    llm, label: str, facts: list[str], sentence: str | None, max_chars: int, max_tokens: int = 128
) -> str:
    out = llm.chat_json(
        description_messages(label, facts, sentence),
        DESCRIPTION_SCHEMA,
        schema_name="entity_description",
        max_tokens=max_tokens,
    )
    text = out.get("description") if isinstance(out, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"description answer lacks a 'description' string: {str(out)[:200]}")
    return truncate(f"{label}: {text.strip()}", max_chars)


def describe_entities(
    corpus, names, labels, first_seen, f_s, f_r, f_o, cfg: dict, llm, timings: dict
) -> tuple[list[str], list[list[int]]]:
    """(description text per entity, indices of the facts it describes, subject-facts first)."""
    t = time.perf_counter()
    max_facts, max_chars = int(cfg["max_facts"]), int(cfg["max_chars"])
    # facts per entity, subject-facts first, in corpus order
    per_entity: list[list[str]] = [[] for _ in names]
    fact_ids: list[list[int]] = [[] for _ in names]
    counts = np.zeros(len(names), dtype=np.int64)
    for f, (s, r, o) in enumerate(zip(f_s, f_r, f_o)):
        counts[s] += 1
        counts[o] += 1
        if len(per_entity[s]) < max_facts:
            per_entity[s].append(f"{labels[s]} {r} {labels[o]}")
            fact_ids[s].append(f)
    for f, (s, r, o) in enumerate(zip(f_s, f_r, f_o)):
        if len(per_entity[o]) < max_facts:
            per_entity[o].append(f"{labels[s]} {r} {labels[o]}")
            fact_ids[o].append(f)
    sentence_cache: dict[int, list[str]] = {}
    out: list[str] = []
    sentences_of: list[str | None] = []
    for e, (p_idx, surface) in enumerate(first_seen):
        sents = sentence_cache.get(p_idx)
        if sents is None:
            sents = sentence_cache[p_idx] = split_sentences(clean_text(corpus[p_idx].text))
        sentence = first_mention(sents, [surface, labels[e]])
        if sentence is None and normalize_name(corpus[p_idx].title) == names[e] and sents:
            sentence = sents[0]  # a title rarely appears verbatim; the lead sentence is about it
        sentences_of.append(sentence)
        out.append(default_description(labels[e], per_entity[e], sentence, max_chars))
    if cfg["source"] == "llm":
        if llm is None:
            raise HopbenchError(
                "graph.description.source=llm needs an LLM; add llm=local (or openai/server)"
            )
        done = failed = 0
        for e in tqdm(
            np.flatnonzero(counts >= int(cfg["llm_min_facts"])),
            desc="describing",
            disable=None,
            leave=False,
        ):
            try:
                out[e] = llm_description(
                    llm,
                    labels[e],
                    per_entity[e],
                    sentences_of[e],
                    max_chars,
                    max_tokens=int(cfg["llm_max_tokens"]),
                )
                done += 1
            except Exception as exc:
                if not is_passage_failure(exc):
                    raise  # server down: stop (the LLM cache keeps what was done)
                failed += 1  # keep the default description, count the failure
                log.warning("LLM description failed for %r: %s", labels[e], exc)
        timings["llm_descriptions"] = done
        timings["llm_description_failures"] = failed
    timings["describe"] = time.perf_counter() - t
    return out, fact_ids
