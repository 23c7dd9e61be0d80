"""Cache files are checked before they are used (issue #28, items 5 and 13): an embedding file,
a graph file or an LLM cache row whose bytes changed after it was written is recomputed (or
refused with one line naming the file), never used; a damaged file is never a raw ValueError,
BadZipFile or sqlite3.DatabaseError traceback."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.embed import Encoder
from hopbench.llm.cache import CachedResponse, ResponseCache

TEXTS = ["Who wrote Hamlet?", "Where is the Eiffel Tower?", "When did the Berlin Wall fall?"]


def _flip(path, at: float = 0.5, n: int = 8) -> None:
    """Overwrite n bytes in the middle of a file with their complement (same length)."""
    data = bytearray(path.read_bytes())
    i = int(len(data) * at)
    data[i : i + n] = bytes(255 - b for b in data[i : i + n])
    path.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def fresh_vectors(tmp_path_factory):
    enc = Encoder(cache_dir=tmp_path_factory.mktemp("ref"), show_progress=False)
    return enc.encode(TEXTS)


@pytest.mark.parametrize("damage", ["overwritten", "zeroed", "truncated"])
def test_a_damaged_embedding_file_is_encoded_again(tmp_path, fresh_vectors, damage):
    enc = Encoder(cache_dir=tmp_path, show_progress=False)
    enc.encode(TEXTS)
    [npy] = (tmp_path / "embeddings").glob("*.npy")
    if damage == "overwritten":
        _flip(npy, at=0.7)
    elif damage == "zeroed":
        npy.write_bytes(bytes(npy.stat().st_size))
    else:
        npy.write_bytes(npy.read_bytes()[:100])
    again = Encoder(cache_dir=tmp_path, show_progress=False)
    got = again.encode(TEXTS)
    assert np.array_equal(got, fresh_vectors)
    assert again.stats["texts_encoded"] == 3 and again.stats["cache_hits"] == 0
    # and the file written in its place is good
    third = Encoder(cache_dir=tmp_path, show_progress=False)
    assert np.array_equal(third.encode(TEXTS), fresh_vectors) and third.stats["cache_hits"] == 1


@pytest.fixture
def graph_copy(musique_kg, tmp_path):
    from hopbench.kg.store import save_graph

    return save_graph(musique_kg, tmp_path / "graph")


@pytest.mark.parametrize(
    "name, damage",
    [
        ("arrays.npz", "overwritten"),
        ("arrays.npz", "truncated"),
        ("entities.parquet", "overwritten"),
        ("facts.parquet", "overwritten"),
        ("passages.parquet", "truncated"),
    ],
)
def test_a_damaged_graph_file_is_refused_naming_it(graph_copy, name, damage):
    from hopbench.kg.store import load_graph

    path = graph_copy / name
    if damage == "overwritten":
        _flip(path, at=0.6)
    else:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(HopbenchError) as exc:
        load_graph(graph_copy)
    msg = str(exc.value)
    assert msg.startswith(f"{path}: the cached graph is damaged") and "delete" in msg
    assert "\n" not in msg


def test_a_graph_written_before_checksums_loads_and_gets_them(graph_copy):
    import json

    from hopbench.kg.store import load_graph

    manifest = json.loads((graph_copy / "manifest.json").read_text())
    sums = manifest.pop("checksums")
    (graph_copy / "manifest.json").write_text(json.dumps(manifest))
    kg = load_graph(graph_copy)
    assert "checksums" not in kg.manifest
    assert json.loads((graph_copy / "manifest.json").read_text())["checksums"] == sums
    _flip(graph_copy / "arrays.npz")
    with pytest.raises(HopbenchError, match="damaged"):
        load_graph(graph_copy)


def test_a_legacy_graph_whose_zip_is_broken_is_one_line(graph_copy):
    """No checksums to compare against: the reader's own error, as one line naming the folder."""
    import json

    from hopbench.kg.store import load_graph

    manifest = json.loads((graph_copy / "manifest.json").read_text())
    manifest.pop("checksums")
    (graph_copy / "manifest.json").write_text(json.dumps(manifest))
    (graph_copy / "arrays.npz").write_bytes(b"PK\x03\x04 not a zip at all")
    with pytest.raises(HopbenchError, match=r"cannot read the cached graph \(BadZipFile"):
        load_graph(graph_copy)


