"""`hopbench kg-stats [overrides]`: what the knowledge graph of a dataset looks like.

hopbench kg-stats dataset=hotpotqa
hopbench kg-stats dataset=musique graph=llm llm=local --json
hopbench kg-stats dataset=musique graph=openie
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import connected_components

from hopbench.kg.graph import KnowledgeGraph


def graph_sizes(kg: KnowledgeGraph) -> dict:
    """The counts a run's protocol card records of its graph (hopbench.core.protocol_card): what
    "the same graph" must agree on before two methods on it are compared. Edges counted as
    `graph_stats` counts them (relation and synonym edges once per pair)."""
    return {
        "entities": kg.n_entities,
        "facts": kg.n_facts,
        "passages": kg.n_passages,
        "relation_edges": int(kg.relation.nnz // 2),
        "synonym_edges": int(kg.synonym.nnz // 2),
        "context_edges": int(kg.context.nnz),
    }


def graph_stats(kg: KnowledgeGraph, top: int = 10) -> dict:
    """Nodes and edges by type, degrees, components, isolated passages, hubs."""
    a = kg.adjacency()
    degree = np.diff(a.indptr)
    n_ent = kg.n_entities
    n_comp, labels = connected_components(a, directed=False)
    comp_sizes = np.bincount(labels)
    passages_per_comp = np.bincount(labels[n_ent:], minlength=n_comp)
    # a passage is isolated when no other passage can be reached from it
    isolated = [
        kg.passage_ids[j] for j in range(kg.n_passages) if passages_per_comp[labels[n_ent + j]] == 1
    ]
    ent_pass = kg.entity_passage_counts()
    rel_deg = np.diff(kg.relation.indptr)

    def dist(x: np.ndarray) -> dict:
        if len(x) == 0:
            return {}
        q = np.percentile(x, [50, 90, 99])
        return {
            "min": int(x.min()),
            "median": float(q[0]),
            "p90": float(q[1]),
            "p99": float(q[2]),
            "max": int(x.max()),
            "mean": float(x.mean()),
            "zeros": int((x == 0).sum()),
        }

    hubs = np.argsort(-ent_pass, kind="stable")[:top]
    out = {
        "nodes": {"entity": n_ent, "passage": kg.n_passages, "total": kg.n_nodes},
        "facts": kg.n_facts,
        "edges": {
            "relation": int(kg.relation.nnz // 2),
            "synonym": int(kg.synonym.nnz // 2),
            "context": int(kg.context.nnz),
        },
        "failed_passages": len(kg.failed_passages),
        "degree": {
            "entity": dist(degree[:n_ent]),
            "passage": dist(degree[n_ent:]),
            "entity_passages": dist(ent_pass),
            "entity_relation_degree": dist(rel_deg),
        },
        "components": {
            "count": int(n_comp),
            "largest": int(comp_sizes.max()) if n_comp else 0,
            "largest_passages": int(passages_per_comp.max()) if n_comp else 0,
            "singletons": int((comp_sizes == 1).sum()),
        },
        "isolated_passages": {"count": len(isolated), "examples": isolated[:top]},
        "top_hubs": [
            {
                "entity": kg.entity_names[i],
                "passages": int(ent_pass[i]),
                "relation_degree": int(rel_deg[i]),
                "synonyms": int(np.diff(kg.synonym.indptr)[i]),
            }
            for i in hubs
        ],
    }
    if kg.manifest.get("extraction_report"):  # graph=openie: how the file matched the corpus
        out["extraction_report"] = kg.manifest["extraction_report"]
    return out


def format_stats(s: dict) -> str:
    lines = [
        f"nodes:  {s['nodes']['entity']:,} entities + {s['nodes']['passage']:,} passages = {s['nodes']['total']:,}",
        f"facts:  {s['facts']:,}   failed passages: {s['failed_passages']}",
        "edges:  " + ", ".join(f"{k} {v:,}" for k, v in s["edges"].items()),
    ]
    lines.append("degree (min / median / p90 / p99 / max, mean):")
    for k, d in s["degree"].items():
        if d:
            lines.append(
                f"  {k:<24} {d['min']} / {d['median']:g} / {d['p90']:g} / {d['p99']:g} / {d['max']}, "
                f"mean {d['mean']:.2f}, zero {d['zeros']}"
            )
    c = s["components"]
    lines.append(
        f"components: {c['count']:,} (largest {c['largest']:,} nodes holding {c['largest_passages']:,} "
        f"passages; {c['singletons']:,} single nodes)"
    )
    iso = s["isolated_passages"]
    lines.append(
        f"isolated passages (reach no other passage): {iso['count']:,}"
        + (f"  e.g. {', '.join(iso['examples'][:5])}" if iso["examples"] else "")
    )
    if s.get("extraction_report"):
        from hopbench.kg.openie_file import summarize

        lines.append(summarize(s["extraction_report"]))
    lines.append("top hubs (passages, relation degree, synonyms):")
    for h in s["top_hubs"]:
        lines.append(
            f"  {h['entity'][:40]:<40} {h['passages']:>6} {h['relation_degree']:>6} {h['synonyms']:>5}"
        )
    return "\n".join(lines)
