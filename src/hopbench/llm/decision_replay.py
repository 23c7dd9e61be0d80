"""An LLM stand-in that answers CatRAG's prompts (``prompts: lines``) from recorded decisions.

The parity check with the authors' code (benchmarks/parity/catrag/compare.py) and its CI
fixture (tests/retrieve/catrag/test_catrag_parity.py) feed both sides the *decisions* a real run made,
not its prompt bytes: per question, the facts the filter kept (in the reply's order), the
entities the NER step named, and each (seed, neighbour) score. `decisions_from_trace` reads
them from a run's trace; `DecisionReplay` writes them back in the reply format each prompt
asks for, so the retriever's own parsers run. A neighbour without a recorded score gets no
reply line, so the parser's default applies and is counted as a fallback, as in a live run.
"""

from __future__ import annotations

import json
import re

from hopbench.llm.client import LLMResult

_QUESTION = re.compile(r"^Question: (.*?)\n", re.MULTILINE)
_QUERY = re.compile(r'^QUERY: "(.*)"$', re.MULTILINE)
_SEED = re.compile(r'^CURRENT ENTITY: "(.*)"$', re.MULTILINE)
_NEIGHBOUR = re.compile(r'^\[(\d+)\] "(.*?)" \| LINK:', re.MULTILINE)


def decisions_from_trace(trace: dict) -> dict:
    """{facts, entities, scores: {seed: {neighbour: score}}} of one question's trace."""
    scores: dict[str, dict[str, int]] = {}
    for e in trace.get("edge_scores", []):
        for name, s in e["scored"]:
            if s is not None:
                scores.setdefault(e["seed"], {})[name] = int(s)
    return {
        "facts": [list(f) for f in trace.get("facts", [])],
        "entities": list(trace.get("question_entities", [])),
        "scores": scores,
    }


class DecisionReplay:
    """`chat` / `chat_json` for CatRAG's filter, NER, summary and neighbour-line prompts."""

    def __init__(self, decisions: dict[str, dict]):
        self.decisions = decisions  # question text -> decisions_from_trace(...)
        self.undecided: list[tuple[str, str, str]] = []

    def _question(self, text: str) -> dict:
        m = _QUESTION.search(text + "\n")
        if m is None or m.group(1) not in self.decisions:
            raise KeyError(f"no recorded decisions for the prompt {text[:80]!r}")
        return self.decisions[m.group(1)]

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        user = messages[-1]["content"]
        if trace is not None:
            trace.append({"schema": schema_name, "replayed": True})
        if schema_name == "fact_filter_demos":
            return {"fact": self._question(user)["facts"]}
        if schema_name == "question_entities":
            return {"named_entities": self._question(user)["entities"]}
        raise KeyError(f"DecisionReplay has no decisions for the prompt kind {schema_name!r}")

    def chat(
        self, messages, *, schema=None, schema_name="response", max_tokens=None, temperature=None
    ):
        user = messages[-1]["content"]
        q, seed = _QUERY.search(user), _SEED.search(user)
        if q is None or seed is None:  # an entity summary: its text never reaches the ranking
            return LLMResult(text="A replayed summary.", usage={}, cached=True)
        scores = self.decisions[q.group(1)]["scores"].get(seed.group(1), {})
        lines = []
        for i, name in _NEIGHBOUR.findall(user):
            if name in scores:
                lines.append(f"{i} ({name}): {scores[name]}")
            else:
                self.undecided.append((q.group(1), seed.group(1), name))
        return LLMResult(text="\n".join(lines), usage={}, cached=True)


def load(path) -> dict[str, dict]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
