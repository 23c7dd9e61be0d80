"""Fuzz the reply-file reader and `hopbench replies import` (issue #54): seeded random
truncations, bit flips, huge and deeply nested values, bad encodings and shuffled lines of a
valid file. Every case ends in a clean exit 2 (one line, no traceback) or a correct import (the
cache holds exactly the replies the reader returned), and the Python heap stays under
`HEAP_BOUND` throughout.

Each mutated file gets a digest list that matches its lines whenever it can be decompressed, so
the cases reach the reader's checks past the digest list, not only the list's mismatch."""

from __future__ import annotations

import gzip
import json
import random
import sqlite3
import tracemalloc
import zlib

from hopbench.cli import main
from hopbench.llm.reply_digests import digests_path, write_digests
from hopbench.llm.reply_file import (
    Reply,
    ReplyFileError,
    line_digest,
    read_reply_file,
    write_reply_file,
)

SEED = 54
N_CASES = 360
HEAP_BOUND = (
    32 << 20
)  # bytes of Python heap (tracemalloc) at the peak of any case (measured: 6 MiB)
MiB = 1 << 20


def _valid(path) -> bytes:
    """A valid file (failed reply, non-ASCII text, complete and incomplete runs); its lines."""
    run = "musique/oracle/0123456789ab"
    replies = [
        Reply(f"{i * 7919:064x}", "gguf-sha256:abc", f"réponse {i} ✓ " * (i + 1), 30 + i, 5,
              0.5 * i, runs=(run,) if i < 5 else ())
        for i in range(8)
    ]  # fmt: skip
    replies[3] = Reply(replies[3].key, "m2", '{"answer": "cut', 9, 256, 2.0, True, True, (run,))
    write_reply_file(path, replies, {run: 5}, {"hover/dense/ba9876543210": 0})
    return gzip.decompress(path.read_bytes())


def _flip(data: bytes, rng: random.Random, n: int) -> bytes:
    b = bytearray(data)
    for _ in range(n):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def _replace_value(lines: list[bytes], rng: random.Random, value: bytes) -> list[bytes]:
    """Put `value` in place of one field's value on a random line."""
    i = rng.randrange(len(lines))
    obj = json.loads(lines[i])
    field = rng.choice(sorted(obj))
    marker = "\x00MARK\x00"
    obj[field] = marker
    text = json.dumps(obj, ensure_ascii=False).encode()
    lines[i] = text.replace(json.dumps(marker).encode(), value) + b"\n"
    return lines


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice([50, 900, 5000, 100_000])
    return (
        (b"[" * depth + b"]" * depth)
        if rng.random() < 0.5
        else (b'{"a":' * depth + b"1" + b"}" * depth)
    )


HUGE = [
    b"9" * 5000,  # more digits than int() converts
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"18446744073709551617",
    b'"' + b"x" * (MiB + 10) + b'"',  # a text over the client's 1 MiB
    b'"' + "é".encode() * (MiB // 2 + 10) + b'"',  # 1 MiB of UTF-8 in fewer characters
    b'"' + b"\\u0001" * 200_000 + b'"',  # escapes: a long line, a short text
    b'"\\ud83d"',  # a lone surrogate
    b'"\\udc00 tail"',
    b'{"nested": ["\\ud800"]}',
    b"[]",
    b"null",
    b"true",
]


def _mutate(plain: bytes, rng: random.Random) -> tuple[str, bytes, bool]:
    """(kind, file bytes, gzipped) of one case."""
    lines = plain.splitlines(keepends=True)
    kind = rng.choice(
        ["cut-gz", "cut", "flip-gz", "flip", "huge", "deep", "encoding", "lines", "plain-flip"]
    )
    gz = kind != "plain-flip"
    if kind == "cut-gz":
        data = gzip.compress(plain)
        return kind, data[: rng.randrange(len(data))], True
    if kind == "flip-gz":
        return kind, _flip(gzip.compress(plain), rng, rng.randint(1, 8)), True
    if kind == "cut":
        body = plain[: rng.randrange(len(plain))]
    elif kind in ("flip", "plain-flip"):
        body = _flip(plain, rng, rng.randint(1, 4))
    elif kind == "huge":
        body = b"".join(_replace_value(lines, rng, rng.choice(HUGE)))
    elif kind == "deep":
        body = b"".join(_replace_value(lines, rng, _deep(rng)))
    elif kind == "encoding":
        i = rng.randrange(len(lines))
        how = rng.choice(["latin-1", "utf-16", "bad-bytes", "bom", "all-utf-16"])
        if how == "latin-1":
            lines[i] = lines[i].decode("utf-8").encode("latin-1", "replace")
        elif how == "utf-16":
            lines[i] = lines[i].decode("utf-8").encode("utf-16")
        elif how == "bad-bytes":
            bad = rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x00"])
            j = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + bad + lines[i][j:]
        elif how == "bom":
            lines[i] = b"\xef\xbb\xbf" + lines[i]
        body = plain.decode("utf-8").encode("utf-16") if how == "all-utf-16" else b"".join(lines)
    else:  # lines dropped, repeated, swapped or blank
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.choice(["drop", "repeat", "swap", "blank"])
        if op == "drop":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[j])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, b"\n")
        body = b"".join(lines)
    return kind, gzip.compress(body) if gz else body, gz


