"""`flow_diffusion_code`: QAFD as its authors' retrieval code computes it (docs/methods/qafd.md).

Tarzanagh/QAFD-RAG ``src/passage_entity/retriever.py`` (``_graph_search``), the pipeline of
their 2Wiki log: HippoRAG 2's seeds on HippoRAG 2's graph (graph.construction=hipporag2),
with ``linking_top_k = 10`` candidate facts, the fact filter (on when an LLM is configured),
the 10 best entities and 0.05 x min-max dense on every passage; then ``IGraphQAFD`` (the push
loop of kernels/qafd_code.py) with ``config.py``'s settings (α = 2, ε = 0.01, 500 iterations,
"multiply" weights, step 0.2, seed 42); passages by x at their node, in the code's order.

Where their retriever departs from HippoRAG 2: a filter that keeps no fact gives the
candidate facts unfiltered (not the dense ranking); that is recorded in ``trace["fallback"]``
(step ``fact_filter``). The dense ranking is used only when no seed weight is left.
"""

from __future__ import annotations

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, has_fallback, record_fallback
from hopbench.kg.hipporag2_igraph import hipporag2_multigraph
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.hipporag.hipporag import HippoRAGSeeding
from hopbench.retrieve.qafd.code_push import code_flow_diffusion, rank_passages
from hopbench.retrieve.ranking import order_by, to_retrieval
from hopbench.retrieve.registry import build_nested, nested

# QAFD-RAG's IGraphQAFD also has "add" and "original" (hybrid); kernels/qafd_code.py computes
# "multiply" only, the scheme of config.py at 17e5372 that the parity benchmark compared.
WEIGHT_SCHEMES = ("multiply",)


class QAFDCodeRetriever(Retriever):
    """HippoRAG 2 seeds -> the code's push loop -> passages by x (module docstring)."""

    family = "flow_diffusion"

    needs_graph = True
    needs_descriptions = False
    seeding_spec = nested(HippoRAGSeeding, method="hipporag2")  # HippoRAG 2's seeds, held
    # added after the reference runs, with the only value they had: out of the config (and the
    # run hash) unless a YAML sets it, so those runs keep their hash (registry.Configurable)
    unlisted = ("weight_scheme",)
    # The push loop draws its next node with a seeded random.choice over node indices, as the
    # authors' code does; the corpus order numbers the nodes, so it picks the push order
    # (tests/retrieve/test_order_invariance.py measured the move)
    position_features = ("push_order",)

    def __init__(
        self,
        *,
        alpha: float = 2.0,  # config.py qafd_alpha: source mass α·ΣT
        epsilon: float = 0.01,  # qafd_epsilon: a node pushes while mass > T + ε
        max_iterations: int = 500,  # qafd_max_iterations (iterations, one push each)
        step_size: float = 0.2,  # qafd_step_size: x_v += step·excess / Σ w
        threshold: float = 1e-5,  # IGraphQAFD: seed weights below it are dropped
        warm_steps: int = 2,  # qa_warm_steps: lazy-walk warm start of x
        random_seed: int = 42,  # qafd_random_seed: reseeded for every question
        weight_scheme: str = "multiply",  # qafd_weight_scheme: w̄ = w·s_u·s_v (the parity
        #   worker passes this value to the authors' call, so a mismatch fails parity)
        graph_construction: str = "hipporag2",  # the graph the code walks
        llm_name: str
        | None = None,  # configs pass ${llm.name}: the seeding's `filter: auto` sees it
        seeding=seeding_spec,  # HippoRAGSeeding's settings, one nested node (the config sets
        #   QAFD-RAG's linking_top_k 10 and top_phrases 10)
    ) -> None:
        if weight_scheme not in WEIGHT_SCHEMES:
            raise HopbenchError(
                f"retriever.weight_scheme must be one of {WEIGHT_SCHEMES} (the schemes "
                f"hopbench's kernel computes), got {weight_scheme!r}"
            )
        self.llm_name = llm_name
        self.seeding = build_nested(seeding, self.seeding_spec, "seeding", llm_name=llm_name)
        self.seeding.fact_filter = self._filter
        self.needs_llm = self.seeding.needs_llm
        self.weight_scheme = weight_scheme
        self.alpha, self.epsilon, self.max_iterations = alpha, epsilon, max_iterations
        self.step_size, self.threshold, self.warm_steps = step_size, threshold, warm_steps
        self.random_seed, self.graph_construction = random_seed, graph_construction

    def prepare(self, kg, services: Services) -> None:
        self.seeding.prepare(kg, services)
        self.kg, self.services = kg, services
        self.graph = hipporag2_multigraph(kg)
        self.node_emb = np.concatenate(
            [
                np.asarray(kg.entity_embeddings, dtype=np.float32),
                np.asarray(services.passage_embeddings, dtype=np.float32),
            ]
        )

    def _filter(self, question: str, candidates: np.ndarray, trace: dict) -> np.ndarray:
        kept = self.seeding.llm_filter(question, candidates, trace)
        if kept.size == 0:  # retriever.py: "Reranker rejected all facts -> use top facts by score"
            record_fallback(
                trace,
                "fact_filter",
                "no fact kept: the candidate facts unfiltered (QAFD-RAG's retriever)",
            )
            return candidates
        return kept

    def diffuse(self, reset: np.ndarray, q: np.ndarray):
        """The authors' push loop from `reset` with this config's settings (also what the parity
        benchmark times, so both run the same call)."""
        return code_flow_diffusion(
            self.graph,
            reset,
            self.node_emb,
            q,
            alpha=self.alpha,
            epsilon=self.epsilon,
            max_iterations=self.max_iterations,
            step_size=self.step_size,
            threshold=self.threshold,
            warm_steps=self.warm_steps,
            seed=self.random_seed,
        )

    def retrieve(self, question, k: int) -> Retrieval:
        reset, dense, trace = self.seeding.reset_vector(question)
        trace["variant"] = "code"
        if reset is None:
            if not has_fallback(trace, DENSE):
                record_fallback(trace, DENSE, "no seed")
            return to_retrieval(self.kg.passage_ids, order_by(dense, dense), dense, k, trace)
        q = np.asarray(self.services.query_embedding(question), dtype=np.float32)
        res = self.diffuse(reset, q)
        order, scores = rank_passages(res.x[self.kg.n_entities :])
        trace.update(
            {
                "converged": res.converged,
                "iterations": res.iterations,
                "pushes": res.pushes,
                "seed_nodes": res.seeds,
            }
        )
        return to_retrieval(self.kg.passage_ids, order, scores, k, trace)
