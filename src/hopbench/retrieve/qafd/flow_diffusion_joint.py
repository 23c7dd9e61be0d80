"""hopbench's own QAFD variant (retriever flow_diffusion_joint): passages ranked by ONE joint diffusion.

No QAFD pipeline ranks passages this way: the authors' answering pipeline is
`flow_diffusion` (retrieve/qafd/flow_diffusion.py: the seed entities' text units), their
multi-hop code path is `flow_diffusion_code` (qafd_code.py). This retriever (until issue #32
the `flow_diffusion` config) reads the paper's formulas as a ranking: one diffusion from all
seeds at once, passage score = x at the passage node.

Settings (``variant: paper``, configs/retriever/flow_diffusion_joint.yaml): Hybrid weights
w̄ = H_uv·(1 + ¼(s_u + s_v)) with s = cos(node, question), T_v = deg(v), source mass
α·ΣT with α = 50 split evenly over N = 40 seeds. Seeds (Algorithm 1): score(v) =
max_i cos(h(w_i), h(v)) over the entities, w_i the question keywords: from the LLM when one
is configured (`keywords: auto`), else the question phrases (`question.
question_phrases`), else the question itself; the N best are the seeds. An LLM reply that
never matches its schema, or names no keyword, falls back to the question phrases, and a
question without seeds to the dense ranking; both are recorded in ``trace["fallback"]``.

This is hopbench's reading of the paper (docs/methods/qafd.md).

With α >= 1 the problem has no finite optimum (the source mass exceeds the capacity), so
the push loop stops after `max_pushes` node-pushes (the QAFD code's ``max_iterations = 500``); the
trace records `converged` (the ε rule met) and the pushes used. Passage score = x at the
passage node; passages with equal x (typically 0: not reached) follow by dense cosine.
"""

from __future__ import annotations

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, has_fallback, record_fallback
from hopbench.kg.graph import entity_node_id
from hopbench.retrieve.base import DESCRIPTION_ORDER, Retrieval, Retriever, Services
from hopbench.retrieve.hipporag.hipporag import HippoRAGSeeding
from hopbench.retrieve.qafd.flow import QAFD_VARIANTS, node_query_cosine, qafd
from hopbench.retrieve.question import question_phrases
from hopbench.retrieve.ranking import order_by, to_retrieval
from hopbench.retrieve.registry import build_nested, nested
from hopbench.retrieve.run_checks import check_graph_matches, resolve_llm_switch
from hopbench.retrieve.text_vectors import TextVectors

SEEDINGS = ("keywords", "hipporag")
NODE_EMBEDDINGS = ("description", "name")


def keyword_seeds(
    keyword_vecs: np.ndarray, entity_emb: np.ndarray, n_seeds: int
) -> tuple[np.ndarray, np.ndarray]:
    """QAFD Algorithm 1: score(v) = max_i cos(w_i, v); the n_seeds best entities (ties by index)."""
    score = (
        np.asarray(entity_emb, dtype=np.float64) @ np.asarray(keyword_vecs, dtype=np.float64).T
    ).max(axis=1)
    top = np.lexsort((np.arange(len(score)), -score))[:n_seeds]
    return top, score[top]


