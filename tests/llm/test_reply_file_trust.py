"""Nothing in a reply file is trusted that can lie (issue #54): the runs it covers are counted
from its entries, its size is bounded while streaming, a lone surrogate is refused before
anything is written, and a reply changed after export is named by the digest list beside it."""

from __future__ import annotations

import gzip
import json
import sqlite3
import tracemalloc
from pathlib import Path

import pytest

from hopbench.cli import main
from hopbench.llm import reply_file
from hopbench.llm.reply_file import FORMAT, Reply, read_reply_file, write_reply_file

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"
MiB = 1 << 20


def _reply(i: int, text: str = "reply", runs: tuple[str, ...] = ()) -> Reply:
    extra = {"runs": runs} if runs else {}  # (version 3)
    return Reply(f"{i:064x}", "m", f"{text} {i}", 10 + i, 3, 0.25 * i, **extra)


def covered_runs(head, replies):
    return reply_file.covered_runs(head, replies)


def _import(path, tmp_path) -> int:
    return main(["replies", "import", str(path), "--cache-dir", str(tmp_path / "cache")])


def _cached(tmp_path) -> int:
    db = tmp_path / "cache" / "llm" / "responses.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def _rewrite(path: Path, edit) -> None:
    """Change the decompressed lines of a reply file (its digest list left as it was)."""
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    path.write_bytes(gzip.compress("".join(edit(lines)).encode("utf-8", "surrogatepass")))


def _one_line_error(capsys, *words) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


# ---- 4: the runs a file covers, from its entries ----------------------------------------------
def test_a_run_the_header_lists_without_replies_is_not_covered(tmp_path):
    path = tmp_path / "r.jsonl.gz"
    replies = [_reply(1, runs=("d/a/1",)), _reply(2, runs=("d/a/1", "d/b/2"))]
    write_reply_file(path, replies, {"d/a/1": 2, "d/b/2": 1, "d/empty/3": 4})
    assert covered_runs(*read_reply_file(path)) == {"d/a/1", "d/b/2"}
    # a header that counts more replies for a run than the entries name
    write_reply_file(path, replies, {"d/a/1": 3, "d/b/2": 1})
    assert covered_runs(*read_reply_file(path)) == {"d/b/2"}


def test_an_entry_naming_a_run_the_header_does_not_list_is_refused(tmp_path, capsys):
    path = tmp_path / "r.jsonl.gz"
    write_reply_file(path, [_reply(1, runs=("d/a/1",))], {"d/a/1": 1})
    _rewrite(path, lambda lines: [lines[0], lines[1].replace("d/a/1", "d/x/9")])
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "line 2, runs")


# ---- 5: bounds, checked while streaming --------------------------------------------------------
def test_a_reply_over_the_clients_1_mib_is_refused(tmp_path, capsys):
    path = tmp_path / "r.jsonl.gz"
    write_reply_file(path, [_reply(1, "x" * (MiB + 1))], {})
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "line 2, text", "1 MiB")
    assert _cached(tmp_path) == 0


def test_a_gzip_bomb_stops_at_the_line_bound_in_bounded_memory(tmp_path, capsys):
    """100 MB of one line in a 100 KB gzip file: refused after reading one line's bound."""
    path = tmp_path / "bomb.jsonl.gz"
    head = {"format": FORMAT, "version": 2, "n_entries": 1, "n_failed": 0, "models": {}}
    with gzip.open(path, "wb", compresslevel=9) as gz:
        gz.write((json.dumps({**head, "runs": {}}) + "\n").encode())
        gz.write(b'{"key": "' + b"0" * 64 + b'", "text": "')
        block = b"a" * MiB
        for _ in range(100):
            gz.write(block)
        gz.write(b'"}\n')
    assert path.stat().st_size < 1 * MiB
    tracemalloc.start()
    try:
        code = _import(path, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2
    _one_line_error(capsys, "line 2", "longer than 8 MiB")
    assert peak < 4 * reply_file.MAX_LINE_BYTES, peak  # a few copies of one line, not 100 MB


def test_the_decompressed_file_is_bounded(tmp_path, capsys, monkeypatch):
    path = tmp_path / "r.jsonl.gz"
    write_reply_file(path, [_reply(i, "y" * 10_000) for i in range(300)], {})  # ~3 MB
    monkeypatch.setattr(reply_file, "MAX_FILE_BYTES", 2 * MiB)
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "larger than 2 MiB decompressed")
    assert _cached(tmp_path) == 0


# ---- 7: a lone surrogate: refused before anything is written -----------------------------------
def test_a_lone_surrogate_is_one_error_and_nothing_is_imported(tmp_path, capsys):
    path = tmp_path / "r.jsonl.gz"
    write_reply_file(path, [_reply(i) for i in range(1, 6)], {})
    _rewrite(
        path, lambda lines: [*lines[:3], lines[3].replace("reply 3", "reply \\ud83d"), *lines[4:]]
    )
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "line 4, text", "lone surrogate")
    assert _cached(tmp_path) == 0


# ---- 9: the digest list ------------------------------------------------------------------------
def test_export_writes_the_digest_list_and_a_clean_file_imports(tmp_path):
    path = tmp_path / "llm_replies.jsonl.gz"
    write_reply_file(path, [_reply(i, runs=("d/a/1",)) for i in range(1, 4)], {"d/a/1": 3})
    listed = (tmp_path / "llm_replies.sha256").read_text().splitlines()
    assert [line.split()[1] for line in listed[1:]] == [
        "header",
        *(f"{i:064x}" for i in range(1, 4)),
        "file",
    ]
    assert _import(path, tmp_path) == 0 and _cached(tmp_path) == 3


