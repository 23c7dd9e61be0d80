"""QAFD's answering pipeline as a retriever (flow_diffusion, flow_diffusion_bench; issue #32).

What the authors' pipeline does for a question (Tarzanagh/QAFD-RAG ``src/answering``,
docs/methods/qafd.md has every setting with its source):

1. keywords (``handler.py kg_query``): the LLM names high- and low-level keywords
   (`llm.prompts.qafd_keywords`, or the authors' prompt with ``prompts: official``); each list
   is joined with ", " into one query string;
2. per keyword string (``context.py``; mode ``hybrid`` = low-level first, then high-level;
   ``local`` = low-level only, ``global`` = high-level only): seeds = the `n_seeds` entities
   whose vector is closest to the string's vector (``entities_vdb.query(..., top_k=
   max_source_nodes)``);
3. the seeds' text units in the authors' order (`qafd_text_units`) are the passages;
4. one diffusion per seed (`kernels.qafd_seed_flow`), the clusters they form
   (``clusters.py``), which an LLM summarises for the answer: here the clusters (node ids
   and flow) go in the trace, and their summaries into the reader's context when the reader
   asks for them (``reader.context_extras``, `reader_context`).

The ranking is the units of the low-level seeds, then those of the high-level seeds (each
passage once), then the remaining passages by dense cosine to fill k. Scores: a unit scores
1 + the number of units after it (above every cosine), the fill its cosine.

Fallbacks, each recorded in ``trace["fallback"]``: no LLM configured, or a reply that never
matches the schema, or one without a keyword -> the question's spaCy phrases as low-level
keywords (``keywords: false`` asks for that on purpose and is not a fallback); no seed or no
unit -> the dense ranking.
"""

from __future__ import annotations

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, record_fallback
from hopbench.kg.graph import entity_node_id
from hopbench.retrieve.base import DESCRIPTION_ORDER, Retrieval, Retriever, Services
from hopbench.retrieve.qafd.seed_flow import (
    SeedFlowDiffusion,
    keep_cluster,
    node_norms_of,
    node_similarity,
)
from hopbench.retrieve.qafd.text_units import seed_text_units
from hopbench.retrieve.question import question_phrases
from hopbench.retrieve.run_checks import check_graph_matches, resolve_llm_switch
from hopbench.retrieve.text_vectors import TextVectors

MODES = ("hybrid", "local", "global")
PROMPTS = ("own", "official")
NODE_EMBEDDINGS = ("description", "name")
KEYWORD_FALLBACK = "question_phrases"  # fallback step: phrases instead of LLM keywords


