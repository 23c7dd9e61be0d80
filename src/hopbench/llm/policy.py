"""What an LLM failure does to a run: abort it, or fall back for that one reply and say so.

Why one policy: when every retriever caught `LLMError` itself, a server that was never
started turned every question into a silent dense fallback and the run was filed, complete,
under the method's name. Now the failure decides, not the caller:

Fatal (propagates; `hopbench.run.main` prints the message and exits 2, metrics.json is not
written, so the run is not complete and a relaunch redoes the missing questions):
  every LLMError that is not about one reply: the server cannot be reached
  (LLMUnavailableError), does not answer in time (LLMTimeoutError), keeps rate-limiting
  (LLMRateLimitError), refuses the key (LLMAuthError), keeps failing or answers with
  something that is not a chat completion (LLMServerError), or rejects the request
  (LLMRequestError); and any other HopbenchError. Each message says what to start or fix.

Recoverable, one reply at a time (the method falls back as its papers' code does, and the
fallback is recorded and counted):
  LLMFormatError           the reply never matched its schema within the retries, including
                           a reply cut off at max_tokens (truncated JSON)
  LLMContextOverflowError  the prompt does not fit, when the caller cannot trim it

Each fallback is written to the uniform trace field ``trace["fallback"]`` (`hopbench.core.fallback_field`)
with the prompt's schema name as its step; metrics.json counts them (`hopbench.evaluate.fallbacks`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hopbench.core.fallback_field import record_fallback
from hopbench.llm.errors import LLMContextOverflowError, LLMError, LLMFormatError

log = logging.getLogger(__name__)

RECOVERABLE = (LLMFormatError, LLMContextOverflowError)


def is_recoverable(exc: BaseException, *, overflow: bool = True) -> bool:
    """True for a per-reply problem the caller may fall back on; everything else aborts."""
    if isinstance(exc, LLMContextOverflowError):
        return overflow
    return isinstance(exc, RECOVERABLE)


@dataclass
class ReplyOutcome:
    """Set by `fallback_on_bad_reply`: whether the block fell back, and on what."""

    failed: bool = False
    error: LLMError | None = None


@contextmanager
def fallback_on_bad_reply(
    trace: dict, step: str, *, instead: str = "", overflow: bool = True
) -> Iterator[ReplyOutcome]:
    """Run an LLM step; on a recoverable per-reply failure record the fallback and go on.

        with fallback_on_bad_reply(trace, fact_filter.SCHEMA_NAME, instead="no facts kept") as out:
            kept = ...   # the LLM call and what the method does with its reply
        if out.failed:
            kept = ...   # the method's fallback

    The failure is swallowed (`out.failed` is set) only when `is_recoverable`; every other
    exception propagates and aborts the run. `overflow=False` lets LLMContextOverflowError
    through, for a caller that can still trim its prompt. `instead` says what the method does
    instead; it ends the recorded reason and the log line.
    """
    out = ReplyOutcome()
    try:
        yield out
    except LLMError as exc:
        if not is_recoverable(exc, overflow=overflow):
            raise
        out.failed, out.error = True, exc
        reason = f"{exc}; {instead}" if instead else str(exc)
        record_fallback(trace, step, reason)
        log.warning("%s: bad LLM reply (%s); %s", step, exc, instead or "falling back")


def ask_json(
    llm,
    prompt,
    messages: list[dict],
    trace: dict,
    *,
    calls: list | None = None,
    max_tokens: int,
    instead: str = "",
    schema: dict | None = None,
):
    """One schema-checked LLM step under the policy: the reply, or None when it fell back.

        reply = ask_json(self.llm, fact_filter, fact_filter.messages(q, triples), trace,
                         calls=calls, max_tokens=64, instead="no fact kept")
        kept = candidates[:0] if reply is None else ...

    `prompt` is the step's prompt module (`hopbench.llm.prompts.*`: its SCHEMA and SCHEMA_NAME;
    `schema` overrides SCHEMA for prompts whose schema depends on the request). A recoverable
    bad reply is recorded in trace["fallback"] under SCHEMA_NAME (`fallback_on_bad_reply`);
    every other failure propagates. Only the call is guarded: what the caller does with the
    reply is not, so a bug there is never filed as a bad reply.
    """
    with fallback_on_bad_reply(trace, prompt.SCHEMA_NAME, instead=instead):
        return llm.chat_json(
            messages,
            prompt.SCHEMA if schema is None else schema,
            schema_name=prompt.SCHEMA_NAME,
            max_tokens=max_tokens,
            trace=calls,
        )
    return None
