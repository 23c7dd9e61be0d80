"""Summaries of QAFD's per-seed flow clusters, for the reader's context (flow_diffusion).

Design from QAFD-RAG ``summarize_clusters_batch_with_llm`` (``src/answering/clusters.py``):
several clusters per request (``batch_cluster_size`` 10), each given as its source entity and
its entities with type, description and flow strength (largest flow first); the model
answers with one line per cluster, ``Cluster <i>: <summary>``, which is how the reply is
split. Our own wording. A cluster the reply does not cover gets a placeholder (MISSING), as
the code puts one there, counted in the trace.
"""

from __future__ import annotations

import re
from typing import Sequence

from hopbench.llm.prompts import chat

MISSING = "(no summary for this cluster)"

SYSTEM = (
    "You describe groups of related entities from a knowledge graph. Each group grew from one "
    "source entity; its members are listed with a flow strength (higher = more closely tied "
    "to the source and to the question). For every group write one or two sentences: what "
    "links the members, what the group is about, and how the source entity connects to the "
    "others. Answer with one line per group, in the form 'Cluster <number>: <summary>', and "
    "nothing else."
)


def cluster_block(i: int, source: str, members: Sequence[tuple[str, str, float]]) -> str:
    """members: (name, description, flow), largest flow first."""
    lines = [f"Cluster {i}:", f"Source entity: {source}", "Members:"]
    lines += [f"- {name}: {desc} (flow strength: {flow:.3f})" for name, desc, flow in members]
    return "\n".join(lines)


def messages(clusters: Sequence[tuple[str, Sequence[tuple[str, str, float]]]]) -> list[dict]:
    body = "\n\n".join(
        cluster_block(i, src, members) for i, (src, members) in enumerate(clusters, 1)
    )
    return chat(SYSTEM, body)


_LINE = re.compile(r"^\s*\**\s*Cluster\s+(\d+)\s*\**\s*:\s*(.*)$", re.IGNORECASE)


def parse(text: str, n: int) -> list[str | None]:
    """The n summaries by cluster number (None where the reply has none). A line that does not
    start a cluster continues the previous one, as the code joins them."""
    out: dict[int, str] = {}
    current = None
    for line in (text or "").splitlines():
        m = _LINE.match(line)
        if m:
            current = int(m.group(1))
            out[current] = m.group(2).strip()
        elif current is not None and line.strip():
            out[current] = (out[current] + " " + line.strip()).strip()
    return [out.get(i) or None for i in range(1, n + 1)]
