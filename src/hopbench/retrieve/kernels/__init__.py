"""Numeric kernels of the graph retrievers: pure functions over scipy CSR matrices and numpy
arrays, vectorised, each tested against an independent reference (tests/retrieve/kernels)."""

from hopbench.retrieve.kernels.flow import (
    QAFD_VARIANTS,
    FlowResult,
    degree_capacities,
    is_bounded,
    lazy_walk_warm_start,
    node_query_cosine,
    push_flow,
    qafd,
    query_aware_weights,
    similarity_transform,
    solve_flow_exact,
    source_mass,
)
from hopbench.retrieve.kernels.ppr import (
    PPRGraph,
    personalized_pagerank,
    personalized_pagerank_batch,
    prepare_ppr,
)
from hopbench.retrieve.kernels.spread import (
    GATE_MAX,
    Int8Rows,
    LazyGate,
    SpreadResult,
    semantic_gate,
    spreading_activation,
    spreading_activation_batch,
    unit_rows,
)

__all__ = [
    "QAFD_VARIANTS",
    "FlowResult",
    "PPRGraph",
    "GATE_MAX",
    "Int8Rows",
    "LazyGate",
    "SpreadResult",
    "degree_capacities",
    "is_bounded",
    "lazy_walk_warm_start",
    "node_query_cosine",
    "personalized_pagerank",
    "personalized_pagerank_batch",
    "prepare_ppr",
    "push_flow",
    "qafd",
    "query_aware_weights",
    "semantic_gate",
    "similarity_transform",
    "solve_flow_exact",
    "source_mass",
    "spreading_activation",
    "unit_rows",
    "spreading_activation_batch",
]
