"""The process memo behind one load per sweep: a value is made once per key, reused after, and
the memo never holds more than its bound (the least recently used goes first)."""

from __future__ import annotations

import pytest

from hopbench.core.process_memo import ProcessMemo, file_stamp


def test_a_key_is_made_once_then_reused():
    memo = ProcessMemo("thing", max_entries=2)
    made = []
    for _ in range(3):
        value = memo.get("a", lambda: made.append("a") or ["a-value"])
    assert made == ["a"]
    assert value == ["a-value"]
    assert (memo.loads, memo.hits) == (1, 2)


def test_the_least_recently_used_goes_past_the_bound():
    memo = ProcessMemo("thing", max_entries=2)
    memo.get("a", lambda: 1)
    memo.get("b", lambda: 2)
    memo.get("a", lambda: 1)  # a is now the most recent
    memo.get("c", lambda: 3)  # b goes
    assert len(memo) == 2
    assert "a" in memo and "c" in memo and "b" not in memo
    assert memo.find("b") is None
    assert memo.loads == 3


def test_put_keeps_a_value_made_elsewhere_within_the_bound():
    memo = ProcessMemo("graph", max_entries=1)
    memo.put("g1", "first")
    memo.put("g2", "second")
    assert memo.find("g1") is None
    assert memo.get("g2", lambda: "made again") == "second"


def test_a_bound_below_one_is_refused():
    with pytest.raises(ValueError, match="thing: max_entries"):
        ProcessMemo("thing", max_entries=0)


def test_a_file_rewritten_since_it_was_read_gets_another_stamp(tmp_path):
    path = tmp_path / "vectors.npy"
    path.write_bytes(b"0123")
    memo = ProcessMemo("vectors", max_entries=2)
    memo.put(file_stamp(path), "as read")
    assert memo.find(file_stamp(path)) == "as read"
    path.write_bytes(b"damaged, longer")
    assert memo.find(file_stamp(path)) is None  # read again (and its checksum checked)
    path.unlink()
    assert file_stamp(path) == ()
    memo.put((), "nothing")
    assert memo.find(()) is None
