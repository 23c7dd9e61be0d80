"""LLM failures, each named for what went wrong so a run stops with a message a user can act on."""

from __future__ import annotations

from hopbench.core.errors import HopbenchError


class LLMError(HopbenchError):
    """Base class of every LLM failure."""


class LLMUnavailableError(LLMError):
    """The server could not be reached (not started, wrong base_url, network down)."""


class LLMCacheMissError(LLMError):
    """`llm.cache_only=true` and a request the response cache does not hold: the run was meant to
    come back from recorded replies alone (a reply file imported), with no model asked."""


class LLMTimeoutError(LLMError):
    """The server accepted the request but did not answer within the configured timeout."""


class LLMRateLimitError(LLMError):
    """A remote API kept refusing with HTTP 429 after every back-off retry."""


class LLMAuthError(LLMError):
    """The server refused the credentials (HTTP 401/403)."""


class LLMServerError(LLMError):
    """The server kept failing (HTTP 5xx), or kept answering with something that is not a chat
    completion (an HTTP 200 whose body is not JSON, or has no choices), after every retry."""


class LLMRequestError(LLMError):
    """The server rejected the request itself (HTTP 4xx other than 401/403/429 and context
    overflow): a wrong model name, a wrong base_url path, an unsupported parameter."""


class LLMContextOverflowError(LLMError):
    """The prompt does not fit the model's context window; callers trim whole passages and retry."""


class LLMFormatError(LLMError):
    """The answer never matched the requested JSON schema within the allowed retries (a reply
    cut off at max_tokens is truncated JSON, so it lands here too). A per-reply problem: the
    caller falls back for this reply (`hopbench.llm.policy`)."""

    def __init__(self, schema_name: str, attempts: int, problem: str, last_text: str | None):
        self.schema_name = schema_name
        self.attempts = attempts
        self.problem = problem
        self.last_text = last_text
        shown = (last_text or "")[:200]
        super().__init__(
            f"LLM answer for '{schema_name}' did not match its JSON schema after "
            f"{attempts} attempt(s): {problem}; last reply: {shown!r}"
        )
