"""The reply file format: sorted, deterministic bytes; strict reading with the line and field of
anything wrong (`hopbench.llm.reply_file`); and `hopbench replies import` turning that into
one line and exit code 2."""

from __future__ import annotations

import gzip
import json

import pytest

from hopbench.cli import main
from hopbench.llm.reply_file import (
    FORMAT,
    Reply,
    ReplyFileError,
    read_reply_file,
    read_reply_header,
    write_reply_file,
)


def _reply(i: int, text: str = "reply", model: str = "m") -> Reply:
    return Reply(f"{i:064x}", model, f"{text} {i}", 10 + i, 3, 0.25 * i)


def _write_lines(path, lines, gz=True):
    data = "".join(json.dumps(x) + "\n" if not isinstance(x, str) else x for x in lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _header(n: int, **over) -> dict:
    return {
        "format": FORMAT,
        "version": 2,
        "n_entries": n,
        "n_failed": 0,
        "models": {"m": n},
        "runs": {},
        **over,
    }


def _entry(i: int, **over) -> dict:
    r = _reply(i)
    return {
        "key": r.key,
        "model": r.model,
        "text": r.text,
        "prompt_tokens": r.prompt_tokens,
        "completion_tokens": r.completion_tokens,
        "seconds": r.seconds,
        **over,
    }


def test_written_sorted_and_read_back_identical(tmp_path):
    replies = [_reply(3, "ünïcode ✓"), _reply(1), _reply(2, model="other")]
    head = write_reply_file(tmp_path / "r.jsonl.gz", replies, {"ds/m/abc": 3})
    assert head == {
        "format": FORMAT,
        "version": 3,
        "n_entries": 3,
        "n_failed": 0,
        "models": {"m": 2, "other": 1},
        "runs": {"ds/m/abc": 3},
    }
    got_head, got = read_reply_file(tmp_path / "r.jsonl.gz")
    assert got_head == head and got == sorted(replies, key=lambda r: r.key)


def test_the_same_entries_give_the_same_bytes_in_any_order(tmp_path):
    replies = [_reply(i) for i in range(20)]
    write_reply_file(tmp_path / "a.jsonl.gz", replies, {"x/y/z": 20})
    write_reply_file(tmp_path / "b.jsonl.gz", reversed(replies), {"x/y/z": 20})
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()


def test_a_run_complete_and_incomplete_at_once_is_refused(tmp_path):
    with pytest.raises(ValueError, match="complete and as incomplete"):
        write_reply_file(tmp_path / "r.jsonl.gz", [_reply(1)], {"d/r/h": 1}, {"d/r/h": 1})
    head = write_reply_file(tmp_path / "r.jsonl.gz", [_reply(1)], {"d/r/h": 1}, {"d/x/h": 2})
    assert read_reply_header(tmp_path / "r.jsonl.gz") == head
    assert head["incomplete_runs"] == {"d/x/h": 2}


def test_a_key_given_twice_is_refused(tmp_path):
    with pytest.raises(ValueError, match="twice"):
        write_reply_file(tmp_path / "r.jsonl.gz", [_reply(1), _reply(1)], {})
    assert not (tmp_path / "r.jsonl.gz").exists()


BAD = {
    "not json": (["hello\n"], 1, None, "not valid JSON"),
    "not a reply file": (
        [{"format": "something-else", "version": 1}],
        1,
        "format",
        "not a hopbench reply file",
    ),
    "newer version": ([_header(0, version=4)], 1, "version", "newer hopbench"),
    "no failed count (version 2)": (
        [{k: v for k, v in _header(0).items() if k != "n_failed"}],
        1,
        "n_failed",
        "expected a count",
    ),
    "a failed flag in version 1": (
        [_header(1, version=1), _entry(1, failed=True, truncated=False)],
        2,
        "failed",
        "unknown field",
    ),
    "failed without truncated": (
        [_header(1, n_failed=1), _entry(1, failed=True)],
        2,
        "truncated",
        "missing",
    ),
    "failed not a boolean": (
        [_header(1, n_failed=1), _entry(1, failed="yes", truncated=False)],
        2,
        "failed",
        "true or false",
    ),
    "failed false": (
        [_header(1), _entry(1, failed=False, truncated=False)],
        2,
        "failed",
        "expected true",
    ),
    "failed count off": (
        [_header(1, n_failed=1), _entry(1)],
        1,
        "n_failed",
        "the header says 1 failed",
    ),
    "incomplete runs not an object": (
        [_header(0, incomplete_runs=["musique/catrag/abc"])],
        1,
        "incomplete_runs",
        "expected an object",
    ),
    "version not a number": ([_header(0, version="1")], 1, "version", "expected an integer"),
    "bad key": ([_header(2), _entry(1), _entry(2, key="abc")], 3, "key", "64 lower-case hex"),
    "missing field": (
        [_header(1), {k: v for k, v in _entry(1).items() if k != "text"}],
        2,
        "text",
        "missing",
    ),
    "unknown field": ([_header(1), _entry(1, prompt="hi")], 2, "prompt", "unknown field"),
    "negative tokens": ([_header(1), _entry(1, prompt_tokens=-1)], 2, "prompt_tokens", "a count"),
    "seconds not a number": ([_header(1), _entry(1, seconds="fast")], 2, "seconds", "seconds"),
    "unsorted": ([_header(2), _entry(2), _entry(1)], 3, "key", "sorted"),
    "repeated key": ([_header(2), _entry(1), _entry(1)], 3, "key", "sorted"),
    "an array line": ([_header(1), "[1, 2]\n"], 2, None, "expected a JSON object"),
    "fewer entries than the header": ([_header(3), _entry(1)], 1, "n_entries", "cut short"),
    "empty": ([], 1, None, "no header"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_file_is_one_error_naming_the_line_and_field(tmp_path, case, capsys):
    lines, line, field, words = BAD[case]
    path = _write_lines(tmp_path / "r.jsonl.gz", lines)
    with pytest.raises(ReplyFileError) as err:
        read_reply_file(path)
    e = err.value
    assert (e.line, e.field) == (line, field) and words in str(e)
    assert str(e).startswith(f"{path}, line {line}")
    code = main(["replies", "import", str(path), "--cache-dir", str(tmp_path / "cache")])
    out, errtext = capsys.readouterr()
    assert (
        code == 2
        and errtext.count("\n") == 1
        and f"line {line}" in errtext
        and "Traceback" not in errtext
    )


def test_a_cut_short_or_damaged_gzip_is_named(tmp_path):
    path = tmp_path / "r.jsonl.gz"
    write_reply_file(path, [_reply(i, "x" * 500) for i in range(50)], {})
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ReplyFileError, match="cut short"):
        read_reply_file(path)
    path.write_bytes(whole[:10] + bytes(b ^ 0xFF for b in whole[10:40]) + whole[40:])
    with pytest.raises(ReplyFileError, match="gzip"):
        read_reply_file(path)


def test_an_uncompressed_copy_reads_the_same(tmp_path):
    write_reply_file(tmp_path / "r.jsonl.gz", [_reply(1), _reply(2)], {})
    plain = tmp_path / "r.jsonl"
    plain.write_bytes(gzip.decompress((tmp_path / "r.jsonl.gz").read_bytes()))
    assert read_reply_file(plain) == read_reply_file(tmp_path / "r.jsonl.gz")


def test_failed_replies_round_trip_flagged(tmp_path):
    ok, cut = (
        _reply(1),
        Reply(f"{2:064x}", "m", '{"answer": "Shakesp', 900, 4096, 1400.5, True, True),
    )
    head = write_reply_file(tmp_path / "r.jsonl.gz", [cut, ok], {"ds/m/abc": 2})
    assert head["n_entries"] == 2 and head["n_failed"] == 1
    _, got = read_reply_file(tmp_path / "r.jsonl.gz")
    assert got == [ok, cut] and got[1].failed and got[1].truncated and not got[0].failed
    lines = gzip.decompress((tmp_path / "r.jsonl.gz").read_bytes()).decode().splitlines()
    assert "failed" not in json.loads(lines[1]) and json.loads(lines[2])["truncated"] is True


def test_a_version_1_file_is_still_read(tmp_path):
    v1 = {k: v for k, v in _header(2, version=1).items() if k != "n_failed"}
    path = _write_lines(tmp_path / "r.jsonl.gz", [v1, _entry(1), _entry(2)])
    head, got = read_reply_file(path)
    assert head["version"] == 1 and got == [_reply(1), _reply(2)]