def _list_for(path, data: bytes, gz: bool, fallback: bytes) -> None:
    """A digest list matching the file's lines when they can be read, else the valid file's."""
    try:
        plain = gzip.decompress(data) if gz else data
    except (OSError, EOFError, zlib.error):
        digests_path(path).write_bytes(fallback)
        return
    lines = plain.splitlines(keepends=True)
    keys = []
    for raw in lines[1:]:
        try:
            key = json.loads(raw).get("key")
        except Exception:  # noqa: BLE001 - a line that is not an object: any name will do
            key = None
        keys.append(key if isinstance(key, str) and key.isascii() and key.isalnum() else "?")
    write_digests(path, [line_digest(raw) for raw in lines], keys)


def _stored(cache_dir) -> dict[str, str]:
    db = cache_dir / "llm" / "responses.sqlite"
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, response_text FROM responses").fetchall()
        rows += conn.execute("SELECT key, response_text FROM failed_replies").fetchall()
    return dict(rows)


def test_mutated_reply_files_end_in_exit_2_or_a_correct_import(tmp_path, capsys):
    rng = random.Random(SEED)
    valid = tmp_path / "valid.jsonl.gz"
    plain = _valid(valid)
    valid_list = (tmp_path / "valid.sha256").read_bytes()
    outcomes: dict[str, list[int]] = {}
    tracemalloc.start()
    try:
        for n in range(N_CASES):
            kind, data, gz = _mutate(plain, rng)
            path = tmp_path / f"case{n}.jsonl{'.gz' if gz else ''}"
            path.write_bytes(data)
            _list_for(path, data, gz, valid_list)
            try:
                _, replies = read_reply_file(path)
            except ReplyFileError:
                replies = None
            cache = tmp_path / f"cache{n}"
            code = main(["replies", "import", str(path), "--cache-dir", str(cache)])
            out, err = capsys.readouterr()
            assert code in (0, 2), (n, kind, code, err)
            if code == 2:
                assert err.count("\n") == 1 and "Traceback" not in err, (n, kind, err)
                assert _stored(cache) == {}, (n, kind)  # nothing written before the error
            else:
                assert replies is not None and err == "", (n, kind, err)
                assert _stored(cache) == {r.key: r.text for r in replies}, (n, kind)
            outcomes.setdefault(kind, []).append(code)
            path.unlink()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(f"{N_CASES} cases, heap peak {peak / MiB:.1f} MiB: " + ", ".join(
        f"{k} {c.count(0)} ok/{c.count(2)} refused" for k, c in sorted(outcomes.items())
    ))  # fmt: skip
    assert peak < HEAP_BOUND, peak
    assert len(outcomes) == 9  # every kind of damage was tried
    assert sum(c.count(0) for c in outcomes.values()) > 0  # and some still import correctly
