"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM, Ollama,
text-embeddings-inference), cached and normalised like the local encoder's.

Why beside `Encoder` and not a backend of it: the model runs elsewhere, so what matters here is
the request path, and that is the LLM's (`hopbench.core.http_transport`, the same retry and failure
policy as `hopbench.llm.client`). A server failure stops the run (exit 2, `hopbench.run`): an
unreachable server, a refused key, 429/5xx, a body that is not an embeddings list or vectors
that cannot be used (zero, NaN, one vector for every input: `vector_checks`) after
`transient_retries`, a wrong number of vectors or a wrong dimension (at once: retrying cannot
fix a misconfigured model). Nothing of a failed request is cached. There is no fallback to the
local model.

Instructions: models trained with a query (and passage) prefix get it from `KNOWN_INSTRUCTIONS`
through the config (`configs/embedding/server.yaml`), so the resolved text is in the run's
config.yaml and hash. Queries are the question vectors (`Services.encode_questions`) and other
searches of passages by a question; passages, entity names, facts and descriptions are passages.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from pathlib import Path
from typing import NoReturn, Sequence

import numpy as np

from hopbench.core import checksum
from hopbench.core.errors import HopbenchError
from hopbench.core.http_transport import (
    MAX_REPLY_BYTES,
    ChatTransport,
    ReplyTooLarge,
    Response,
    error_detail,
)
from hopbench.core.secret_values import redact_url, url_credentials_error
from hopbench.embed.texts_key import texts_key
from hopbench.embed.vector_checks import degenerate

log = logging.getLogger(__name__)

# HippoRAG 2's query_to_passage instruction in NV-Embed-v2's "Instruct: ...\nQuery: " form
NV_EMBED_QUERY = (
    "Instruct: Given a question, retrieve relevant documents that best answer the "
    "question.\nQuery: "
)
_E5 = ("query: ", "passage: ")  # intfloat e5 (v2, multilingual)
_BGE = ("Represent this sentence for searching relevant passages: ", None)  # BAAI bge-*-en-v1.5
_NOMIC = ("search_query: ", "search_document: ")  # nomic-embed-text

# model (last path part, lower case, without an Ollama ":tag") -> (query, passage) instruction;
# a model not listed takes none (OpenAI's text-embedding-3-*, all-MiniLM-L6-v2, ...)
KNOWN_INSTRUCTIONS: dict[str, tuple[str | None, str | None]] = {
    "nv-embed-v2": (NV_EMBED_QUERY, None),
    **{
        f"{p}e5-{s}{v}": _E5
        for p, v in (("", "-v2"), ("multilingual-", ""))
        for s in ("small", "base", "large")
    },
    **{f"bge-{s}-en-v1.5": _BGE for s in ("small", "base", "large")},
    **{f"nomic-embed-text{v}": _NOMIC for v in ("", "-v1", "-v1.5")},
}

# a float in a JSON body takes ~20 bytes: 4,096 dimensions ~ 80 KiB a vector; room for 8,192
_BYTES_PER_VECTOR = 256 << 10


def instruction_for(model, kind: str) -> str | None:
    """The `kind` ("query" or "passage") instruction of `model` from KNOWN_INSTRUCTIONS, or None."""
    if kind not in ("query", "passage"):
        raise HopbenchError(f"instruction kind must be query or passage, got {kind!r}")
    if not model:
        return None
    name = str(model).rstrip("/").rsplit("/", 1)[-1].split(":", 1)[0].lower()
    query, passage = KNOWN_INSTRUCTIONS.get(name, (None, None))
    return query if kind == "query" else passage


class EmbeddingServerError(HopbenchError):
    """The embedding server could not be used; the run stops (exit 2) with this one line."""


class EmbeddingUnavailableError(EmbeddingServerError):
    """Nothing answered at base_url (not started, wrong URL, network down), or not in time."""


class EmbeddingAuthError(EmbeddingServerError):
    """HTTP 401/403: the key is missing or refused."""


class EmbeddingRequestError(EmbeddingServerError):
    """Another HTTP 4xx: a wrong model name or path, an input the server refuses."""


class EmbeddingResponseError(EmbeddingServerError):
    """The server kept failing (429, 5xx, a body that is not an embeddings list), or answered
    with a wrong number of vectors or a wrong dimension."""


class _Transient(Exception):
    """Worth retrying after a back-off; `final(attempts)` is raised once retries are used up."""

    def __init__(self, why: str, cause: Exception, final):
        super().__init__(why)
        self.why, self.cause, self.final = why, cause, final


