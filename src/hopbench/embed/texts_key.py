"""The embedding cache's file name: one digest of an encoder's identity and the texts in order.

Shared by the local encoder and the embedding-server client, so a change to how texts are keyed
is made once; the identities differ (model, backend, server and instruction), so the two never
share a file by accident.
"""

from __future__ import annotations

import hashlib
from typing import Sequence


def texts_key(identity: str, texts: Sequence[str], alone: bool = False) -> str:
    """sha256 of `identity` (with `|alone` when each text is encoded on its own) and each text
    after a NUL byte; lone surrogates are kept (surrogatepass), so any str has a key."""
    h = hashlib.sha256((identity + ("|alone" if alone else "")).encode())
    for t in texts:
        h.update(b"\x00")
        h.update(t.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
