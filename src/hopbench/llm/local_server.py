"""The in-process llama.cpp server (xllamacpp) that makes the local model an OpenAI-compatible endpoint.

One server per process and per setting: Hydra multirun jobs in one process, the reader and the
KG extractor all share it instead of loading 1 GB twice. It binds 127.0.0.1 on a port the OS
picks, so parallel jobs never collide.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
import urllib.request
from pathlib import Path

from hopbench.llm.errors import LLMUnavailableError

log = logging.getLogger(__name__)

_SERVERS: dict[tuple, "LocalServer"] = {}
_LOCK = threading.Lock()


class LocalServer:
    def __init__(
        self,
        model_path: Path,
        *,
        n_ctx: int,
        n_threads: int,
        n_parallel: int = 1,
        verbosity: int = 0,
    ):
        try:
            import xllamacpp
        except ImportError as exc:  # pragma: no cover - xllamacpp is a hard dependency of llm=local
            raise LLMUnavailableError(
                "llm=local needs the xllamacpp package; run `make install`"
            ) from exc
        p = xllamacpp.CommonParams()
        p.model.path = str(model_path)
        p.n_ctx = int(n_ctx) * int(n_parallel)  # llama.cpp splits n_ctx across slots
        p.n_parallel = int(n_parallel)
        p.cpuparams.n_threads = int(n_threads)
        p.cpuparams_batch.n_threads = int(n_threads)
        # Sleep instead of spin-waiting between batches: the machine is shared with other jobs.
        p.cpuparams.poll = 0
        p.cpuparams_batch.poll = 0
        p.hostnames = ["127.0.0.1"]
        p.port = 0
        p.verbosity = int(verbosity)
        p.cache_prompt = True  # reuse the KV cache of a shared prompt prefix
        t0 = time.perf_counter()
        try:
            self._server = xllamacpp.Server(p)
        except Exception as exc:
            raise LLMUnavailableError(
                f"the local llama.cpp server failed to start on {model_path}: {exc}"
            ) from exc
        self.address = self._server.listening_address
        self.base_url = self.address + "/v1"
        self.n_ctx = int(n_ctx)
        log.info(
            "local LLM %s serving at %s (started in %.1f s)",
            Path(model_path).name,
            self.base_url,
            time.perf_counter() - t0,
        )
        self._wait_healthy()

    def _wait_healthy(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.address + "/health", timeout=5) as r:
                    if json.loads(r.read()).get("status") == "ok":
                        return
            except OSError as exc:
                last = exc
            time.sleep(0.2)
        raise LLMUnavailableError(
            f"the local llama.cpp server at {self.address} never became healthy: {last}"
        )

    def stop(self) -> None:
        self._server = None


def shared_server(model_path: Path, **settings) -> LocalServer:
    """The process-wide server for this model file and these settings (started on first use)."""
    key = (str(model_path), tuple(sorted(settings.items())))
    with _LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = LocalServer(model_path, **settings)
        return _SERVERS[key]


@atexit.register
def _stop_all() -> None:
    with _LOCK:
        for s in _SERVERS.values():
            s.stop()
        _SERVERS.clear()