def test_a_tampered_reply_is_named_and_nothing_is_imported(tmp_path, capsys):
    path = tmp_path / "llm_replies.jsonl.gz"
    write_reply_file(path, [_reply(i) for i in range(1, 6)], {})
    _rewrite(path, lambda lines: [*lines[:3], lines[3].replace("reply 3", "reply 4"), *lines[4:]])
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "line 4", f"{3:064x}", "llm_replies.sha256")
    assert _cached(tmp_path) == 0


def test_a_file_without_its_digest_list_is_refused(tmp_path, capsys):
    path = tmp_path / "llm_replies.jsonl.gz"
    write_reply_file(path, [_reply(1)], {})
    (tmp_path / "llm_replies.sha256").unlink()
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "llm_replies.sha256: no such file")


def test_a_header_changed_or_a_line_dropped_does_not_match(tmp_path, capsys):
    path = tmp_path / "llm_replies.jsonl.gz"
    write_reply_file(path, [_reply(i) for i in range(1, 4)], {})
    whole = path.read_bytes()
    _rewrite(path, lambda lines: [lines[0].replace('"runs":{}', '"runs":{"d/a/1":0}'), *lines[1:]])
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "line 1", "(header)")
    path.write_bytes(whole)
    _rewrite(
        path,
        lambda lines: [lines[0].replace('"n_entries":3', '"n_entries":2'), *lines[1:3]],
    )
    assert _import(path, tmp_path) == 2
    _one_line_error(capsys, "llm_replies")


def test_the_committed_reply_file_matches_its_committed_digest_list():
    from hopbench.llm.reply_digests import read_verified

    head, replies = read_verified(REFERENCE / "llm_replies.jsonl.gz")
    assert len(replies) == head["n_entries"] > 0
    assert set(covered_runs(head, replies)) == set(head["runs"])


def test_the_committed_reply_file_covers_every_reference_row_that_called_the_llm():
    """`make paper` replays each LLM row from this file, so a row added to the reference
    without a reply export turns this red (the count is read from the leaderboard, not pinned)."""
    import csv

    from hopbench.llm.reply_digests import read_verified

    head, replies = read_verified(REFERENCE / "llm_replies.jsonl.gz")
    with open(REFERENCE / "leaderboard.csv", newline="") as f:
        llm_rows = {r["run_dir"] for r in csv.DictReader(f) if float(r["llm_calls_per_q"] or 0) > 0}
    assert llm_rows and llm_rows <= set(covered_runs(head, replies))


@pytest.mark.parametrize("n", [0, 1])
def test_update_keeps_which_runs_used_the_kept_entries(tmp_path, n):
    """`export --update` keeps the runs whose folders are gone, with their entries' run labels,
    so they stay covered (the version-3 membership is carried over, not dropped)."""
    from hopbench.llm.cache import CachedResponse, ResponseCache
    from hopbench.llm.replies import export_replies
    from hopbench.llm.reply_keys import RunKeys

    out = tmp_path / "llm_replies.jsonl.gz"
    write_reply_file(out, [_reply(1, runs=("d/gone/1",))], {"d/gone/1": 1})
    cache = ResponseCache.in_dir(tmp_path / "cache")
    keys = []
    for i in range(2, 2 + n):
        r = _reply(i)
        cache.put(r.key, r.model, {}, CachedResponse(r.text, r.prompt_tokens, 3, r.seconds))
        keys.append(r.key)
    runs = [RunKeys("d/new/2", tmp_path, keys, 0, True)] if n else []
    try:
        export_replies(runs, cache, out, update=True)
    finally:
        cache.close()
    head, replies = read_reply_file(out)
    assert covered_runs(head, replies) == {"d/gone/1", *(["d/new/2"] if n else [])}


def test_update_of_a_version_2_file_keeps_its_runs_covered(tmp_path):
    """The committed file is version 2: an `export --update` beside it names the new run's
    entries and keeps the old runs as `unlabelled_runs`, covered as they were."""
    from hopbench.llm.cache import CachedResponse, ResponseCache
    from hopbench.llm.replies import export_replies
    from hopbench.llm.reply_digests import write_digests
    from hopbench.llm.reply_keys import RunKeys

    out = tmp_path / "llm_replies.jsonl.gz"
    head = {"format": FORMAT, "version": 2, "n_entries": 2, "n_failed": 0, "models": {"m": 2}}
    lines = [json.dumps({**head, "runs": {"d/old/1": 2}}) + "\n"]
    for i in (1, 2):
        r = _reply(i)
        entry = {f: getattr(r, f) for f in reply_file.FIELDS}
        lines.append(json.dumps(entry) + "\n")
    out.write_bytes(gzip.compress("".join(lines).encode()))
    digests = [reply_file.line_digest(line.encode()) for line in lines]
    write_digests(out, digests, [f"{i:064x}" for i in (1, 2)])
    cache = ResponseCache.in_dir(tmp_path / "cache")
    new = _reply(3)
    cache.put(new.key, "m", {}, CachedResponse(new.text, 1, 1, 0.1))
    try:
        export_replies([RunKeys("d/new/2", tmp_path, [new.key], 0, True)], cache, out, update=True)
    finally:
        cache.close()
    head, replies = read_reply_file(out)
    assert head["version"] == 3 and head["unlabelled_runs"] == ["d/old/1"]
    assert covered_runs(head, replies) == {"d/old/1", "d/new/2"}
    assert [r.runs for r in replies] == [(), (), ("d/new/2",)]
