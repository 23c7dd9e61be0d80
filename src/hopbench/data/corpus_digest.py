"""A digest of the corpus a run retrieved from, for its protocol card (hopbench.core.protocol_card).

Why: two runs "on MuSiQue" may not search the same passages (another file version, another
chunking); the dataset fingerprint covers the files but not what was read from them. The digest
covers each passage's id, title and text, in corpus order (ranks break ties by that order).
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable

from hopbench.data.schema import Passage


def corpus_digest(corpus: Iterable[Passage]) -> str:
    """'sha256:<hex>' of one canonical JSON line per passage, [id, title, text], in order."""
    h = hashlib.sha256()
    for p in corpus:
        line = json.dumps([p.id, p.title, p.text], ensure_ascii=False, separators=(",", ":"))
        h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return "sha256:" + h.hexdigest()
