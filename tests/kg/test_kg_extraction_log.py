"""The append-only extraction log: torn tails are dropped, corruption elsewhere is reported."""

from __future__ import annotations

import pytest

from hopbench.core.errors import HopbenchError
from hopbench.kg.extraction import ExtractionLog, PassageExtraction


def test_roundtrip_and_torn_tail(tmp_path):
    path = tmp_path / "x.jsonl"
    log = ExtractionLog(path)
    log.append(PassageExtraction("a", ["A", "Zürich"], [["A", "in", "Zürich"]]))
    log.append(PassageExtraction("b", status="failed", error="boom"))
    log.close()
    with open(path, "a") as fh:
        fh.write('{"passage_id": "c", "entit')  # killed mid-write
    again = ExtractionLog(path)
    assert set(again.records) == {"a", "b"}
    assert again.records["a"].triples == [["A", "in", "Zürich"]]
    assert again.records["b"].status == "failed"
    assert path.read_text().endswith("\n")  # torn tail removed before appending
    again.append(PassageExtraction("c"))
    again.close()
    assert set(ExtractionLog(path).records) == {"a", "b", "c"}


def test_corruption_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"passage_id": "a"}\nGARBAGE\n{"passage_id": "b"}\n')
    with pytest.raises(HopbenchError, match="line 2"):
        ExtractionLog(path)
