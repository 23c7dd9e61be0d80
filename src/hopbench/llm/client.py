"""One client for every OpenAI-compatible server, with schema-checked JSON, a response cache and accounting.

Why one class for local, OpenAI and any `base_url`: the local model is served by llama.cpp's
OpenAI-compatible server, so the request path, the cache and the failure handling are the
same code for all three, and a result computed locally is reproducible against any server.

Accounting (summed per run into metrics.json by `stats_dict`):
  llm_calls                every chat request, cached or not
  llm_cache_hits           requests answered from the cache (no server call)
  llm_prompt_tokens,
  llm_completion_tokens    usage of every request (a cached reply reports the usage stored
                           with it, so a rerun shows the same cost as the first run)
  llm_seconds              wall time spent waiting for the server (0 for cache hits)
  llm_cached_seconds       the server time the cache hits had cost when first computed, so
                           llm_seconds + llm_cached_seconds is the cost of an uncached run
  llm_failures             chat_json calls that exhausted their retries (LLMFormatError)
  llm_format_retries       extra attempts made after a schema violation
  llm_bad_responses        HTTP 200 answers that were not a chat completion (body not JSON,
                           no choices, longer than the transport's byte cap, text that is not
                           valid Unicode); retried like a server error, then LLMServerError
  llm_server_errors        HTTP 5xx answers (retried up to `transient_retries` times)
  llm_timeouts, llm_rate_limited, llm_context_overflows: counted failure events

Only replies that passed their checks are cached (for a schema request: parses and matches
the schema; for plain text: not empty), so a bad reply is asked again on the next run instead
of being replayed; a cached reply that fails its check (a cache written before this rule) is
treated as a miss and overwritten. A bad reply is recorded apart (`ResponseCache.put_failed`):
with `replay_failed=True` a miss is answered from that record, so a run that met a failure
(and the retries it led to) is regenerated exactly, with no server; with `cache_only=True` a
miss is an error (LLMCacheMissError) and no server is ever asked. Which failures abort a run
and which fall back for one reply is decided in `hopbench.llm.policy`.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn

import jsonschema

from hopbench.core.errors import HopbenchError
from hopbench.core.records import (
    LLM_CACHE_HITS,
    LLM_CACHED_SECONDS,
    LLM_CALLS,
    LLM_COMPLETION_TOKENS,
    LLM_PROMPT_TOKENS,
    LLM_SECONDS,
)
from hopbench.llm.cache import CachedResponse, ResponseCache, request_key
from hopbench.llm.errors import (
    LLMAuthError,
    LLMCacheMissError,
    LLMContextOverflowError,
    LLMFormatError,
    LLMRateLimitError,
    LLMRequestError,
    LLMServerError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from hopbench.llm.transport import (
    ChatTransport,
    HTTPStatusError,
    ReplyTooLarge,
    Response,
    error_detail,
)

log = logging.getLogger(__name__)

_OVERFLOW = re.compile(
    r"context (length|size|window)|exceeds? the available context|"
    r"maximum context|too many tokens|prompt is too long",
    re.IGNORECASE,
)


@dataclass
class LLMResult:
    text: str
    data: Any = None  # parsed JSON when a schema was given and the reply matched it
    error: str | None = None  # why the reply did not match the schema
    usage: dict = field(default_factory=dict)
    cached: bool = False
    latency_s: float = 0.0
    key: str = ""


@dataclass
class LLMStats:
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached_seconds: float = 0.0
    failures: int = 0
    format_retries: int = 0
    timeouts: int = 0
    rate_limited: int = 0
    context_overflows: int = 0
    bad_responses: int = 0
    server_errors: int = 0
    keys: list = field(default_factory=list)  # request keys, first use order (scopes only)

    def as_dict(self) -> dict:
        return {
            LLM_CALLS: self.calls,
            LLM_PROMPT_TOKENS: self.prompt_tokens,
            LLM_COMPLETION_TOKENS: self.completion_tokens,
            LLM_CACHE_HITS: self.cache_hits,
            LLM_SECONDS: round(self.seconds, 3),
            LLM_CACHED_SECONDS: round(self.cached_seconds, 3),
            "llm_failures": self.failures,
            "llm_format_retries": self.format_retries,
            "llm_timeouts": self.timeouts,
            "llm_rate_limited": self.rate_limited,
            "llm_context_overflows": self.context_overflows,
            "llm_bad_responses": self.bad_responses,
            "llm_server_errors": self.server_errors,
        }


def parse_json_reply(text: str) -> Any:
    """JSON from a reply; tolerates a ``` fence or prose around one object (servers without schemas)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        try:
            return json.loads(fenced.group(1))
        except json.JSONDecodeError:
            pass
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        return json.loads(text[start : end + 1])
    raise json.JSONDecodeError("no JSON object in the reply", text, 0)


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


def _validator(schema: dict) -> jsonschema.Draft202012Validator:
    """One validator per schema (building one per reply cost more than the check itself); built
    from the schema as given, so errors come in the schema's own keyword order."""
    key = json.dumps(schema, sort_keys=True)
    v = _VALIDATORS.get(key)
    if v is None:
        v = _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    return v


# what of a reply's problem goes into traces, logs and the retry prompt: the validator quotes
# the offending value, which may be the whole (up to MAX_REPLY_BYTES) reply
PROBLEM_CHARS = 300


def shorten(text: str, limit: int = PROBLEM_CHARS) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    return (
        text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"
    )


def check_reply(text: str, schema: dict) -> tuple[Any, str | None]:
    """(parsed data, None) when text is JSON matching schema, else (None, what is wrong)."""
    try:
        data = parse_json_reply(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    if not is_encodable(json.dumps(data, ensure_ascii=False)):
        return None, "a JSON string in it is not valid Unicode (a lone surrogate such as \\ud83d)"
    errors = sorted(_validator(schema).iter_errors(data), key=lambda e: e.path)
    if errors:
        e = errors[0]
        where = shorten("/".join(str(p) for p in e.absolute_path) or "(root)", 100)
        return None, f"at {where}: {shorten(e.message)}"
    return data, None


def reply_problem(text: str, schema: dict | None) -> str | None:
    """Why a reply may not be cached (None: it may): off-schema JSON, or empty plain text."""
    if not is_encodable(text):
        return "not valid Unicode (a lone surrogate)"
    if schema is not None:
        return check_reply(text, schema)[1]
    return None if text.strip() else "empty reply"


class _BadResponse(Exception):
    """An HTTP 200 that is not a chat completion (retried, then LLMServerError)."""


class _Transient(Exception):
    """A failure worth retrying after a back-off; `final(attempts)` is the error to raise
    once the retries are used up."""

    def __init__(self, why: str, cause: Exception, final):
        super().__init__(why)
        self.why, self.cause, self.final = why, cause, final


def is_encodable(text: str) -> bool:
    """True when `text` is valid Unicode (no lone surrogate), so it can be written as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _completion(body: bytes) -> tuple[str, dict, bool]:
    """(reply text, usage, cut off at max_tokens) of a chat completion's JSON body; _BadResponse
    when it is not one."""
    try:
        resp = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _BadResponse(
            f"the body is not JSON ({exc.__class__.__name__}: {exc}): {body[:120]!r}"
        ) from exc
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not isinstance(choices, list):
        raise _BadResponse(f"the body is not a chat completion: {str(resp)[:120]!r}")
    if not choices:
        raise _BadResponse("the completion has no choices")
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if content is not None and not isinstance(content, str):
        raise _BadResponse(f"the reply content is {type(content).__name__}, not text")
    if content and not is_encodable(content):
        # JSON may escape a lone surrogate ("\ud83d"); such text cannot be stored or written
        raise _BadResponse("the reply content is not valid Unicode (a lone surrogate)")
    usage = resp.get("usage")
    return (
        content or "",
        usage if isinstance(usage, dict) else {},
        first.get("finish_reason") == "length",
    )


class LLMClient:
    """Chat with an OpenAI-compatible server; JSON-schema output, cache, retries and accounting."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        identity: str,
        api_key: str = "not-needed",
        cache: ResponseCache | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int = 512,
        timeout: float = 600.0,
        transient_retries: int = 0,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
        strict_schema: bool = False,
        name: str = "server",
        api_key_env: str | None = None,
        replay_failed: bool = False,
        cache_only: bool = False,
    ):
        self.name = name
        self.cache_only = cache_only  # a miss raises LLMCacheMissError; no server is ever asked
        self.replay_failed = replay_failed  # answer a miss from the recorded failed replies
        self.api_key_env = api_key_env  # only named in the message when the key is refused
        self.base_url = base_url
        self.model = model
        self.identity = identity
        self.cache = cache
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.transient_retries = transient_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.strict_schema = strict_schema
        self.stats = LLMStats()
        self._lock = threading.Lock()
        self._scopes = threading.local()
        self._http = None if cache_only else ChatTransport(base_url, api_key, timeout)
        self._checked_schemas: set[str] = set()

    # ---- the request ---------------------------------------------------------------------
    def _params(self, max_tokens: int | None, temperature: float | None) -> dict:
        p = {
            "max_tokens": int(max_tokens or self.max_tokens),
            "temperature": float(self.temperature if temperature is None else temperature),
        }
        if self.seed is not None:
            p["seed"] = int(self.seed)
        return p

    def _response_format(self, schema: dict, schema_name: str) -> dict:
        spec = {"name": schema_name, "schema": schema}
        if self.strict_schema:
            spec["strict"] = True
        return {"type": "json_schema", "json_schema": spec}

    def _check_schema(self, schema: dict, schema_name: str) -> None:
        blob = json.dumps(schema, sort_keys=True)
        if blob not in self._checked_schemas:
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise HopbenchError(
                    f"JSON schema '{schema_name}' is invalid: {exc.message}"
                ) from exc
            self._checked_schemas.add(blob)

    def chat(
        self,
        messages: list[dict],
        *,
        schema: dict | None = None,
        schema_name: str = "response",
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LLMResult:
        """One request (from the cache when it was made before). Schema violations are reported
        in `result.error`, not raised: `chat_json` decides whether to retry."""
        if schema is not None:
            self._check_schema(schema, schema_name)
        params = self._params(max_tokens, temperature)
        key = request_key(
            self.identity,
            messages,
            params,
            {"name": schema_name, "schema": schema} if schema is not None else None,
        )
        self._count(calls=1)
        self._note_key(key)
        hit = self.cache.get(key) if self.cache is not None else None
        stale = False
        if hit is not None:
            if reply_problem(hit.text, schema) is None:
                return self._replayed(hit, schema, key)
            stale = True  # a bad reply cached before replies were checked: ask again
            log.info("cached LLM reply %s fails its check; asking the server again", key[:12])
        failed = (
            self.cache.get_failed(key) if self.cache is not None and self.replay_failed else None
        )
        if failed is not None:  # the failure a recorded run met, replayed (see the docstring)
            return self._replayed(failed[1], schema, key)
        if self.cache_only:
            raise LLMCacheMissError(
                f"LLM request {key[:16]} is not in the response cache"
                + ("" if self.cache is not None else " (llm.cache=false)")
                + " and llm.cache_only=true forbids asking a model: import the reply file that "
                "holds this run's replies (hopbench replies import FILE), or drop llm.cache_only"
            )

        reply = self._send(messages, params, schema, schema_name)
        self._count(
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            seconds=reply.latency_s,
        )
        request = {
            "messages": messages,
            "params": params,
            "schema_name": schema_name,
            "schema": schema,
        }
        problem = reply_problem(reply.text, schema) if self.cache is not None else None
        if self.cache is not None and problem is not None:
            self.cache.put_failed(key, self.identity, reply, request)
        elif self.cache is not None:
            self.cache.put(key, self.identity, request, reply, replace=stale)
        return self._result(reply, schema, cached=False, key=key)

    def _replayed(self, hit: CachedResponse, schema: dict | None, key: str) -> LLMResult:
        """A stored reply as the result, counted as a cache hit with the cost it had."""
        self._count(
            cache_hits=1,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
            cached_seconds=hit.latency_s,
        )
        return self._result(hit, schema, cached=True, key=key)

    def _result(
        self, reply: CachedResponse, schema: dict | None, *, cached: bool, key: str
    ) -> LLMResult:
        data, error = (None, None)
        if schema is not None:
            data, error = check_reply(reply.text, schema)
            if error is not None and reply.truncated:
                error += " (the reply was cut off at max_tokens)"
        return LLMResult(
            text=reply.text,
            data=data,
            error=error,
            cached=cached,
            key=key,
            latency_s=reply.latency_s,
            usage={
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
            },
        )

    def _send(
        self, messages: list[dict], params: dict, schema: dict | None, schema_name: str
    ) -> CachedResponse:
        """One reply from the server. Rate limits, HTTP 5xx and HTTP 200s that are not chat
        completions are retried `transient_retries` times with back-off, then raised; every
        other failure is raised at once (typed, with what to fix: see hopbench.llm.errors)."""
        kwargs = dict(model=self.model, messages=messages, **params)
        if schema is not None:
            kwargs["response_format"] = self._response_format(schema, schema_name)
        attempt = 0
        while True:
            try:
                return self._request(kwargs)
            except _Transient as t:
                if attempt >= self.transient_retries:
                    raise t.final(attempt + 1) from t.cause
                self._back_off(attempt, t.why, t.cause)
                attempt += 1

    def _request(self, kwargs: dict) -> CachedResponse:
        t0 = time.perf_counter()
        try:
            resp = self._http.post(kwargs)
        except TimeoutError as exc:
            self._count(timeouts=1)
            raise LLMTimeoutError(
                f"LLM server at {self.base_url} did not answer within "
                f"{self.timeout:g} s (raise llm.timeout or use a faster model)"
            ) from exc
        except ReplyTooLarge as exc:
            self._bad_response(str(exc), exc)
        except (OSError, http.client.HTTPException) as exc:
            raise LLMUnavailableError(self._unreachable_message(exc)) from exc
        if resp.status_code >= 400:
            self._refused(resp)
        latency = time.perf_counter() - t0
        try:
            text, usage, truncated = _completion(resp.content)
        except _BadResponse as exc:
            self._bad_response(str(exc), exc)
        return CachedResponse(
            text=text,
            latency_s=latency,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            truncated=truncated,
        )

    def _refused(self, resp: Response) -> NoReturn:
        """An HTTP error status, as the error that says what to fix (429 and 5xx: retried first)."""
        status = resp.status_code
        detail, code = error_detail(resp)
        exc = HTTPStatusError(f"HTTP {status}: {detail}")
        if status == 429:
            self._count(rate_limited=1)
            raise _Transient(
                "rate limited",
                exc,
                lambda n: LLMRateLimitError(
                    f"LLM server at {self.base_url} kept answering 429 (rate limit) after {n} "
                    f"attempt(s): {detail}; wait, or lower the request rate"
                ),
            ) from exc
        if status == 400:
            if _OVERFLOW.search(detail) or code == "context_length_exceeded":
                self._count(context_overflows=1)
                raise LLMContextOverflowError(
                    f"prompt does not fit the context window of {self.model}: {detail}"
                ) from exc
            raise LLMRequestError(
                f"LLM server at {self.base_url} rejected the request: {detail}; check "
                f"llm.model and settings it may not support (llm.strict_schema, "
                f"llm.seed)"
            ) from exc
        if status >= 500:
            self._count(server_errors=1)
            raise _Transient(
                "server error",
                exc,
                lambda n: LLMServerError(
                    f"LLM server at {self.base_url} kept failing (HTTP {status}) after {n} "
                    f"attempt(s): {detail}; check the server's log (model loaded? out of memory?) or raise "
                    f"llm.transient_retries"
                ),
            ) from exc
        if status in (401, 403):
            raise LLMAuthError(self._auth_message(status)) from exc
        # any other 4xx: wrong model name, wrong path, ...
        raise LLMRequestError(
            f"LLM server at {self.base_url} rejected the request (HTTP {status}): "
            f"{detail}; check llm.model ({self.model!r}) and llm.base_url (OpenAI-compatible "
            f"servers answer under /v1)"
        ) from exc

    def _bad_response(self, problem: str, exc: Exception) -> NoReturn:
        """An HTTP 200 that is not a chat completion: counted, then retried like a 5xx."""
        self._count(bad_responses=1)
        raise _Transient(
            "bad response",
            exc,
            lambda n: LLMServerError(
                f"LLM server at {self.base_url} answered HTTP 200 with something that is not a chat "
                f"completion, {n} time(s): {problem}; check that llm.base_url points at an "
                f"OpenAI-compatible /v1 endpoint (not a proxy or a web page)"
            ),
        ) from exc

    def _count(self, **deltas) -> None:
        """Add to the run's totals and to every cost scope open in this thread."""
        with self._lock:
            for target in (self.stats, *getattr(self._scopes, "stack", ())):
                for k, v in deltas.items():
                    setattr(target, k, getattr(target, k) + v)

    def _note_key(self, key: str) -> None:
        """Record a request key in every cost scope open in this thread (once per scope): a
        question's row lists the cache entries it used (`hopbench replies export`)."""
        with self._lock:
            for scope in getattr(self._scopes, "stack", ()):
                if key not in scope.keys:
                    scope.keys.append(key)

    @contextmanager
    def cost_scope(self):
        """Count, apart, the requests this thread makes inside the block (one question's cost
        while other questions run in other threads); yields an LLMStats filled as they happen."""
        scope = LLMStats()
        stack = self._scopes.__dict__.setdefault("stack", [])
        stack.append(scope)
        try:
            yield scope
        finally:
            stack.remove(scope)

    def _back_off(self, attempt: int, why: str, exc: Exception) -> None:
        delay = min(self.max_backoff_s, self.backoff_s * (2**attempt)) * (0.5 + random.random() / 2)
        log.warning(
            "LLM %s (%s); retry %d/%d in %.1f s",
            why,
            exc,
            attempt + 1,
            self.transient_retries,
            delay,
        )
        time.sleep(delay)

    def _unreachable_message(self, exc: Exception) -> str:
        hint = {
            "local": "the in-process llama.cpp server is not running",
            "openai": "check the network and base_url",
        }.get(self.name, "start the server (vLLM, Ollama, llama-server ...) or fix llm.base_url")
        return f"LLM server at {self.base_url} is not reachable ({exc.__class__.__name__}): {hint}"

    def _auth_message(self, status: int) -> str:
        env = self.api_key_env or ("OPENAI_API_KEY" if self.name == "openai" else None)
        fix = (
            f"put a valid key in the environment variable {env}"
            if env
            else "name the environment variable that holds the key with llm.api_key_env"
        )
        return f"LLM server at {self.base_url} refused the API key (HTTP {status}): {fix}"

    # ---- structured output ---------------------------------------------------------------
    def chat_json(
        self,
        messages: list[dict],
        schema: dict,
        *,
        schema_name: str = "response",
        max_tokens: int | None = None,
        retries: int = 2,
        trace: list | None = None,
    ) -> dict:
        """The reply as a dict that matches `schema`.

        A reply that violates the schema is shown back to the model with the validator's
        message (a new request, so temperature 0 does not repeat the same mistake), at most
        `retries` times; then LLMFormatError is raised and counted in `llm_failures`.
        Each attempt is appended to `trace` when given.
        """
        convo = list(messages)
        last: LLMResult | None = None
        for attempt in range(retries + 1):
            if attempt:
                self._count(format_retries=1)
            last = self.chat(convo, schema=schema, schema_name=schema_name, max_tokens=max_tokens)
            if trace is not None:
                trace.append(
                    {
                        "schema": schema_name,
                        "attempt": attempt,
                        "cached": last.cached,
                        "latency_s": round(last.latency_s, 3),
                        **last.usage,
                        "error": last.error,
                    }
                )
            if last.error is None:
                return last.data
            log.info(
                "LLM reply for '%s' violates the schema (%s); attempt %d/%d",
                schema_name,
                last.error,
                attempt + 1,
                retries + 1,
            )
            convo = list(messages) + [
                {"role": "assistant", "content": last.text},
                {
                    "role": "user",
                    "content": f"That reply does not match the required JSON schema: "
                    f"{last.error}. Reply again with only one JSON object "
                    f"that matches the schema.",
                },
            ]
        self._count(failures=1)
        raise LLMFormatError(schema_name, retries + 1, last.error, last.text)

    def stats_dict(self) -> dict:
        with self._lock:
            return self.stats.as_dict()

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
        if self.cache is not None:
            self.cache.close()