class ServerEncoder:
    """`Encoder`'s interface (encode, identity, dim, cache_key) over an embeddings endpoint:
    batched requests, `concurrency` of them in flight, L2-normalised float32 vectors cached as
    .npy keyed by the model's identity, the instruction and the texts."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        api_key_env: str | None = None,
        identity: str | None = None,
        query_instruction: str | None = None,
        passage_instruction: str | None = None,
        dim: int | None = None,
        batch_size: int = 32,
        concurrency: int = 4,
        timeout: float = 120.0,
        transient_retries: int = 6,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
        cache_dir: str | Path | None = None,
        show_progress: bool = True,
    ):
        if not base_url:
            raise HopbenchError(
                "embedding=server needs embedding.base_url, e.g. "
                "embedding.base_url=http://127.0.0.1:8000/v1"
            )
        if problem := url_credentials_error("embedding.base_url", base_url):  # it is in `identity`
            raise HopbenchError(problem)
        if not model:
            raise HopbenchError(
                "embedding=server needs embedding.model (the model name the server serves)"
            )
        for key, value, low in (
            ("batch_size", batch_size, 1),
            ("concurrency", concurrency, 1),
            ("transient_retries", transient_retries, 0),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise HopbenchError(
                    f"embedding.{key} must be a whole number >= {low}, got {value!r}"
                )
        if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or dim < 1):
            raise HopbenchError(f"embedding.dim must be null or a whole number >= 1, got {dim!r}")
        self.base_url, self.model_name = base_url, model
        self.api_key_env = api_key_env  # named in the message when the key is refused
        self.query_instruction = query_instruction or ""
        self.passage_instruction = passage_instruction or ""
        self.texts_per_request, self.concurrency = batch_size, concurrency
        self.timeout, self.transient_retries = timeout, transient_retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.cache_dir = Path(cache_dir) / "embeddings" if cache_dir else None
        self.show_progress = show_progress
        self._identity = identity or f"server:{base_url}:{model}"
        self._dim = dim
        self._http = ChatTransport(
            base_url,
            api_key or "not-needed",
            timeout,
            path="/embeddings",
            setting="embedding.base_url",
            max_reply_bytes=MAX_REPLY_BYTES + batch_size * _BYTES_PER_VECTOR,
        )
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.stats = {
            "texts_encoded": 0,
            "seconds": 0.0,
            "cache_hits": 0,
            "requests": 0,
            "retries": 0,
        }

    # ---- what the rest of hopbench reads -------------------------------------------------
    @property
    def identity(self) -> str:
        """Server model and passage instruction: the graph hash uses it (queries never reach a graph)."""
        if self.passage_instruction:
            return f"{self._identity}|passage_instruction={self.passage_instruction}"
        return self._identity

    @property
    def model(self):
        """Nothing to load here (the model lives on the server); retrievers call it to warm up."""
        return self

    @property
    def dim(self) -> int:
        """`embedding.dim`, else the length of the vectors the server has sent (asked once if none yet)."""
        if self._dim is None:
            self.encode(["dimension"], desc="dimension")
        return int(self._dim)

    def instruction(self, query: bool) -> str:
        return self.query_instruction if query else self.passage_instruction

    def cache_key(self, texts: Sequence[str], alone: bool = False, query: bool = False) -> str:
        blob = f"{self._identity}|instruction={json.dumps(self.instruction(query))}"
        return texts_key(blob, texts, alone)

    # ---- encoding ------------------------------------------------------------------------
    def encode(
        self,
        texts: Sequence[str],
        desc: str = "embedding",
        alone: bool = False,
        query: bool = False,
    ) -> np.ndarray:
        """L2-normalised float32 vectors of `texts`, the query instruction before each when
        `query`, else the passage one. `alone`: one text per request, so a vector never depends
        on what else was sent (as `Encoder.encode`)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        path = (
            self.cache_dir / f"{self.cache_key(texts, alone, query)}.npy"
            if self.cache_dir
            else None
        )
        if path is not None and path.exists():
            try:
                arr = checksum.load_npy(path)
            except checksum.Damaged as exc:
                log.warning("embedding cache %s; encoding again", exc)
                checksum.remove(path)
            else:
                if arr.ndim == 2 and arr.shape[0] == len(texts) and arr.dtype == np.float32:
                    # cached before replies were checked (issue #54): not trusted either
                    problem = degenerate(arr, [self.instruction(query) + t for t in texts])
                    if problem is None:
                        self._check_dim(arr.shape[1], f"the cached vectors in {path}")
                        with self._lock:
                            self.stats["cache_hits"] += 1
                        return arr
                    log.warning("embedding cache %s holds %s; encoding again", path, problem)
                else:
                    log.warning("embedding cache %s has the wrong shape; recomputing", path)
        start = time.perf_counter()
        sent = [self.instruction(query) + t for t in texts]
        step = 1 if alone else self.texts_per_request
        batches = [sent[i : i + step] for i in range(0, len(sent), step)]
        show = self.show_progress and len(batches) > 1
        if show:
            log.info(
                "%s: %d texts in %d requests to %s",
                desc,
                len(texts),
                len(batches),
                redact_url(self.base_url),
            )
        arr = self._normalised(np.concatenate(self._run(batches, desc, show)))
        with self._lock:
            self.stats["seconds"] += time.perf_counter() - start
            self.stats["texts_encoded"] += len(texts)
        if path is not None:
            checksum.save_npy(path, arr)
        return arr

    @staticmethod
    def _normalised(arr: np.ndarray) -> np.ndarray:
        """Unit rows in float32 (normalised in float64 first), as the local encoder gives them."""
        arr = np.asarray(arr, dtype=np.float64)
        return (arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)).astype(
            np.float32
        )

    def _run(self, batches: list[list[str]], desc: str, show: bool) -> list[np.ndarray]:
        """Every batch's vectors, in order, `concurrency` requests at a time (shared by every
        caller: questions in flight, the graph build's passage thread). The first failure stops
        the rest: requests waiting to retry give up, queued ones are not sent."""
        from tqdm import tqdm

        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.concurrency, thread_name_prefix="hopbench-embed"
                )
            pool = self._pool
        stop = threading.Event()
        futures = [pool.submit(self._request, batch, stop) for batch in batches]
        with tqdm(
            total=len(futures), desc=desc, unit="request", disable=not show, leave=False
        ) as bar:
            for f in as_completed(futures):
                if f.exception() is not None:
                    stop.set()
                    for other in futures:
                        other.cancel()
                    wait(futures)
                    raise f.exception()
                bar.update()
        return [f.result() for f in futures]

    def _request(self, batch: list[str], stop: threading.Event) -> np.ndarray:
        """One batch's vectors; 429, 5xx and bodies that are not an embeddings list are retried
        `transient_retries` times with back-off (as `LLMClient`), everything else raised at once."""
        attempt = 0
        while True:
            if stop.is_set():
                raise EmbeddingServerError(
                    "stopped: another request to the embedding server failed"
                )
            try:
                return self._post(batch)
            except _Transient as t:
                if attempt >= self.transient_retries:
                    raise t.final(attempt + 1) from t.cause
                delay = min(self.max_backoff_s, self.backoff_s * (2**attempt)) * (
                    0.5 + random.random() / 2
                )
                log.warning(
                    "embedding server %s (%s); retry %d/%d in %.1f s",
                    t.why,
                    t.cause,
                    attempt + 1,
                    self.transient_retries,
                    delay,
                )
                with self._lock:
                    self.stats["retries"] += 1
                if stop.wait(delay):
                    raise t.final(attempt + 1) from t.cause
                attempt += 1

    def _post(self, batch: list[str]) -> np.ndarray:
        with self._lock:
            self.stats["requests"] += 1
        url = redact_url(self.base_url)
        try:
            resp = self._http.post({"model": self.model_name, "input": batch})
        except TimeoutError as exc:
            raise EmbeddingUnavailableError(
                f"embedding server at {url} did not answer within "
                f"{self.timeout:g} s (raise embedding.timeout, or lower "
                f"embedding.batch_size)"
            ) from exc
        except ReplyTooLarge as exc:
            self._bad_body(str(exc), exc)
        except (OSError, http.client.HTTPException) as exc:
            raise EmbeddingUnavailableError(
                f"embedding server at {url} is not reachable ({exc.__class__.__name__}): start the "
                f"server (vLLM, Ollama, text-embeddings-inference ...) or fix embedding.base_url"
            ) from exc
        if resp.status_code >= 400:
            self._refused(resp)
        return self._vectors(resp.content, batch)

    def _refused(self, resp: Response) -> NoReturn:
        status, url = resp.status_code, redact_url(self.base_url)
        detail, _ = error_detail(resp)
        exc = Exception(f"HTTP {status}: {detail}")
        if status == 429 or status >= 500:
            raise _Transient(
                f"HTTP {status}",
                exc,
                lambda n: EmbeddingResponseError(
                    f"embedding server at {url} kept answering HTTP {status} after {n} attempt(s): "
                    f"{detail}; check the server's log, or raise embedding.transient_retries"
                ),
            ) from exc
        if status in (401, 403):
            fix = (
                f"put a valid key in the environment variable {self.api_key_env}"
                if self.api_key_env
                else "name the environment variable that holds the key with embedding.api_key_env"
            )
            raise EmbeddingAuthError(
                f"embedding server at {url} refused the API key (HTTP {status}): {fix}"
            ) from exc
        if status == 413:  # text-embeddings-inference: more texts than --max-client-batch-size
            raise EmbeddingRequestError(
                f"embedding server at {url} refused a request as too large "
                f"(HTTP 413): {detail}; lower embedding.batch_size "
                f"({self.texts_per_request})"
            ) from exc
        raise EmbeddingRequestError(
            f"embedding server at {url} rejected the request (HTTP {status}): {detail}; check "
            f"embedding.model ({self.model_name!r}) and embedding.base_url (OpenAI-compatible "
            f"servers answer under /v1)"
        ) from exc

    def _bad_body(self, problem: str, exc: Exception) -> NoReturn:
        raise _Transient(
            "bad response",
            exc,
            lambda n: EmbeddingResponseError(
                f"embedding server at {redact_url(self.base_url)} answered HTTP 200 with something "
                f"that is not an embeddings list, {n} time(s): {problem}; check that embedding.base_url "
                f"points at an OpenAI-compatible /v1 endpoint"
            ),
        ) from exc

    def _unusable(self, problem: str) -> NoReturn:
        """Vectors that parse but cannot be used (`vector_checks.degenerate`): retried like a
        bad body (a server still loading its model may send zeros), then the run stops."""
        raise _Transient(
            "unusable vectors",
            ValueError(problem),
            lambda n: EmbeddingResponseError(
                f"embedding server at {redact_url(self.base_url)} sent unusable vectors {n} "
                f"time(s): {problem}; nothing was cached; check the server's log and that it "
                f"serves embedding.model ({self.model_name!r})"
            ),
        )

    def _vectors(self, body: bytes, batch: list[str]) -> np.ndarray:
        """The (n, dim) vectors of an embeddings body for the n texts of `batch`, in input order
        (by each item's `index`); refused when unusable (`vector_checks.degenerate`)."""
        n = len(batch)
        try:
            data = json.loads(body).get("data")
        except (ValueError, AttributeError) as exc:
            self._bad_body(f"{body[:120]!r}", exc)
        if not isinstance(data, list) or not all(
            isinstance(d, dict) and isinstance(d.get("embedding"), list) for d in data
        ):
            self._bad_body(f"no list of embeddings in {body[:120]!r}", ValueError("no data"))
        url = redact_url(self.base_url)
        if len(data) != n:
            raise EmbeddingResponseError(
                f"embedding server at {url} sent {len(data)} vectors for {n} texts; check that it "
                f"serves embedding.model ({self.model_name!r}) and takes a list of inputs (or lower "
                f"embedding.batch_size)"
            )
        where = {d.get("index", i): i for i, d in enumerate(data)}
        if set(where) != set(range(n)):
            self._bad_body(f"the vectors' indices are not 0..{n - 1}", ValueError("index"))
        lengths = sorted({len(d["embedding"]) for d in data})
        if len(lengths) > 1:
            raise EmbeddingResponseError(
                f"embedding server at {url} sent vectors of {lengths} dimensions in one reply"
            )
        try:
            arr = np.asarray([data[where[i]]["embedding"] for i in range(n)], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            self._bad_body(f"a vector holds something other than numbers ({exc})", exc)
        if problem := degenerate(arr, batch):
            self._unusable(problem)
        self._check_dim(arr.shape[1], "its vectors")
        return arr

    def _check_dim(self, got: int, what: str) -> None:
        """The first vectors seen set the dimension (unless `embedding.dim` did); every later
        one must match it, so one run never mixes two models' vectors."""
        with self._lock:
            if self._dim is None:
                self._dim = int(got)
                return
            expected = self._dim
        if got != expected:
            raise EmbeddingResponseError(
                f"embedding server at {redact_url(self.base_url)}: {what} have {got} dimensions, "
                f"expected {expected}; check that it serves embedding.model ({self.model_name!r}) "
                f"and that embedding.dim is that model's"
            )

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._http.close()
