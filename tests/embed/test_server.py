"""`embedding=server` against a real embeddings server on 127.0.0.1 that computes real
all-MiniLM-L6-v2 vectors (tests/helpers/embedding_server.py): the vectors, batching and
concurrency, the cache, query instructions, and every failure the run must stop on."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.embed.server import (
    NV_EMBED_QUERY,
    EmbeddingAuthError,
    EmbeddingRequestError,
    EmbeddingResponseError,
    EmbeddingUnavailableError,
    ServerEncoder,
    instruction_for,
)
from hopbench.retrieve.base import Services
from tests.helpers.embedding_server import DEGENERATE, error

# The server computes each request's texts as one batch, the local encoder in batches of its own;
# padding to another length and the JSON round trip move a component by at most 9e-8 (measured on
# these texts with 1, 4 and 32 texts a request), so 1e-6 is a tight bound.
ATOL = 1e-6


@pytest.fixture(scope="module")
def musique(data_dir):
    return load_dataset(
        "s",
        "musique",
        data_dir / "musique/musique_qa_sub.json",
        data_dir / "musique/musique_sub_corpus.json",
    )


@pytest.fixture(scope="module")
def passages(musique):
    return [p.content for p in musique.corpus]


def _client(server, tmp_path, **kw) -> ServerEncoder:
    kw = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "cache_dir": tmp_path,
        "show_progress": False,
        "backoff_s": 0.001,
        **kw,
    }
    return ServerEncoder(base_url=server.base_url, **kw)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_vectors_are_the_local_encoders_batched_and_concurrent(
    embedding_server, passages, tmp_path
):
    server = embedding_server(delay=0.05)
    enc = _client(server, tmp_path, batch_size=4, concurrency=3)
    ours = enc.encode(passages)
    ref = Encoder(cache_dir=tmp_path / "local", show_progress=False).encode(passages)
    assert ours.shape == (18, 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(ours, ref, atol=ATOL)
    # 18 texts in requests of at most 4, in order, with up to 3 in flight
    assert sorted(len(i) for i in server.inputs) == [2, 4, 4, 4, 4]
    assert sorted(t for i in server.inputs for t in i) == sorted(passages)
    assert 2 <= server.peak <= 3
    assert all(r["model"] == "sentence-transformers/all-MiniLM-L6-v2" for r in server.requests)
    assert enc.dim == 384 and enc.stats["requests"] == 5


def test_alone_sends_one_text_per_request(embedding_server, passages, tmp_path):
    server = embedding_server()
    vecs = _client(server, tmp_path).encode(passages[:3], alone=True)
    assert sorted(server.inputs) == sorted([t] for t in passages[:3])
    np.testing.assert_allclose(
        vecs, Encoder(cache_dir=None, show_progress=False).encode(passages[:3]), atol=ATOL
    )


def test_second_call_is_answered_from_the_cache(embedding_server, passages, tmp_path):
    server = embedding_server()
    first = _client(server, tmp_path).encode(passages)
    n = len(server.requests)
    again = _client(server, tmp_path)  # a new process would start like this
    np.testing.assert_array_equal(again.encode(passages), first)
    assert len(server.requests) == n and again.stats["cache_hits"] == 1
    assert again.dim == 384 and len(server.requests) == n  # learned from the cached vectors
    # another model identity, or the texts in another order: not the same cache entry
    _client(server, tmp_path, model="other-model").encode(passages)
    assert len(server.requests) > n
    assert again.cache_key(passages) != again.cache_key(passages[::-1])
    assert again.cache_key(["x"]) != ServerEncoder(
        base_url=server.base_url, model="m", identity="i2", cache_dir=tmp_path
    ).cache_key(["x"])


def test_query_instruction_goes_to_queries_only(embedding_server, musique, passages, tmp_path):
    """NV-Embed-v2's instruction (HippoRAG 2's) before each question, none before passages; the
    server computes MiniLM on whatever it is sent, so the vectors show what was sent too."""
    assert instruction_for("nvidia/NV-Embed-v2", "query") == NV_EMBED_QUERY
    assert NV_EMBED_QUERY == (
        "Instruct: Given a question, retrieve relevant documents that best answer "
        "the question.\nQuery: "
    )
    assert instruction_for("nvidia/NV-Embed-v2", "passage") is None
    assert instruction_for("text-embedding-3-small", "query") is None
    assert instruction_for("nomic-embed-text:latest", "passage") == "search_document: "
    server = embedding_server()
    enc = _client(
        server,
        tmp_path,
        model="nvidia/NV-Embed-v2",
        query_instruction=instruction_for("nvidia/NV-Embed-v2", "query"),
    )
    services = Services(dataset=musique, encoder=enc)
    services.encode_questions(musique.questions)
    questions = [q.text for q in musique.questions]
    assert sorted(server.inputs) == sorted(
        [NV_EMBED_QUERY + q] for q in questions
    )  # alone, instructed
    local = Encoder(cache_dir=None, show_progress=False)
    np.testing.assert_allclose(
        np.stack([services.query_embedding(q) for q in musique.questions]),
        local.encode([NV_EMBED_QUERY + q for q in questions]),
        atol=ATOL,
    )
    n = len(server.requests)
    np.testing.assert_allclose(services.passage_embeddings, local.encode(passages), atol=ATOL)
    assert sorted(t for i in server.inputs[n:] for t in i) == sorted(passages)  # no instruction
    # the instruction is part of the cache key (and a passage instruction of the graph identity)
    assert enc.cache_key(["q"], query=True) != enc.cache_key(["q"])
    assert enc.identity == f"server:{server.base_url}:nvidia/NV-Embed-v2"
    nomic = _client(
        server, tmp_path, model="nomic-embed-text", passage_instruction="search_document: "
    )
    assert nomic.identity.endswith("|passage_instruction=search_document: ")


def test_refused_key_is_one_clear_line(embedding_server, passages, tmp_path, monkeypatch):
    server = embedding_server(api_key="sk-test-123")
    with pytest.raises(EmbeddingAuthError) as exc:
        _client(server, tmp_path, api_key_env="HOPBENCH_TEST_EMBED_KEY").encode(passages[:2])
    msg = str(exc.value)
    assert "\n" not in msg and "HTTP 401" in msg and "HOPBENCH_TEST_EMBED_KEY" in msg
    with pytest.raises(EmbeddingAuthError, match="embedding.api_key_env"):
        _client(server, tmp_path).encode(passages[:2])
    # the key, from the environment, is sent as a Bearer token and kept out of every key
    enc = _client(server, tmp_path, api_key="sk-test-123", api_key_env="HOPBENCH_TEST_EMBED_KEY")
    enc.encode(passages[:2])
    assert server.headers[-1]["Authorization"] == "Bearer sk-test-123"
    assert "sk-test" not in enc.identity


def test_5xx_is_retried_then_succeeds(embedding_server, passages, tmp_path):
    server = embedding_server(steps=[error(500, "loading"), error(503, "busy")])
    enc = _client(server, tmp_path, transient_retries=2)
    vecs = enc.encode(passages[:3])
    np.testing.assert_allclose(
        vecs, Encoder(cache_dir=None, show_progress=False).encode(passages[:3]), atol=ATOL
    )
    assert len(server.requests) == 3 and enc.stats["retries"] == 2


def test_repeated_5xx_stops_after_the_retries(embedding_server, passages, tmp_path):
    server = embedding_server(steps=[error(500, "out of memory")] * 3)
    with pytest.raises(
        EmbeddingResponseError, match=r"kept answering HTTP 500 after 3 attempt\(s\)"
    ):
        _client(server, tmp_path, transient_retries=2).encode(passages[:3])
    assert len(server.requests) == 3
    assert not list((tmp_path / "embeddings").glob("*.npy"))  # nothing cached


def test_not_an_embeddings_body_is_retried_then_an_error(embedding_server, passages, tmp_path):
    server = embedding_server(steps=[(200, b"<html>proxy</html>")] * 2)
    with pytest.raises(EmbeddingResponseError, match="not an embeddings list, 2 time"):
        _client(server, tmp_path, transient_retries=1).encode(passages[:1])


def test_wrong_dimension_is_a_clear_error(embedding_server, passages, tmp_path):
    # the second request's vectors lose a dimension: a changed model must not mix into one run
    server = embedding_server(reshape=lambda n, v: v[:, :383] if n == 1 else v)
    with pytest.raises(EmbeddingResponseError, match="have 383 dimensions, expected 384") as exc:
        _client(server, tmp_path, batch_size=4, concurrency=1).encode(passages[:8])
    assert "\n" not in str(exc.value)
    # embedding.dim states the model's dimension: the first reply is checked against it
    server = embedding_server()
    with pytest.raises(EmbeddingResponseError, match="have 384 dimensions, expected 768"):
        _client(server, tmp_path, dim=768).encode(passages[:2])


def test_wrong_vector_count_is_a_clear_error(embedding_server, passages, tmp_path):
    server = embedding_server(reshape=lambda n, v: v[:-1])
    with pytest.raises(EmbeddingResponseError, match="sent 2 vectors for 3 texts"):
        _client(server, tmp_path).encode(passages[:3])


def test_other_4xx_names_the_model(embedding_server, passages, tmp_path):
    server = embedding_server(steps=[error(404, "model 'nope' not found")])
    with pytest.raises(
        EmbeddingRequestError, match="HTTP 404.*model 'nope' not found.*embedding.model"
    ):
        _client(server, tmp_path, model="nope").encode(passages[:1])


def test_too_many_texts_for_the_server_says_lower_the_batch_size(
    embedding_server, passages, tmp_path
):
    server = embedding_server(steps=[error(413, "batch size 32 > maximum allowed batch size 16")])
    with pytest.raises(EmbeddingRequestError, match=r"HTTP 413.*lower embedding.batch_size \(32\)"):
        _client(server, tmp_path, batch_size=32).encode(passages)


def test_a_server_too_slow_is_a_timeout(embedding_server, passages, tmp_path):
    server = embedding_server(delay=2.0)
    with pytest.raises(EmbeddingUnavailableError, match="did not answer within 0.3 s"):
        _client(server, tmp_path, timeout=0.3).encode(passages[:1])


def test_unreachable_server_says_what_to_start(tmp_path):
    enc = ServerEncoder(
        base_url=f"http://127.0.0.1:{_free_port()}/v1", model="m", cache_dir=tmp_path
    )
    with pytest.raises(EmbeddingUnavailableError, match="not reachable.*start the server"):
        enc.encode(["x"])


def test_settings_are_checked(tmp_path):
    with pytest.raises(HopbenchError, match="needs embedding.base_url"):
        ServerEncoder(base_url=None, model="m")
    with pytest.raises(HopbenchError, match="needs embedding.model"):
        ServerEncoder(base_url="http://127.0.0.1:1/v1", model=None)
    with pytest.raises(HopbenchError, match=r"holds credentials.*embedding.api_key_env"):
        ServerEncoder(base_url="http://user:tok@127.0.0.1:1/v1", model="m")
    with pytest.raises(HopbenchError, match="embedding.base_url must be an http"):
        ServerEncoder(base_url="ftp://127.0.0.1/v1", model="m")
    with pytest.raises(HopbenchError, match="embedding.concurrency"):
        ServerEncoder(base_url="http://127.0.0.1:1/v1", model="m", concurrency=0)


# ---- degenerate vectors (issue #54, defect 2) ---------------------------------------------
@pytest.mark.parametrize(
    "case, problem",
    [
        ("zero vectors", "a zero vector for text 0"),
        ("one vector for all", "the same vector for all 3 texts"),
        ("NaN", "a vector holds NaN or infinity"),
        ("no dimension", "vectors of 0 dimensions"),
    ],
)
def test_degenerate_vectors_are_retried_then_refused_and_never_cached(
    case, problem, embedding_server, passages, tmp_path
):
    server = embedding_server(reshape=DEGENERATE[case])
    enc = _client(server, tmp_path, transient_retries=2)
    with pytest.raises(EmbeddingResponseError, match="2 time|3 time") as exc:
        enc.encode(passages[:3])
    msg = str(exc.value)
    assert problem in msg and "\n" not in msg and "3 time(s)" in msg, msg
    assert len(server.requests) == 3 and enc.stats["retries"] == 2  # the LLM's retry policy
    assert not list((tmp_path / "embeddings").glob("*.npy"))  # nothing cached
    # the server fixed, the same texts are computed (nothing wrong was kept)
    fixed = _client(embedding_server(), tmp_path)
    np.testing.assert_allclose(
        fixed.encode(passages[:3]),
        Encoder(cache_dir=None, show_progress=False).encode(passages[:3]),
        atol=ATOL,
    )


def test_one_degenerate_reply_is_retried_and_the_next_is_used(embedding_server, passages, tmp_path):
    server = embedding_server(reshape=lambda n, v: np.zeros_like(v) if n == 0 else v)
    enc = _client(server, tmp_path, transient_retries=1)
    np.testing.assert_allclose(
        enc.encode(passages[:3]),
        Encoder(cache_dir=None, show_progress=False).encode(passages[:3]),
        atol=ATOL,
    )
    assert len(server.requests) == 2 and enc.stats["retries"] == 1


def test_texts_differing_only_in_case_may_share_a_vector(embedding_server, tmp_path):
    """MiniLM is uncased: "Apple" and "APPLE  " are one input to it, so one vector is right."""
    vecs = _client(embedding_server(), tmp_path).encode(["Apple", "APPLE  ", "apple"])
    np.testing.assert_allclose(vecs[1:], np.repeat(vecs[:1], 2, axis=0), atol=ATOL)


def test_degenerate_vectors_in_the_cache_are_computed_again(embedding_server, passages, tmp_path):
    """Vectors cached before they were checked (an older hopbench) are not trusted either."""
    from hopbench.core import checksum

    server = embedding_server()
    enc = _client(server, tmp_path)
    path = tmp_path / "embeddings" / f"{enc.cache_key(passages[:3])}.npy"
    path.parent.mkdir(parents=True)
    checksum.save_npy(path, np.zeros((3, 384), dtype=np.float32))
    vecs = enc.encode(passages[:3])
    assert len(server.requests) == 1 and enc.stats["cache_hits"] == 0
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(checksum.load_npy(path), vecs)  # the good ones replace them
