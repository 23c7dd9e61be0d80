"""Reader contract: hyper-parameters in __init__, the LLM in bind(), then answer(question, passages).

The shared part lives here: passages are cut to the reader's top_k (or to its token budget,
`context_tokens`), and when the prompt does
not fit the model's context the lowest-ranked passage is dropped whole and the request
retried, so the reader never sees half a passage; every trim is written to the trace.
An answer that never matches the schema (or a prompt that overflows with one passage left)
is scored as an empty (wrong) answer, recorded in the reader trace's ``fallback`` field and
counted in metrics.json: dropping the question would silently raise EM. A server that cannot
be reached or keeps failing aborts the run (`hopbench.llm.policy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from hopbench.core.errors import HopbenchError
from hopbench.data.schema import Passage, Question
from hopbench.evaluate import token_budget
from hopbench.llm.errors import LLMContextOverflowError
from hopbench.llm.policy import fallback_on_bad_reply


@dataclass
class ReaderOutput:
    answer: str | None
    trace: dict[str, Any] = field(default_factory=dict)


# Settings added after run hashes existed, at the value that changes nothing: left out of the hash
# while at it (hopbench.core.hash_inputs), so every earlier reader run keeps its hash.
ADDED_DEFAULTS = {"context_tokens": None}


class Reader:
    """Base class; subclasses set `name`, their prompt module and the reply field they return."""

    name = "reader"
    prompt: Any = None  # module with messages(text, passages), SCHEMA, SCHEMA_NAME
    answer_field: str = ""  # the reply key that holds the answer

    def __init__(
        self,
        top_k: int = 5,
        max_tokens: int = 256,
        retries: int = 2,
        context_extras: bool = False,
        context_tokens: int | None = None,
    ):
        """context_extras: also show the retriever's notes for the reader (`reader_context`,
        e.g. QAFD's cluster summaries) before the passages; configs/reader/qa_clusters.yaml.
        context_tokens: show the top passages up to this many tokens instead of the top_k
        (issue #57, equal context for every method): the notes' tokens are spent first, then
        each passage while it fits whole (`token_budget.budget_prefix`), among the run's
        ranking (its `top_k`, not the reader's). null: the reader's top_k, as before."""
        if top_k < 1:
            raise HopbenchError(f"reader.top_k must be at least 1, got {top_k}")
        if context_tokens is not None and (
            isinstance(context_tokens, bool)
            or not isinstance(context_tokens, int)
            or context_tokens < 1
        ):
            raise HopbenchError(
                f"reader.context_tokens must be null or a positive integer, got {context_tokens!r}"
            )
        self.context_tokens = context_tokens
        if context_extras and not getattr(self.prompt, "TAKES_NOTES", False):
            raise HopbenchError(
                f"reader '{self.name}' cannot show retriever notes (context_extras)"
            )
        self.top_k = top_k
        self.context_extras = bool(context_extras)
        self.max_tokens = max_tokens
        self.retries = retries
        self.llm = None

    def bind(self, llm) -> "Reader":
        if llm is None:
            raise HopbenchError(
                f"reader '{self.name}' needs an LLM; choose one with llm=local "
                "(offline model), llm=openai or llm=server"
            )
        self.llm = llm
        return self

    def answer(
        self, question: Question, passages: Sequence[Passage], notes: Sequence[str] | None = None
    ) -> ReaderOutput:
        """notes: the retriever's extra context (context_extras), shown before the passages."""
        if self.llm is None:
            raise HopbenchError(f"reader '{self.name}' has no LLM: call bind(llm) first")
        shown, budget_note = self._shown(passages, notes)
        trace: dict[str, Any] = {
            "reader": self.name,
            "passage_ids": [p.id for p in shown],
            "calls": [],
            **budget_note,
        }
        if notes is not None:
            trace["notes"] = len(notes)
            # what they take of the context: R@Nt and the token budget count them first
            trace[token_budget.NOTES_TOKENS] = sum(token_budget.count_tokens(list(notes)))
        trimmed: list[str] = []
        answer = ""
        while True:
            can_trim = len(shown) > 1
            try:  # an overflow we can still trim propagates out of the policy to here
                with fallback_on_bad_reply(
                    trace, self.prompt.SCHEMA_NAME, instead="empty answer", overflow=not can_trim
                ):
                    answer = self._ask(question, shown, trace["calls"], notes)
            except LLMContextOverflowError:
                trimmed.append(shown.pop().id)
                continue
            break
        if trimmed:
            trace["trimmed_passage_ids"] = trimmed
            trace["passage_ids"] = [p.id for p in shown]
        return ReaderOutput(answer=answer, trace=trace)

    def _shown(
        self, passages: Sequence[Passage], notes: Sequence[str] | None
    ) -> tuple[list[Passage], dict]:
        """The passages the reader is shown, and what the trace says of the token budget
        (nothing without one, so a trace keeps the bytes it always had; counted before any
        overflow trim)."""
        if self.context_tokens is None:
            return list(passages[: self.top_k]), {}
        spent = sum(token_budget.count_tokens(list(notes))) if notes else 0  # paid first
        tokens = token_budget.passage_counts(passages)
        kept = token_budget.budget_prefix(
            [p.id for p in passages], tokens, self.context_tokens, spent
        )
        shown = list(passages[: len(kept)])
        used = spent + sum(tokens[p.id] for p in shown)
        return shown, {"context_budget": self.context_tokens, "context_tokens": used}

    def _ask(
        self,
        question: Question,
        passages: list[Passage],
        calls: list,
        notes: Sequence[str] | None = None,
    ) -> str:
        messages = self.prompt.messages
        if notes:

            def messages(text, shown):
                return self.prompt.messages(text, shown, notes=notes)

        data = self._chat_json(
            messages, self.prompt.SCHEMA, self.prompt.SCHEMA_NAME, question.text, passages, calls
        )
        if calls:
            calls[-1]["reasoning"] = data["reasoning"]
        return data[self.answer_field].strip()

    def _chat_json(
        self,
        messages_fn: Callable,
        schema: dict,
        schema_name: str,
        text: str,
        passages: list[Passage],
        calls: list,
    ) -> dict:
        return self.llm.chat_json(
            messages_fn(text, passages),
            schema,
            schema_name=schema_name,
            max_tokens=self.max_tokens,
            retries=self.retries,
            trace=calls,
        )
