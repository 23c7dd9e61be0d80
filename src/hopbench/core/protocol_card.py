"""The protocol card: what a reader of one row needs to know to compare it with another (issue #57).

Published numbers move by 5-20 points with the retrieval unit, the context budget, the recall
definition, the size of "the same" graph and the embedder. A run records them in metrics.json
(`protocol`, written by hopbench.harness.protocol_card); the report carries them as `card.*`
columns and flags a paired row whose card differs from its baseline's in anything but the
method. The card is metadata, never a setting: it is in no run hash.

Standard library only: the runner writes the card, the report reads it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Mapping

CARD_KEY = "protocol"  # the card's key in metrics.json
CARD_VERSION = 1
COLUMN_PREFIX = "card."
CARD_ID = "card_id"  # leaderboard column: a short digest of the shared fields
CARD_DIFFERS = "card_differs"  # leaderboard column: True when the baseline's card differs
CARD_DIFFERENCES = "card_differences"  # leaderboard column: which fields differ
NONE = "none"  # a role no step of the run plays (no LLM, no reader, no graph)

RECALL_DEFINITION = (
    "recall@k: share of a question's gold passages among the first k distinct passage ids "
    "returned; only questions whose gold passages are all in the corpus are scored"
)
DEFAULT_CHUNKING = "passages as given"

# Fields every pair of runs must share to be compared at all.
SHARED = (
    "retrieval_unit",
    "chunking",
    "corpus_digest",
    "question_set_digest",
    "n_questions",
    "n_retrieval_scored",
    "recall",
    "retrieval_depth",
    "embedder",
    "embedder_digest",
)
# Fields compared only when both runs have them: a method that calls no LLM (or reads with no
# reader) differs by its method, not by its protocol.
WHEN_BOTH = ("llm", "llm_digest", "reader_context")
# The counts of the graph a run read, in the order the card tables show them.
GRAPH_COUNTS = (
    "graph_entities",
    "graph_facts",
    "graph_passages",
    "graph_relation_edges",
    "graph_synonym_edges",
    "graph_context_edges",
)
# Fields that are the method's: recorded and shown, never a reason to flag a pair.
METHOD = ("llm_roles", "graph", *GRAPH_COUNTS)
FIELDS = SHARED + WHEN_BOTH + METHOD
GRAPH_COUNTS = FIELDS[-6:]


def flat_card(card: Mapping | None) -> dict:
    """The card as flat fields (FIELDS), from metrics.json's nested record; {} without a card."""
    if not isinstance(card, Mapping):
        return {}
    embedder = card.get("embedder") or {}
    llm = card.get("llm") or {}
    graph = card.get("graph") or {}
    out = {k: card.get(k) for k in SHARED if k not in ("embedder", "embedder_digest")}
    out["embedder"] = embedder.get("name")
    out["embedder_digest"] = embedder.get("digest")
    out["llm"] = llm.get("name") or NONE
    out["llm_digest"] = llm.get("digest")
    out["llm_roles"] = "+".join(llm.get("roles") or []) or NONE
    out["reader_context"] = card.get("reader_context") or NONE
    out["graph"] = graph.get("label") or NONE
    for k in GRAPH_COUNTS:
        out[k] = graph.get(k.removeprefix("graph_"))
    return out


def card_columns(card: Mapping | None) -> dict:
    """`card.<field>` -> value, and `card_id`: the columns a leaderboard row carries."""
    flat = flat_card(card)
    if not flat:
        return {CARD_ID: None}
    return {**{COLUMN_PREFIX + k: flat.get(k) for k in FIELDS}, CARD_ID: card_id(flat)}


def from_columns(row: Mapping) -> dict:
    """The flat card of a leaderboard row (its `card.*` columns); {} when it has none."""
    flat = {k: row.get(COLUMN_PREFIX + k) for k in FIELDS}
    return {} if all(_missing(v) for v in flat.values()) else flat


def card_id(flat: Mapping) -> str:
    """12 hex digits over the fields two compared rows share (SHARED and WHEN_BOTH): rows with
    one id are on one protocol."""
    shared = {k: _plain(flat.get(k)) for k in SHARED + WHEN_BOTH}
    text = json.dumps(shared, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


QUESTION_FIELDS = ("question_set_digest", "n_questions", "n_retrieval_scored")


def differences(flat: Mapping, base: Mapping) -> list[str]:
    """The fields in which a row's card differs from its baseline's, the method's own left out.

    Runs of different question counts are paired on the questions they share (the report's
    `n_paired`; the paper tables mark such a row † and show no difference), so their question
    fields are not a protocol difference; on the same count they must be the same questions."""
    subset = _plain(flat.get("n_questions")) != _plain(base.get("n_questions"))
    fields = [k for k in SHARED if not (subset and k in QUESTION_FIELDS)]
    out = [k for k in fields if _plain(flat.get(k)) != _plain(base.get(k))]
    for k in WHEN_BOTH:
        a, b = _plain(flat.get(k)), _plain(base.get(k))
        if a not in (None, NONE) and b not in (None, NONE) and a != b:
            out.append(k)
    return out


def missing_fields(flat: Mapping) -> list[str]:
    """The fields a complete card must have and this one lacks: every SHARED field; the LLM's
    digest when it has an LLM; the graph's counts when it read a graph."""
    if not flat:
        return ["(no card)"]
    out = [k for k in SHARED if _missing(flat.get(k))]
    if flat.get("llm") not in (None, NONE) and _missing(flat.get("llm_digest")):
        out.append("llm_digest")
    if flat.get("graph") not in (None, NONE):
        out += [k for k in GRAPH_COUNTS if _missing(flat.get(k))]
    return out


def coverage(flat: Mapping) -> str | None:
    """'863/1000': questions scored for retrieval of those asked."""
    n, scored = flat.get("n_questions"), flat.get("n_retrieval_scored")
    if _missing(n) or _missing(scored):
        return None
    return f"{int(scored)}/{int(n)}"


def _plain(v):
    """A cell as it compares: NaN and None alike, 2.0 and 2 alike (a parquet round trip)."""
    if _missing(v):
        return None
    if hasattr(v, "item"):  # numpy scalars from a table
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _missing(v) -> bool:
    """None, NaN, pandas' NA or an empty string."""
    if v is None:
        return True
    if isinstance(v, str):
        return v == ""
    try:
        return bool(v != v)
    except TypeError:  # pandas.NA: its comparisons are NA
        return True
