"""Assemble the one-round-trip spreading-activation Cypher from the templates in `queries/`.

The query is seeds -> `depth` copies of the propagation block -> passage ranking, as in the QASA
reference (`qasa_retriever.py` concatenates its propagation block ``max_steps`` times). Two
forms compute the same numbers:

* ``apoc``: the paper's form; the state is one map (``apoc.map.fromPairs`` / ``apoc.map.merge``);
* ``portable``: plain Cypher for servers without APOC; the state is two lists sorted by
  entity index, looked up by binary search and merged by an ordered aggregation.

Only fixed fragments of this package are pasted together, plus the graph's namespace labels
and index names (`hopbench.graphdb.namespace`: checked hex ids, never user text); everything
that comes from the question (mention names, vectors) or the configuration (decay, threshold,
k) is a parameter.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.namespace import Namespace

FORMS = ("apoc", "portable")


@cache
def template(name: str) -> str:
    """The text of `queries/<name>.cypher` (package data)."""
    return (resources.files("hopbench.graphdb") / "queries" / f"{name}.cypher").read_text(
        encoding="utf-8"
    )


EDGE_WEIGHTS = {"pairs": "pairs", "facts": "count"}  # retriever.edges -> RELATES_TO property


GATE_FUNCTIONS = ("native", "exact")
# rows per node path in the authors' schema (one RELATES_TO per ordered pair): the product of r.pairs
PATH_COPIES = {
    "pairs": "reduce(m = 1, r IN relationships(path) | m * toInteger(r.pairs))",
    "facts": "1",
}


def spreading_activation_query(
    form: str,
    depth: int,
    gate: bool,
    namespace: Namespace,
    edges: str = "pairs",
    gate_function: str = "native",
    paths: bool = True,
) -> str:
    """The full query for `form`, `depth` propagation steps, with or without the semantic gate,
    over the graph in `namespace` (its labels and vector indexes; see `ExportReport.namespace`).

    `edges` picks the RELATES_TO weight (`EDGE_WEIGHTS`: a fixed property name, never user text).
    `gate_function`: ``native`` (the authors' query: Neo4j's built-in vector.similarity.cosine,
    float32) or ``exact`` (float64 dot product in Cypher, the in-memory kernel's floats).
    `paths`: the authors' path block (top $top_paths rows) before the ranking; the row's
    ``paths`` is [] without it.
    Parameters it expects: mentions [{name, emb}], k_per_mention, vector_candidates, vector_rerank,
    seed_index, seed_norm_all, qe, qe_norm,
    decay, threshold, tie_factor (kernels.spread.TIE_FACTOR), k, dense_candidates, and for the
    portable form search_steps.
    """
    if form not in FORMS:
        raise HopbenchError(f"retriever.form must be one of {', '.join(FORMS)}, got {form!r}")
    if not isinstance(depth, int) or depth < 0:
        raise HopbenchError(f"retriever.depth must be an integer >= 0, got {depth!r}")
    if gate_function not in GATE_FUNCTIONS:
        raise HopbenchError(
            f"retriever.gate_function must be one of {', '.join(GATE_FUNCTIONS)}, "
            f"got {gate_function!r}"
        )
    gate_name = "sa_incoming_gate" + ("_native" if gate_function == "native" else "")
    incoming = template(gate_name if gate else "sa_incoming_nogate").rstrip("\n")
    if edges not in EDGE_WEIGHTS:
        raise HopbenchError(
            f"retriever.edges must be one of {', '.join(EDGE_WEIGHTS)}, got {edges!r}"
        )
    step = (
        template(f"sa_step_{form}")
        .replace("{{INCOMING}}", incoming)
        .replace("{{EDGE_WEIGHT}}", EDGE_WEIGHTS[edges])
    )
    rank = (
        template(f"sa_rank_{form}")
        .replace("{{RANK}}", template("sa_rank_scored").rstrip("\n"))
        .replace("{{FILL}}", template("sa_rank_fill").rstrip("\n"))
    )
    if not isinstance(namespace, Namespace):
        raise HopbenchError(f"spreading_activation_query needs a Namespace, got {namespace!r}")
    path_block = (
        template(f"sa_paths_{form}").replace("{{PATH_COPIES}}", PATH_COPIES[edges])
        if paths
        else "WITH *, [] AS paths\n"
    )
    return namespace.cypher(
        "\n".join(
            [template("sa_seeds"), template(f"sa_init_{form}"), *([step] * depth), path_block, rank]
        )
    )
