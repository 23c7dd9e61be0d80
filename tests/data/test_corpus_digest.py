"""The corpus digest covers each passage's id, title and text, in order."""

from __future__ import annotations

import hashlib

from hopbench.data.corpus_digest import corpus_digest
from hopbench.data.schema import Passage

A, B = Passage("p1", "Title A", "text a"), Passage("p2", "Title B", "text b")


def test_the_digest_is_sha256_of_one_json_line_per_passage():
    expected = hashlib.sha256(b'["p1","Title A","text a"]\n["p2","Title B","text b"]\n')
    assert corpus_digest([A, B]) == "sha256:" + expected.hexdigest()


def test_order_title_and_text_each_change_it():
    digests = {
        corpus_digest([A, B]),
        corpus_digest([B, A]),
        corpus_digest([A, Passage("p2", "Title B", "text B")]),
        corpus_digest([A, Passage("p2", "Title b", "text b")]),
        corpus_digest([A]),
    }
    assert len(digests) == 5
    assert corpus_digest([A, B]) == corpus_digest([Passage("p1", "Title A", "text a"), B])
