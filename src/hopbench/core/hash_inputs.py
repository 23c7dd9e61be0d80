"""The one rule for a setting added after hashes existed: it enters a hash only while its value
differs from the default it had, so everything hashed before it keeps its key.

Every content address (run hash, dataset fingerprint, graph and extraction keys) applies the rule
through `omit_defaults`, with the defaults it declares beside it, instead of an `if` of its own.
"""

from __future__ import annotations

from collections.abc import Mapping


def omit_defaults(values: Mapping, defaults: Mapping) -> dict:
    """`values` without the keys of `defaults` whose value is that default (compared by ==,
    with its type: True is not 1); keys `defaults` does not name are kept as they are."""
    return {
        k: v
        for k, v in values.items()
        if not (k in defaults and type(v) is type(defaults[k]) and v == defaults[k])
    }
