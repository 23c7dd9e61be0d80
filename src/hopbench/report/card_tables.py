"""The protocol cards under a paper table: which card each row is on, and what the card says.

Why: a reader of one row must see its protocol (retrieval unit, corpus, questions scored, recall
definition, embedder, LLM, reader budget, graph size) without opening metrics.json, and must
see when two compared rows are not on one protocol. Built from the leaderboard's `card.*`
columns (hopbench.core.protocol_card); rows of tables written before runs recorded a card are
named as such, never given a made-up one.
"""

from __future__ import annotations

import pandas as pd

from hopbench.core.protocol_card import (
    CARD_DIFFERENCES,
    CARD_DIFFERS,
    CARD_ID,
    GRAPH_COUNTS,
    NONE,
    coverage,
    from_columns,
    missing_fields,
)
from hopbench.report.markdown import DASH, DIFFERENT_CARD, _table
from hopbench.report.table_params import is_missing

SHORT = 12  # hex digits of a digest shown


def short_digest(value) -> str:
    """'sha256:90c08e40eeb5' for a long digest; other values as they are."""
    if is_missing(value):
        return DASH
    text = str(value)
    algo, sep, hexpart = text.partition(":")
    if sep and len(hexpart) > SHORT and algo in ("sha256", "xxh3_128"):
        return f"{algo}:{hexpart[:SHORT]}"
    return text


def row_card(row) -> str:
    """A table cell: the row's card id, DASH when it has none."""
    value = row.get(CARD_ID)
    return DASH if is_missing(value) else str(value)


def differs(row) -> bool:
    """The row is paired with a baseline whose card differs (unknown counts as not)."""
    value = row.get(CARD_DIFFERS)
    return not is_missing(value) and bool(value)


def _cell(value) -> str:
    """A card field as shown: counts as integers (a column with gaps holds them as floats)."""
    if is_missing(value) or value == NONE:
        return DASH
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _llm(flat: dict, roles: set[str]) -> str:
    if is_missing(flat.get("llm")) or flat.get("llm") == NONE:
        return DASH
    shown = f"{flat['llm']} ({short_digest(flat.get('llm_digest'))})"
    return shown + (f"; {', '.join(sorted(roles))}" if roles else "")


def card_rows(df: pd.DataFrame) -> list[dict]:
    """One line per card id among the rows, in the order first met."""
    lines: dict[str, dict] = {}
    roles: dict[str, set[str]] = {}
    for _, r in df.iterrows():
        flat = from_columns(r)
        cid = r.get(CARD_ID)
        if not flat or is_missing(cid):
            continue
        roles.setdefault(cid, set()).update(
            x for x in str(flat.get("llm_roles") or "").split("+") if x and x != NONE
        )
        lines.setdefault(cid, flat)
    out = []
    for cid, flat in lines.items():
        embedder = f"{_cell(flat.get('embedder'))} ({short_digest(flat.get('embedder_digest'))})"
        out.append(
            {
                "card": cid,
                "unit": _cell(flat.get("retrieval_unit")),
                "chunking": _cell(flat.get("chunking")),
                "corpus": short_digest(flat.get("corpus_digest")),
                "questions": short_digest(flat.get("question_set_digest")),
                "scored": coverage(flat) or DASH,
                "depth": _cell(flat.get("retrieval_depth")),
                "embedder": embedder,
                "LLM": _llm(flat, roles.get(cid, set())),
                "reader context": _cell(flat.get("reader_context")),
                "recall": _cell(flat.get("recall")),
                "complete": "yes" if not missing_fields(flat) else "no",
            }
        )
    return out


def graph_rows(df: pd.DataFrame) -> list[dict]:
    """One line per graph build (label and counts) the rows read."""
    seen: dict[tuple, dict] = {}
    for _, r in df.iterrows():
        flat = from_columns(r)
        if not flat or flat.get("graph") in (None, NONE):
            continue
        counts = tuple(_cell(flat.get(k)) for k in GRAPH_COUNTS)
        seen.setdefault(
            (str(flat["graph"]), counts),
            {
                "graph": str(flat["graph"]),
                "entities": counts[0],
                "facts": counts[1],
                "passages": counts[2],
                "relation edges": counts[3],
                "synonym edges": counts[4],
                "context edges": counts[5],
            },
        )
    return list(seen.values())


def cards_section(df: pd.DataFrame) -> str:
    """The cards and graph builds of one dataset's rows, and the rows without a card."""
    cards = card_rows(df)
    out = ""
    if cards:
        recalls = {c["recall"] for c in cards}
        cols = [c for c in cards[0] if c != "recall" or len(recalls) > 1]
        out += "\n**Protocol cards** (`card` column above; docs/results.md):\n\n" + _table(
            cards, cols
        )
        if len(recalls) == 1:
            out += f"\nRecall, every card: {next(iter(recalls))}.\n"
    graphs = graph_rows(df)
    if graphs:
        out += "\n**Graph builds** read by these rows:\n\n" + _table(graphs, list(graphs[0]))
    lacking = [
        f"{r['retriever']} {r['config_hash']}"
        for _, r in df.iterrows()
        if is_missing(r.get(CARD_ID))
    ]
    if lacking and len(lacking) == len(df):
        out += (
            "\nNo row here has a protocol card: they were written before runs recorded one "
            "(rerunning them adds it).\n"
        )
    elif lacking:
        out += (
            "\nWithout a protocol card (written before runs recorded one; rerun to add it): "
            + ", ".join(lacking)
            + ".\n"
        )
    flagged = [
        f"{r['retriever']} {r['config_hash']} ({r.get(CARD_DIFFERENCES)})"
        for _, r in df.iterrows()
        if differs(r)
    ]
    if flagged:
        out += (
            f"\n{DIFFERENT_CARD} paired with a baseline on another protocol (the card fields that "
            "differ): " + ", ".join(flagged) + ".\n"
        )
    return out