class JointFlowDiffusionRetriever(Retriever):
    """One query-aware flow diffusion from all seed entities; passages ranked by x (module docstring)."""

    family = "flow_diffusion"

    needs_graph = True
    hipporag_seeding_spec = nested(HippoRAGSeeding, method="hipporag2")

    @property
    def needs_descriptions(self) -> bool:
        return self.node_embedding == "description"

    @property
    def position_features(self) -> tuple[str, ...]:
        """Description vectors as node vectors read corpus order (base.DESCRIPTION_ORDER);
        entity names do not."""
        return (DESCRIPTION_ORDER,) if self.needs_descriptions else ()

    def __init__(
        self,
        *,
        variant: str = "paper",  # kernel settings (kernels.flow.QAFD_VARIANTS): paper
        alpha: float = 50.0,  # source mass α·ΣT; α >= 1 has no finite optimum,
        #   hence max_pushes
        n_seeds: int = 40,
        epsilon: float = 0.01,
        max_pushes: int | None = 500,  # the QAFD code's max_iterations; trace.converged
        #   says if ε was met first
        seeding: str = "keywords",  # keywords (Algorithm 1) | hipporag (HippoRAG 2's
        #   reset as seed weights)
        keywords="auto",  # LLM keywords when llm= is set; else question phrases
        llm_name: str | None = None,
        node_embedding: str = "description",  # entity vectors for seeds and s_v: description | name
        relation_weight: float = 1.0,  # H_uv = stored edge weight x these multipliers
        synonym_weight: float = 1.0,
        context_weight: float = 1.0,
        uniform_seed_mass: bool = True,  # paper: Δ split evenly over the seeds; false: by seed score
        hipporag_seeding=hipporag_seeding_spec,  # HippoRAGSeeding's settings, one nested
        #   node, used with `seeding: hipporag`
    ) -> None:
        if variant not in QAFD_VARIANTS:
            raise HopbenchError(
                f"retriever.variant must be one of {sorted(QAFD_VARIANTS)}, got {variant!r}"
            )
        if seeding not in SEEDINGS:
            raise HopbenchError(f"retriever.seeding must be one of {SEEDINGS}, got {seeding!r}")
        if node_embedding not in NODE_EMBEDDINGS:
            raise HopbenchError(f"retriever.node_embedding must be one of {NODE_EMBEDDINGS}")
        if alpha >= 1 and max_pushes is None:
            raise HopbenchError(
                f"retriever.alpha={alpha} puts more mass in than the graph can absorb, so "
                "the push loop never meets ε: set retriever.max_pushes (code: 500)"
            )
        self.variant, self.alpha, self.n_seeds, self.epsilon = variant, alpha, n_seeds, epsilon
        self.max_pushes, self.seeding, self.node_embedding = max_pushes, seeding, node_embedding
        self.keywords, self.llm_name = keywords, llm_name
        self.relation_weight, self.synonym_weight = relation_weight, synonym_weight
        self.context_weight = context_weight
        self.uniform_seed_mass = uniform_seed_mass
        self.use_keywords_llm = seeding == "keywords" and resolve_llm_switch(
            keywords, llm_name, "keywords", "flow_diffusion_joint"
        )
        self.hipporag_seeding = (
            build_nested(
                hipporag_seeding, self.hipporag_seeding_spec, "hipporag_seeding", llm_name=llm_name
            )
            if seeding == "hipporag"
            else None
        )
        self.needs_llm = self.use_keywords_llm or (
            self.hipporag_seeding is not None and self.hipporag_seeding.needs_llm
        )

    def prepare(self, kg, services: Services) -> None:
        check_graph_matches(kg, services)
        self.kg, self.services = kg, services
        self.adjacency = kg.adjacency(
            relation=self.relation_weight, synonym=self.synonym_weight, context=self.context_weight
        )
        ent = (
            kg.description_embeddings
            if self.node_embedding == "description"
            else kg.entity_embeddings
        )
        self.entity_emb = np.asarray(ent, dtype=np.float64)
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        self.node_emb = np.concatenate([self.entity_emb, self.passage_emb])
        self.vectors = TextVectors(services.encoder)
        if self.hipporag_seeding is not None:
            self.hipporag_seeding.prepare(kg, services)
        else:  # load spaCy and the encoder outside any timed retrieval
            self.vectors.load_model()
            question_phrases("warm up")

    def _keywords(self, question, trace: dict) -> list[str]:
        if self.use_keywords_llm:
            from hopbench.llm.policy import fallback_on_bad_reply
            from hopbench.retrieve.qafd.prompts import keywords as kw

            calls: list = []
            words: list[str] = []
            with fallback_on_bad_reply(
                trace, kw.SCHEMA_NAME, instead="question phrases instead"
            ) as out:
                reply = self.services.llm.chat_json(
                    kw.messages(question.text),
                    kw.SCHEMA,
                    schema_name=kw.SCHEMA_NAME,
                    max_tokens=96,
                    trace=calls,
                )
                words = list(dict.fromkeys(w.strip() for w in reply["keywords"] if w.strip()))
            trace["llm_calls"] = calls
            if words:
                return words
            if not out.failed:
                record_fallback(
                    trace, kw.SCHEMA_NAME, "no keyword in the reply; question phrases instead"
                )
        return question_phrases(question.text)

    def seeds(self, question, trace: dict) -> tuple[np.ndarray, np.ndarray | None] | None:
        """(seed node indices, weights or None for an even split), or None for dense fallback."""
        if self.seeding == "hipporag":
            reset, _, htrace = self.hipporag_seeding.reset_vector(question)
            trace.update({k: v for k, v in htrace.items() if k not in ("seeding",)})
            if reset is None:
                return None
            idx = np.flatnonzero(reset > 0)
            return idx, reset[idx]
        words = self._keywords(question, trace)
        trace["keywords"] = words
        vecs = (
            self.vectors(words)
            if words
            else np.asarray(self.services.query_embedding(question))[None, :]
        )
        idx, score = keyword_seeds(vecs, self.entity_emb, self.n_seeds)
        trace["seeds"] = [
            [entity_node_id(self.kg.entity_names[e]), float(s)] for e, s in zip(idx, score)
        ]
        return idx, None if self.uniform_seed_mass else np.maximum(score, 0.0)

    def retrieve(self, question, k: int) -> Retrieval:
        kg = self.kg
        q_emb = np.asarray(self.services.query_embedding(question), dtype=np.float64)
        dense = self.passage_emb @ q_emb
        trace: dict = {"variant": self.variant, "seeding": self.seeding}
        seeds = self.seeds(question, trace) if kg.n_entities else None
        if seeds is None or seeds[0].size == 0:
            if not has_fallback(trace, DENSE):  # HippoRAG seeding records its own reason
                record_fallback(
                    trace, DENSE, "no seed entity" if kg.n_entities else "graph has no entities"
                )
            return to_retrieval(kg.passage_ids, order_by(dense, dense), dense, k, trace)
        idx, weights = seeds
        res = qafd(
            self.adjacency,
            node_query_cosine(self.node_emb, q_emb),
            idx,
            weights,
            variant=self.variant,
            alpha=self.alpha,
            epsilon=self.epsilon,
            max_pushes=self.max_pushes,
        )
        x = res.x[kg.n_entities :]
        trace.update(
            {
                "converged": bool(res.converged),
                "pushes": res.pushes,
                "sweeps": res.sweeps,
                "excess": res.excess,
                "stuck_excess": res.stuck_excess,
                "support": int((res.x > 0).sum()),
                "passages_reached": int((x > 0).sum()),
            }
        )
        return to_retrieval(kg.passage_ids, order_by(x, dense), x, k, trace)
