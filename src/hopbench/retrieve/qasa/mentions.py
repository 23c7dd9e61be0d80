"""QASA's question-entity step, shared by `retriever=spreading_activation` (in memory) and
`retriever=spreading_activation_neo4j` (one Cypher query), so both seed from the same mentions.

Why one module: the authors' method starts with an LLM that names the question's entities as
``{name, search_hint}`` pairs; the name is matched against entity names and the hint is what
the vector search embeds (docs/methods/qasa.md, step 1). Both retrievers must read the reply,
normalise the names, fall back and record that fallback identically, or their rows would differ
for reasons that have nothing to do with where the propagation runs.

``mentions: spacy`` (default): `question.question_mentions`, each mention its own search text.
``mentions: llm``: the pairs, from `hopbench.retrieve.qasa.prompts.qasa_entities` (hopbench's wording) or,
with ``prompts: official``, the authors' prompt text read from ``official_src`` at run time.
Under `hopbench.llm.policy`: a reply that never matches the schema falls back to the spaCy
mentions, recorded in trace["fallback"] under the step ``qasa_question_entities``; an unusable
server raises, so the run aborts instead of filing spaCy numbers under the LLM setting.
"""

from __future__ import annotations

from hopbench.core.errors import HopbenchError
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.question import dedupe_mentions, question_mentions
from hopbench.retrieve.run_checks import resolve_llm_switch

MENTION_SOURCES = ("spacy", "llm")
PROMPT_SOURCES = ("own", "official")


class QasaMentions:
    """The configured mention source; call it per question with the run's LLM client."""

    def __init__(
        self,
        mentions: str = "spacy",
        llm_name: str | None = None,
        prompts: str = "own",
        official_src: str | None = None,
        retriever: str = "spreading_activation",
    ) -> None:
        if mentions not in MENTION_SOURCES:
            raise HopbenchError(f"retriever.mentions must be spacy or llm, got {mentions!r}")
        if prompts not in PROMPT_SOURCES:
            raise HopbenchError(
                f"retriever.prompts must be one of {', '.join(PROMPT_SOURCES)}, got {prompts!r}"
            )
        if mentions == "llm":
            resolve_llm_switch(True, llm_name, "mentions", retriever)
        self.source, self.prompts, self.official_src = mentions, prompts, official_src
        self.official_template = None
        if mentions == "llm" and prompts == "official":
            from hopbench.retrieve.qasa.prompts import qasa_entities

            if not official_src:
                raise HopbenchError(
                    "retriever.prompts=official needs retriever.official_src (the authors' "
                    "qasa-graph-rag checkout)"
                )
            self.official_template = qasa_entities.official_template(official_src)

    @property
    def needs_llm(self) -> bool:
        return self.source == "llm"

    def __call__(self, question, llm, trace: dict) -> list:
        """The question's mentions: plain strings (spaCy) or `rules.Mention` pairs (LLM)."""
        if self.source == "llm":
            return self.from_llm(question, llm, trace)
        return question_mentions(question.text)

    def from_llm(self, question, llm, trace: dict) -> list:
        """The LLM's pairs, names normalised like spaCy's mentions, first of each name kept."""
        from hopbench.llm.policy import ask_json
        from hopbench.retrieve.qasa.prompts import qasa_entities as qe

        msgs = (
            qe.messages(question.text)
            if self.official_template is None
            else qe.official_messages(self.official_template, question.text)
        )
        reply = ask_json(
            llm,
            qe,
            msgs,
            trace,
            calls=trace.setdefault("llm_calls", []),
            max_tokens=256,
            instead="spaCy mentions instead",
        )
        if reply is None:
            trace["mention_source"] = "spacy"
            return question_mentions(question.text)
        trace["mention_source"] = "llm"
        out, seen = [], set()
        for name, hint in qe.pairs(reply):
            n = dedupe_mentions([name])
            if n and n[0] not in seen:
                seen.add(n[0])
                out.append(rules.Mention(n[0], hint))
        return out