class FlowDiffusionRetriever(Retriever):
    """QAFD's answering pipeline: LLM keywords -> seed entities -> their text units (module doc)."""

    family = "flow_diffusion"

    needs_graph = True

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
        mode: str = "hybrid",  # QueryParam.mode: hybrid | local | global
        n_seeds: int = 40,  # QueryParam.max_source_nodes (seeds per keyword string)
        alpha: float = 50.0,  # QueryParam.alpha: seed mass α·ΣT·(1 + confidence)
        min_flow_threshold: float = 0.1,  # QueryParam.min_flow_threshold: cluster kept if max x >= it
        confidence: float = 0.7,  # clusters.py: every seed's confidence
        epsilon: float = 0.02,  # flow_diffusion.py: excess tolerance
        step_size: float = 0.2,  # flow_diffusion.py: x += step·excess / Σw̄
        max_iterations: int = 500,  # flow_diffusion.py flow_diffusion()
        diffusion_seed: int = 42,  # flow_diffusion.py random_seed
        clusters: bool = True,  # run the per-seed diffusions (trace, reader context)
        keywords="auto",  # auto: LLM keywords when llm= is set; false: phrases
        prompts: str = "own",  # own | official (the authors' keyword prompt)
        official_src: str | None = None,  # checkout of Tarzanagh/QAFD-RAG (prompts=official)
        llm_name: str | None = None,
        node_embedding: str = "description",  # entity vectors for seeds and s_v
        relation_weight: float = 1.0,  # entity graph: w = relation x this + synonym x that
        synonym_weight: float = 0.0,  #   (LightRAG's graph has relation edges only)
        summary_batch: int = 10,  # QueryParam.batch_cluster_size
        summary_max_tokens: int = 512,
    ) -> None:
        if mode not in MODES:
            raise HopbenchError(f"retriever.mode must be one of {MODES}, got {mode!r}")
        if prompts not in PROMPTS:
            raise HopbenchError(f"retriever.prompts must be one of {PROMPTS}, got {prompts!r}")
        if node_embedding not in NODE_EMBEDDINGS:
            raise HopbenchError(f"retriever.node_embedding must be one of {NODE_EMBEDDINGS}")
        if n_seeds < 1 or summary_batch < 1:
            raise HopbenchError("retriever.n_seeds and retriever.summary_batch must be at least 1")
        self.mode, self.n_seeds, self.alpha = mode, n_seeds, alpha
        self.min_flow_threshold, self.confidence, self.epsilon = (
            min_flow_threshold,
            confidence,
            epsilon,
        )
        self.step_size, self.max_iterations, self.diffusion_seed = (
            step_size,
            max_iterations,
            diffusion_seed,
        )
        self.clusters, self.keywords, self.prompts = clusters, keywords, prompts
        self.official_src, self.llm_name, self.node_embedding = (
            official_src,
            llm_name,
            node_embedding,
        )
        self.relation_weight, self.synonym_weight = relation_weight, synonym_weight
        self.summary_batch, self.summary_max_tokens = summary_batch, summary_max_tokens
        self.use_llm = resolve_llm_switch(keywords, llm_name, "keywords", "flow_diffusion")
        if prompts == "official" and not official_src:
            raise HopbenchError(
                "retriever.prompts=official needs retriever.official_src: a checkout "
                "of Tarzanagh/QAFD-RAG (its prompt text is not shipped)"
            )
        self.needs_llm = self.use_llm
        self.official = None

    # ---- per graph ------------------------------------------------------------------------
    def prepare(self, kg, services: Services) -> None:
        check_graph_matches(kg, services)
        self.kg, self.services = kg, services
        self.entity_graph = (
            self.relation_weight * kg.relation + self.synonym_weight * kg.synonym
        ).tocsr()
        self.entity_graph.eliminate_zeros()
        self.entity_graph.sort_indices()
        ent = (
            kg.description_embeddings
            if self.node_embedding == "description"
            else kg.entity_embeddings
        )
        self.entity_emb = np.asarray(ent, dtype=np.float64)
        self.entity_norms = node_norms_of(self.entity_emb)  # once, not per keyword string
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        self.vectors = TextVectors(services.encoder)
        self.vectors.load_model()
        question_phrases("warm up")
        if self.prompts == "official":
            from hopbench.retrieve.qafd.prompts import official_qafd

            self.official = official_qafd.load(self.official_src)

    def _neighbours(self, e: int) -> np.ndarray:
        g = self.entity_graph
        return g.indices[g.indptr[e] : g.indptr[e + 1]]

    # ---- step 1: keywords -------------------------------------------------------------------
    def keywords_for(self, question, trace: dict) -> tuple[list[str], list[str]]:
        """(high-level, low-level) keywords; phrases as low-level ones when the LLM gives none."""
        if self.use_llm:
            from hopbench.llm.policy import fallback_on_bad_reply
            from hopbench.retrieve.qafd.prompts import qafd_keywords as kw

            msgs = (
                self.official.messages(question.text)
                if self.official
                else kw.messages(question.text)
            )
            calls: list = []
            high: list[str] = []
            low: list[str] = []
            with fallback_on_bad_reply(
                trace, kw.SCHEMA_NAME, instead="question phrases instead"
            ) as out:
                reply = self.services.llm.chat_json(
                    msgs, kw.SCHEMA, schema_name=kw.SCHEMA_NAME, max_tokens=192, trace=calls
                )
                high, low = kw.parse(reply)
            trace["llm_calls"] = calls
            if high or low:
                return high, low
            if not out.failed:
                record_fallback(
                    trace, kw.SCHEMA_NAME, "no keyword in the reply; question phrases instead"
                )
        elif self.keywords == "auto":
            record_fallback(
                trace, KEYWORD_FALLBACK, "no LLM configured: question phrases as keywords"
            )
        return [], question_phrases(question.text)

    # ---- step 2: seeds ------------------------------------------------------------------------
    def seeds_for(self, keyword_string: str) -> tuple[np.ndarray, np.ndarray]:
        """The n_seeds entities closest to the keyword string's vector (ties by index)."""
        v = np.asarray(self.vectors([keyword_string])[0], dtype=np.float64)
        score = self.entity_emb @ v
        top = np.lexsort((np.arange(len(score)), -score))[: self.n_seeds]
        return top, score[top]

    def _strings(self, high: list[str], low: list[str]) -> list[tuple[str, str]]:
        """(level, keyword string) in the order the pipeline reads them (context.py)."""
        out = []
        if self.mode in ("hybrid", "local") and low:
            out.append(("low", ", ".join(low)))
        if self.mode in ("hybrid", "global") and high:
            out.append(("high", ", ".join(high)))
        return out

    # ---- step 4: clusters ---------------------------------------------------------------------
    def seed_clusters(self, keyword_string: str, seeds: np.ndarray) -> list[dict]:
        """One diffusion per seed on the entity graph, s from the keyword string's vector."""
        q = self.vectors([keyword_string])[0]
        fd = SeedFlowDiffusion(
            self.entity_graph,
            node_similarity(self.entity_emb, q, self.entity_norms),
            alpha=self.alpha,
            confidence=self.confidence,
            epsilon=self.epsilon,
            step_size=self.step_size,
            max_iterations=self.max_iterations,
            seed=self.diffusion_seed,
        )
        names = self.kg.entity_names
        out = []
        for s in seeds:
            f = fd.run(int(s))
            out.append(
                {
                    "seed": entity_node_id(names[int(s)]),
                    "kept": keep_cluster(f, self.min_flow_threshold),
                    "nodes": [
                        [entity_node_id(names[int(v)]), float(x)] for v, x in zip(f.nodes, f.flow)
                    ],
                    "iterations": f.iterations,
                    "pushes": f.pushes,
                    "converged": f.converged,
                }
            )
        return out

    # ---- the ranking ---------------------------------------------------------------------------
    def retrieve(self, question, k: int) -> Retrieval:
        kg = self.kg
        q_emb = np.asarray(self.services.query_embedding(question), dtype=np.float64)
        dense = self.passage_emb @ q_emb
        trace: dict = {"mode": self.mode}
        units: list[int] = []
        if kg.n_entities:
            high, low = self.keywords_for(question, trace)
            trace["keywords"] = {"high_level": high, "low_level": low}
            levels = []
            for level, text in self._strings(high, low):
                seeds, score = self.seeds_for(text)
                got = seed_text_units(seeds, kg.passages_of_entity, self._neighbours)
                entry = {
                    "level": level,
                    "query": text,
                    "seeds": [
                        [entity_node_id(kg.entity_names[int(e)]), float(s)]
                        for e, s in zip(seeds, score)
                    ],
                    "units": [[kg.passage_ids[u.passage], u.order, u.relation_count] for u in got],
                }
                if self.clusters:
                    entry["clusters"] = self.seed_clusters(text, seeds)
                levels.append(entry)
                units += [u.passage for u in got]
            trace["levels"] = levels
        units = list(dict.fromkeys(units))
        if not units:
            record_fallback(
                trace, DENSE, "no seed text unit" if kg.n_entities else "graph has no entities"
            )
        trace["n_units"] = len(units)
        in_units = np.zeros(kg.n_passages, dtype=bool)
        in_units[units] = True
        rest = np.flatnonzero(~in_units)
        rest = rest[np.lexsort((rest, -dense[rest]))]
        order = units + rest.tolist()
        n = len(units)
        scores = [1.0 + (n - 1 - i) for i in range(n)] + [float(dense[i]) for i in rest]
        top = order[:k]
        return Retrieval([kg.passage_ids[i] for i in top], [float(s) for s in scores[:k]], trace)

    # ---- the reader's context (reader.context_extras) -----------------------------------------
    def reader_context(self, question, result: Retrieval, llm) -> list[str]:
        """The kept clusters' LLM summaries, low-level clusters first (clusters.py), batched by
        `summary_batch`; recorded in the trace as ``cluster_summaries``."""
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.qafd.prompts import qafd_clusters as qc

        kg = self.kg
        trace = result.trace
        if not self.clusters:
            raise HopbenchError(
                "reader.context_extras needs the clusters: set retriever.clusters=true"
            )
        kept = []
        for level in trace.get("levels", []):
            for c in level.get("clusters", []):
                if c["kept"]:
                    members = []
                    for node, flow in c["nodes"]:
                        e = kg.entity_index(node[len("e:") :])
                        members.append((kg.entity_labels[e], kg.entity_descriptions[e] or "", flow))
                    seed = kg.entity_index(c["seed"][len("e:") :])
                    kept.append((kg.entity_labels[seed], members))
        summaries: list[str] = []
        missing = 0
        calls: list = []
        for i in range(0, len(kept), self.summary_batch):
            batch = kept[i : i + self.summary_batch]
            text = ""
            with fallback_on_bad_reply(
                trace, "qafd_cluster_summary", instead="placeholder summaries"
            ):
                res = llm.chat(qc.messages(batch), max_tokens=self.summary_max_tokens * len(batch))
                calls.append({"chars": len(res.text or "")})
                text = res.text or ""
            for s in qc.parse(text, len(batch)):
                missing += s is None
                summaries.append(s or qc.MISSING)
        trace["cluster_summaries"] = summaries
        if missing:
            trace["cluster_summaries_missing"] = missing
        return summaries
