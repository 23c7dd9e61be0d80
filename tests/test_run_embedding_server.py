"""`embedding=server` in a run: its own run hash and graph key (MiniLM's unchanged), the key
from the environment only, and a server failure stopping the run with exit 2 and no
metrics.json; against a real embeddings server on 127.0.0.1 computing MiniLM vectors."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.embed import Encoder
from hopbench.harness.compose import build_dataset, build_encoder, build_retriever, load_config
from hopbench.harness.run_store import config_hash
from hopbench.harness.runner import execute, semantic_config
from hopbench.kg.cache_keys import cache_keys
from hopbench.kg.extraction_run import make_extractor
from hopbench.kg.settings import resolve_settings
from tests.helpers.embedding_server import DEGENERATE, EmbeddingServer

KEY_ENV = "HOPBENCH_TEST_EMBEDDING_KEY"


@pytest.fixture(scope="module")
def server_factory():
    servers = []
    minilm = Encoder(cache_dir=None, show_progress=False)

    def make(**options) -> EmbeddingServer:
        servers.append(EmbeddingServer(minilm, **options))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _overrides(tmp_path, data_dir, *extra) -> list[str]:
    return [
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={tmp_path / 'cache'}",
        "progress=false",
        "dataset=musique_sub",
        "retriever=dense",
        *extra,
    ]


def _server(url: str, model: str = "sentence-transformers/all-MiniLM-L6-v2", *extra) -> list[str]:
    return ["embedding=server", f"embedding.base_url={url}", f"embedding.model={model}", *extra]


def _hash(overrides: list[str], retriever: str = "dense") -> str:
    cfg = load_config([*overrides, f"retriever={retriever}"])
    return config_hash(semantic_config(cfg, build_dataset(cfg), build_retriever(cfg)))


def test_run_hash_and_graph_key_are_the_models(tmp_path, data_dir):
    base = _overrides(tmp_path, data_dir)
    url = "http://127.0.0.1:8000/v1"
    minilm = _hash(base)
    server = _hash(base + _server(url))
    assert server != minilm
    assert _hash(base + _server(url, "BAAI/bge-base-en-v1.5")) != server
    assert _hash(base + _server(url, "nvidia/NV-Embed-v2")) != _hash(
        base + _server(url, "nvidia/NV-Embed-v2", "embedding.query_instruction=null")
    )
    # how requests are sent is not what they compute
    assert _hash(
        base
        + _server(
            url,
            "m",
            "embedding.batch_size=8",
            "embedding.concurrency=16",
            "embedding.timeout=5",
            f"embedding.api_key_env={KEY_ENV}",
            "embedding.dim=384",
        )
    ) == _hash(base + _server(url, "m"))
    # the resolved instruction is what the run's config holds (and hashes)
    cfg = load_config(base + _server(url, "nvidia/NV-Embed-v2"))
    sem = semantic_config(cfg, build_dataset(cfg), build_retriever(cfg))
    assert sem["embedding"]["query_instruction"].startswith("Instruct: Given a question")
    assert sem["embedding"]["passage_instruction"] is None
    # a graph built on a server model's vectors is never MiniLM's graph
    keys = {}
    for name, extra in (("minilm", []), ("server", _server(url))):
        cfg = load_config(base + extra + ["retriever=hipporag_hb"])
        s = resolve_settings(cfg.graph)
        keys[name] = cache_keys(
            list(build_dataset(cfg).corpus), s, make_extractor(s), build_encoder(cfg)
        )
    assert keys["minilm"][0] == keys["server"][0]  # the same extraction
    assert keys["minilm"][1] != keys["server"][1]  # another graph
    assert keys["server"][2]["embedding"] == f"server:{url}:sentence-transformers/all-MiniLM-L6-v2"


def test_settings_fail_before_anything_is_written(tmp_path, data_dir, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    for extra, message in (
        (
            _server("http://127.0.0.1:1/v1", "m", f"embedding.api_key_env={KEY_ENV}"),
            f"{KEY_ENV}, which is not set",
        ),
        (["embedding=server", "embedding.model=m"], "needs embedding.base_url"),
        (_server("http://u:secret@127.0.0.1:1/v1"), "holds credentials"),
    ):
        with pytest.raises(HopbenchError, match=message):
            execute(load_config(_overrides(tmp_path, data_dir, *extra)))
    assert not (tmp_path / "runs").exists()


def _cli(overrides: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hopbench.run", *overrides],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.parametrize(
    "failure", ["unreachable", "refused key", "wrong dimension", "5xx", "one vector for all"]
)
def test_server_failure_exits_2_and_records_nothing(
    failure, server_factory, tmp_path, data_dir, child_env
):
    if failure == "unreachable":
        url, extra, expected = f"http://127.0.0.1:{_free_port()}/v1", [], "is not reachable"
    elif failure == "refused key":
        url, extra, expected = (
            server_factory(api_key="right").base_url,
            [f"embedding.api_key_env={KEY_ENV}"],
            f"refused the API key (HTTP 401): put a valid key in the environment "
            f"variable {KEY_ENV}",
        )
    elif failure == "wrong dimension":
        url, extra, expected = (
            server_factory(reshape=lambda n, v: v[:, :100]).base_url,
            ["embedding.dim=384"],
            "have 100 dimensions, expected 384",
        )
    elif failure == "one vector for all":
        url, extra, expected = (
            server_factory(reshape=DEGENERATE[failure]).base_url,
            ["embedding.transient_retries=1", "embedding.backoff_s=0.01"],
            "sent unusable vectors 2 time(s): the same vector for all",
        )
    else:
        url, extra, expected = (
            server_factory(steps=[(500, b'{"error": "CUDA out of memory"}')] * 2).base_url,
            ["embedding.transient_retries=1", "embedding.backoff_s=0.01"],
            "kept answering HTTP 500 after 2 attempt(s)",
        )
    env = {**child_env, KEY_ENV: "wrong"}
    proc = _cli(_overrides(tmp_path, data_dir, *_server(url), *extra), env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("hopbench: error:")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr[-2000:]
    assert "embedding server at" in errors[0] and "Traceback" not in proc.stderr
    assert not list((tmp_path / "runs").glob("**/metrics.json"))
    assert "wrong" not in "".join(p.read_text() for p in (tmp_path / "runs").glob("**/config.yaml"))


def test_server_run_ranks_as_the_local_encoder(server_factory, tmp_path, data_dir, monkeypatch):
    """A run on the server's MiniLM vectors ranks every question as the local encoder does,
    with the key from the environment only; after a failed launch, the relaunch completes."""
    server = server_factory(api_key="sk-embed-test")
    overrides = _overrides(
        tmp_path, data_dir, *_server(server.base_url), f"embedding.api_key_env={KEY_ENV}"
    )
    monkeypatch.setenv(KEY_ENV, "wrong")
    with pytest.raises(HopbenchError, match="refused the API key"):
        execute(load_config(overrides))
    monkeypatch.setenv(KEY_ENV, "sk-embed-test")
    served = execute(load_config(overrides))
    local = execute(load_config(_overrides(tmp_path, data_dir)))
    assert served["config_hash"] != local["config_hash"]

    def ranked(h):
        [pred] = (tmp_path / "runs").glob(f"musique_sub/dense/{h}/predictions.jsonl")
        rows = [json.loads(line) for line in pred.read_text().splitlines()]
        return {r["id"]: r["ranked_passage_ids"] for r in rows}

    assert ranked(served["config_hash"]) == ranked(local["config_hash"])
    assert served["recall@5"] == local["recall@5"]
    config = next(
        (tmp_path / "runs").glob(f"musique_sub/dense/{served['config_hash']}/config.yaml")
    ).read_text()
    assert "sk-embed-test" not in config and KEY_ENV in config


def test_a_run_on_zero_vectors_stops_and_the_fixed_server_completes_it(
    server_factory, tmp_path, data_dir
):
    """Issue #54: zero vectors were filed as a complete run (R@2 0) and cached, so the run
    stayed wrong after the server was fixed. Now the run stops with nothing filed or cached,
    and the same command against the fixed server ranks as the local encoder does."""
    broken = server_factory(reshape=DEGENERATE["zero vectors"])
    retry = ["embedding.transient_retries=1", "embedding.backoff_s=0.01"]
    with pytest.raises(HopbenchError, match="sent unusable vectors 2 time.*a zero vector"):
        execute(load_config(_overrides(tmp_path, data_dir, *_server(broken.base_url), *retry)))
    assert not list((tmp_path / "runs").glob("**/metrics.json"))
    assert not list((tmp_path / "cache").glob("embeddings/*.npy"))
    fixed = server_factory()  # another port: the url is in the hash, so compare rankings
    served = execute(load_config(_overrides(tmp_path, data_dir, *_server(fixed.base_url))))
    local = execute(load_config(_overrides(tmp_path, data_dir)))
    assert served["recall@5"] == local["recall@5"] > 0
