"""Shared fixtures: where the real benchmark files are, a per-session cache, and a counter of
calls in flight for the concurrency tests."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("HOPBENCH_DATA_DIR", REPO.parent / "shared" / "datasets")).resolve()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.exists():
        pytest.fail(f"benchmark data not found at {DATA_DIR}; set HOPBENCH_DATA_DIR")
    return DATA_DIR


@pytest.fixture(scope="session")
def child_env() -> dict[str, str]:
    """The environment for a child process (`python -m hopbench.run`, `python -c ...`): this
    checkout's src first on its path, whatever else is installed."""
    path = [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p)}


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """Embedding/graph cache shared by the whole session (HOPBENCH_TEST_CACHE to keep it across sessions)."""
    env = os.environ.get("HOPBENCH_TEST_CACHE")
    if env:
        Path(env).mkdir(parents=True, exist_ok=True)
        return Path(env)
    return tmp_path_factory.mktemp("hopbench-cache")


@pytest.fixture(scope="session")
def encoder(cache_dir):
    from hopbench.embed import Encoder

    return Encoder(cache_dir=cache_dir, show_progress=False)


# --- Neo4j -------------------------------------------------------------------------------------
# Tests marked `neo4j` talk to a real server (configs/graphdb/local.yaml: the launcher from
# scripts/neo4j-up.sh on HOPBENCH_NEO4J_PORT, or your own via HOPBENCH_NEO4J_PASSWORD etc.).
# If it is not reachable they FAIL, so CI cannot pass without exercising Neo4j;
# HOPBENCH_SKIP_NEO4J=1 skips them instead (machines without Java).

SKIP_NEO4J = os.environ.get("HOPBENCH_SKIP_NEO4J") == "1"


def pytest_collection_modifyitems(config, items):
    if not SKIP_NEO4J:
        return
    skip = pytest.mark.skip(reason="HOPBENCH_SKIP_NEO4J=1: Neo4j tests skipped")
    for item in items:
        if "neo4j" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def graphdb_settings():
    """The `graphdb` config exactly as a run resolves it (env interpolation included)."""
    from omegaconf import OmegaConf

    from hopbench.graphdb.connection import GraphDBSettings

    cfg = OmegaConf.load(REPO / "configs" / "graphdb" / "local.yaml")
    return GraphDBSettings.from_config(OmegaConf.to_container(cfg, resolve=True))


@pytest.fixture(scope="session")
def graphdb(graphdb_settings):
    """An open connection to the configured Neo4j; fails (not skips) when it is unreachable."""
    from hopbench.graphdb.connection import GraphDBConnectionError, connect

    try:
        db = connect(graphdb_settings)
    except GraphDBConnectionError as exc:
        problem = str(exc)
    else:
        yield db
        db.close()
        return
    pytest.fail(
        f"{problem}\n(neo4j tests need a running server: scripts/neo4j-up.sh, or set "
        "HOPBENCH_SKIP_NEO4J=1 to skip them)",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def musique_sub(data_dir):
    """The 3-question, 18-passage MuSiQue sub-corpus: real data, small enough for every suite."""
    from hopbench.data import load_dataset

    return load_dataset(
        "musique_sub",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )


@pytest.fixture(scope="session")
def musique_kg(musique_sub, encoder, cache_dir):
    """The spaCy knowledge graph of the 18-passage sub-corpus (built once per cache)."""
    from hopbench.kg import load_or_build

    return load_or_build(musique_sub, None, encoder=encoder, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def musique_dataset(data_dir):
    """HippoRAG's 100-question MuSiQue subset over its 1,890 passages."""
    from hopbench.data import load_dataset

    return load_dataset(
        "musique",
        "musique",
        data_dir / "musique/musique_train.json",
        data_dir / "musique/musique_train_corpus.json",
    )


@pytest.fixture(scope="session")
def musique_graph(musique_dataset, encoder, cache_dir):
    """The spaCy graph of the 1,890 passages (minutes to build once; cached by content hash)."""
    from hopbench.kg import load_or_build

    return load_or_build(musique_dataset, None, encoder=encoder, cache_dir=cache_dir)


class InFlight:
    """Wraps a function to count how many of its calls run at once and keep the peak: the
    concurrency tests' evidence that work really overlapped, and never beyond the limit."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self._lock = threading.Lock()

    def wrap(self, fn, delay: float = 0.0):
        """fn, counted while it runs; `delay` seconds of sleep first stand in for a server's latency."""

        def counted(*args, **kwargs):
            with self._lock:
                self.running += 1
                self.peak = max(self.peak, self.running)
            try:
                time.sleep(delay)
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.running -= 1

        return counted


@pytest.fixture
def in_flight() -> InFlight:
    return InFlight()


@pytest.fixture
def scripted_http_llm():
    """make(steps, identity) -> (ScriptedServer, LLMClient on it, no cache); both closed after
    the test. The server lives in tests/helpers/scripted_llm_server.py."""
    from hopbench.llm.client import LLMClient
    from tests.helpers.scripted_llm_server import ScriptedServer

    made = []

    def make(steps, identity: str = "scripted"):
        srv = ScriptedServer(steps)
        llm = LLMClient(
            base_url=srv.base_url,
            model="scripted",
            identity=identity,
            cache=None,
            transient_retries=1,
            backoff_s=0.001,
        )
        made.append((srv, llm))
        return srv, llm

    yield make
    for srv, llm in made:
        llm.close()
        srv.close()