def _row(cache: ResponseCache, key: str, text: str) -> None:
    cache.put(key, "model", {"messages": []}, CachedResponse(text, 10, 2, 0.5))


def test_an_llm_row_whose_text_changed_is_a_miss_and_is_deleted(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    _row(cache, "k1", '{"answer": "Shakespeare"}')
    _row(cache, "k2", '{"answer": "Paris"}')
    cache._conn.execute(
        "UPDATE responses SET response_text = ? WHERE key = 'k1'", ('{"answer": "Marlowe"}',)
    )
    cache._conn.execute("UPDATE responses SET completion_tokens = 99 WHERE key = 'k2'")
    assert cache.get("k1") is None and cache.get("k2") is None
    assert len(cache) == 0
    _row(cache, "k1", '{"answer": "Shakespeare"}')
    assert cache.get("k1").text == '{"answer": "Shakespeare"}'


def test_a_row_from_a_version_without_checksums_is_used_and_gets_one(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    cache._conn.execute("INSERT INTO responses VALUES ('k', 'm', '{}', 'old reply', 1, 2, 0.1, 0)")
    assert cache.get("k") == CachedResponse("old reply", 1, 2, 0.1)
    cache._conn.execute("UPDATE responses SET response_text = 'changed' WHERE key = 'k'")
    assert cache.get("k") is None


def test_a_client_asks_again_for_a_damaged_row(tmp_path):
    from hopbench.llm.client import LLMClient
    from tests.helpers.scripted_llm_server import ScriptedServer, reply

    srv = ScriptedServer([reply("Shakespeare"), reply("Shakespeare")])
    try:
        llm = LLMClient(
            base_url=srv.base_url,
            model="m",
            identity="i",
            cache=ResponseCache(tmp_path / "responses.sqlite"),
        )
        msgs = [{"role": "user", "content": "Who wrote Hamlet?"}]
        assert llm.chat(msgs).text == "Shakespeare"
        llm.cache._conn.execute("UPDATE responses SET response_text = 'Marlowe'")
        assert llm.chat(msgs).text == "Shakespeare" and len(srv.requests) == 2
        llm.close()
    finally:
        srv.close()


@pytest.mark.parametrize("damage", ["garbage", "overwritten-header"])
def test_a_damaged_sqlite_file_is_one_line_naming_it(tmp_path, damage):
    path = tmp_path / "responses.sqlite"
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    else:
        cache = ResponseCache(path)
        for i in range(50):
            _row(cache, f"k{i}", "x" * 500)
        cache.close()
        for p in tmp_path.glob("responses.sqlite-*"):
            p.unlink()
        data = bytearray(path.read_bytes())
        data[0:100] = bytes(100)
        path.write_bytes(bytes(data))
    with pytest.raises(HopbenchError) as exc:
        ResponseCache(path).get("k1")
    assert str(exc.value).startswith(f"{path}: the LLM response cache cannot be used")
    assert not isinstance(exc.value, sqlite3.Error)


def test_a_digest_names_its_algorithm_and_either_is_read(tmp_path):
    """XXH3 when xxhash is installed, BLAKE2b otherwise: a file written with one is checked
    with the one its digest names."""
    from hopbench.core import checksum

    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    path = tmp_path / "a.npy"
    checksum.save_npy(path, arr)
    assert (
        checksum.sidecar(path)
        .read_text()
        .startswith("xxh3_128:" if checksum.ALGORITHM == "xxh3_128" else tuple("0123456789abcdef"))
    )
    checksum.sidecar(path).write_text(checksum.digest_bytes(path.read_bytes(), "blake2b") + "\n")
    assert np.array_equal(checksum.load_npy(path), arr)
    _flip(path, at=0.9, n=2)
    with pytest.raises(checksum.Damaged, match="do not match"):
        checksum.load_npy(path)
