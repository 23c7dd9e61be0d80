"""HippoRAG 2 (docs/methods/hipporag.md): recognition memory over facts, then Personalized PageRank.

Per question (OSU-NLP-Group/HippoRAG ``HippoRAG.py``, ``graph_search_with_fact_entities``):

1. fact scores = min-max over all facts of cos(fact embedding, question embedding); the
   top `linking_top_k` (5) facts are the candidates;
2. with the filter on (an LLM configured), the LLM keeps up to 4 of them
   (`hopbench.retrieve.hipporag.prompts.fact_filter`); if none survive (or the graph has no facts) the
   ranking is plain dense retrieval; a reply that never matches the filter's schema keeps no
   fact, as HippoRAG's ``rerank_facts`` does on an error (both recorded in
   ``trace["fallback"]``; a server that cannot be reached aborts: `hopbench.llm.policy`);
3. phrase seeds: each kept fact adds score / (number of passages mentioning the entity) to
   its subject and to its object; each entity's sum is divided by its number of
   occurrences (an average); only the `top_phrases` (5) heaviest entities keep their weight;
4. every passage node gets `passage_node_weight` (0.05) x min-max(dense cosine);
5. PPR (damping 0.5) on the undirected graph with HippoRAG's effective weights
   (2 x fact count on relation edges, 2 x cosine on synonym edges, 1 on context edges:
   HippoRAG adds each relation and synonym pair in both directions of an undirected graph);
   passages ranked by their PPR score (ties by dense cosine).

The graph: `retriever.graph_construction` says which construction the retriever is run on, and
``graph.construction`` follows it (configs/graph/*.yaml). ``retriever=hipporag`` asks for
``hipporag2``, the graph HippoRAG 2's code builds from the same triples (`hopbench.kg.hipporag2`:
triple entities only, facts deduplicated over the corpus and embedded as the tuple's string,
edge weights as its igraph's), so with the same triples and embeddings it ranks as the
official package does (benchmarks/parity/hipporag/compare.py). ``retriever=hipporag_hb`` is
the same retrieval on hopbench's construction (`hopbench.kg.assembly`: title and NER entities as
nodes, a fact per passage embedded as "s r o"). A graph of another construction than the one
asked for is refused (`prepare`).

Variant ``seeding.method: hipporag1`` (HippoRAG 1's query-to-node linking with node specificity):
each question mention (`question.question_mentions`) is linked to the entity whose
name embedding is nearest, which gets weight 1 / (number of passages mentioning it); the
passage reset and PPR are as above. No fact step, so no LLM.
"""

from __future__ import annotations

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, record_fallback
from hopbench.kg.graph import entity_node_id
from hopbench.kg.linking import nearest_entities
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.kernels.ppr import prepare_ppr
from hopbench.retrieve.kernels.ppr_block import personalized_pagerank_block
from hopbench.retrieve.kernels.ppr_stop import check_stop, ppr_scores
from hopbench.retrieve.kernels.screened import ScreenedRows
from hopbench.retrieve.question import question_mentions
from hopbench.retrieve.ranking import min_max, order_by, to_retrieval
from hopbench.retrieve.registry import Configurable, build_nested, nested
from hopbench.retrieve.run_checks import check_graph_matches, resolve_llm_switch
from hopbench.retrieve.text_vectors import TextVectors

SEEDINGS = ("hipporag2", "hipporag1")


# ---- pure steps ---------------------------------------------------------------------------
def fact_scores(fact_embeddings: np.ndarray, query_emb: np.ndarray) -> np.ndarray:
    """min-max normalised cos(fact, question) over all facts."""
    if len(fact_embeddings) == 0:
        return np.zeros(0)
    return min_max(
        np.asarray(fact_embeddings, dtype=np.float64) @ np.asarray(query_emb, dtype=np.float64)
    )


def top_facts(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k best facts, best first (ties by index)."""
    return np.lexsort((np.arange(len(scores)), -scores))[:k]


def phrase_seed_weights(
    facts: np.ndarray,
    scores: np.ndarray,
    fact_subject: np.ndarray,
    fact_object: np.ndarray,
    passage_counts: np.ndarray,
    top_phrases: int,
) -> np.ndarray:
    """(E,) entity reset weights from the kept facts (step 3 of the module docstring)."""
    n = len(passage_counts)
    w = np.zeros(n)
    occurs = np.zeros(n)
    for f in facts:
        for e in (int(fact_subject[f]), int(fact_object[f])):
            c = passage_counts[e]
            w[e] += scores[f] / c if c > 0 else scores[f]
            occurs[e] += 1
    hit = occurs > 0
    w[hit] /= occurs[hit]
    if top_phrases and np.count_nonzero(w) > top_phrases:
        keep = np.lexsort((np.arange(n), -w))[:top_phrases]
        mask = np.zeros(n, dtype=bool)
        mask[keep] = True
        w[~mask] = 0.0
    return w


def specificity_seed_weights(
    mention_vecs: np.ndarray, entity_embeddings: np.ndarray, passage_counts: np.ndarray
) -> tuple[np.ndarray, list[int]]:
    """HippoRAG 1: each mention -> nearest entity by name embedding, weight 1/|passages(e)|."""
    w = np.zeros(len(passage_counts))
    linked = nearest_entities(mention_vecs, entity_embeddings)
    for e in linked:
        c = passage_counts[e]
        w[e] = 1.0 / c if c > 0 else 1.0
    return w, linked


def passage_reset(dense_cos: np.ndarray, passage_node_weight: float) -> np.ndarray:
    """Every passage node: passage_node_weight x min-max(dense cosine)."""
    return passage_node_weight * min_max(dense_cos)


# ---- the seeding component ----------------------------------------------------------------
class HippoRAGSeeding(Configurable):
    """HippoRAG's reset vector as a component (steps 1-4 of the module docstring), held as
    ``self.seeding`` by every retriever that seeds as HippoRAG does: this module's retriever,
    CatRAG, flow_diffusion_code and flow_diffusion_joint (``seeding: hipporag``). Its settings
    are one nested config node (``retriever.seeding.*``; `registry.nested`).

    `method` picks ``hipporag2`` (facts) or ``hipporag1`` (mentions); the hosts other than
    HippoRAGRetriever pin it to hipporag2. `fact_filter` is the recognition filter step: a host
    with its own filter (CatRAG's prompts, QAFD's fallback) puts its method there.
    """

    unlisted = ("llm_name",)  # the host's setting, passed on (not a seeding setting)

    def __init__(
        self,
        *,
        method: str = "hipporag2",  # hipporag1: question mentions -> nearest entity,
        #   weight 1/|passages| (node specificity)
        linking_top_k: int = 5,  # candidate facts by question-fact cosine (min-max)
        top_phrases: int = 5,  # entity seeds kept
        passage_node_weight: float = 0.05,  # every passage node: this x min-max dense score
        filter="auto",  # LLM recognition filter: auto = on when llm= is set;
        #   true needs llm=; false never
        llm_name: str | None = None,  # the host's ${llm.name}: `filter: auto` sees it
    ) -> None:
        if method not in SEEDINGS:
            raise HopbenchError(
                f"retriever.seeding.method must be one of {SEEDINGS}, got {method!r}"
            )
        self.method = method
        self.linking_top_k = linking_top_k
        self.top_phrases = top_phrases
        self.passage_node_weight = passage_node_weight
        self.filter, self.llm_name = filter, llm_name
        self.use_filter = method == "hipporag2" and resolve_llm_switch(
            filter, llm_name, "filter", "hipporag"
        )
        self.needs_llm = self.use_filter
        self.fact_filter = self.llm_filter

    def prepare(self, kg, services: Services) -> None:
        check_graph_matches(kg, services)
        self.kg, self.services = kg, services
        self.llm = services.llm if self.use_filter else None
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        self.passage_counts = kg.entity_passage_counts()
        self.fact_emb = np.asarray(kg.fact_embeddings, dtype=np.float64)
        # float64 once: linking a mention (kg/linking.py) would otherwise convert it per question
        self.entity_emb = np.asarray(kg.entity_embeddings, dtype=np.float64)
        self.vectors = TextVectors(services.encoder)
        self.E = kg.n_entities
        if self.method == "hipporag1":  # load spaCy and the encoder outside any timed retrieval
            self.vectors.load_model()
            question_mentions("warm up")

    # -- seeds -----------------------------------------------------------------------------
    def llm_filter(self, question: str, candidates: np.ndarray, trace: dict) -> np.ndarray:
        """HippoRAG 2's filter: the LLM keeps some of the candidate facts."""
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.hipporag.prompts import fact_filter

        triples = [self.kg.fact_triple(int(f)) for f in candidates]
        calls: list = []
        kept = candidates[:0]  # HippoRAG's rerank_facts returns no facts on a bad reply
        with fallback_on_bad_reply(trace, fact_filter.SCHEMA_NAME, instead="no fact kept"):
            reply = self.llm.chat_json(
                fact_filter.messages(question, triples),
                fact_filter.SCHEMA,
                schema_name=fact_filter.SCHEMA_NAME,
                max_tokens=64,
                trace=calls,
            )
            kept = candidates[fact_filter.selected_positions(reply, len(candidates))]
        trace["llm_calls"] = calls
        return kept

    def recognise(self, question, q_emb: np.ndarray, trace: dict, facts=None):
        """HippoRAG 2's recognition memory (steps 1-3 of the module docstring):
        (phrase seed weights (E,) or None for the dense fallback, kept fact indices, fact scores).
        `facts`: (candidates, scores) from `screened_facts`, the same floats where they are read."""
        kg = self.kg
        if kg.n_facts == 0:
            record_fallback(trace, DENSE, "graph has no facts")
            return None, np.zeros(0, dtype=int), np.zeros(0)
        if facts is None:
            scores = fact_scores(self.fact_emb, q_emb)
            cand = top_facts(scores, self.linking_top_k)
        else:
            cand, scores = facts
        trace["candidate_facts"] = [
            [*kg.fact_triple(int(f)), round(float(scores[f]), 6)] for f in cand
        ]
        kept = self.fact_filter(question.text, cand, trace) if self.use_filter else cand
        trace["facts"] = [list(kg.fact_triple(int(f))) for f in kept]
        if kept.size == 0:
            record_fallback(trace, DENSE, "no fact survived the filter")
            return None, kept, scores
        w = phrase_seed_weights(
            kept, scores, kg.fact_subject, kg.fact_object, self.passage_counts, self.top_phrases
        )
        return w, kept, scores

    def screened_facts(self, q_embs: list[np.ndarray]) -> list[tuple | None]:
        """Step 1 for a block of questions from one float32 product over the facts
        (`kernels.screened`): per question (candidate facts, min-max scores exact where
        `recognise` reads them, NaN elsewhere), or None where `recognise` computes it alone."""
        if self.method != "hipporag2" or self.kg.n_facts == 0 or not q_embs:
            return [None] * len(q_embs)
        if getattr(self, "_screen", None) is None:  # built on the first block only
            self._screen = ScreenedRows(self.fact_emb)
        qs = np.stack([np.asarray(e, dtype=np.float64) for e in q_embs])
        out: list[tuple | None] = []
        for q, s in zip(qs, self._screen.block(qs, self.linking_top_k), strict=True):
            if not self._screen.sure(s, q):
                out.append(None)
                continue
            scores = np.full(self.kg.n_facts, np.nan)
            scores[s.rows_kept] = (s.values - s.lo) / (s.hi - s.lo)  # min_max's floats
            idx = s.rows_kept
            out.append((idx[np.lexsort((idx, -scores[idx]))][: self.linking_top_k], scores))
        return out

    def entity_reset(
        self, question, q_emb: np.ndarray, trace: dict, facts=None
    ) -> np.ndarray | None:
        """(E,) entity part of the reset vector, or None for the dense fallback."""
        kg = self.kg
        if self.method == "hipporag1":
            mentions = question_mentions(question.text)
            w, linked = specificity_seed_weights(
                self.vectors(mentions), self.entity_emb, self.passage_counts
            )
            trace["mentions"] = mentions
            trace["linked"] = [kg.entity_names[e] for e in linked]
        else:
            w, _, _ = self.recognise(question, q_emb, trace, facts)
            if w is None:
                return None
        if not np.any(w > 0):
            record_fallback(trace, DENSE, "no seed entity")
            return None
        nz = np.flatnonzero(w)
        nz = nz[np.argsort(-w[nz], kind="stable")]
        trace["seeds"] = [[entity_node_id(kg.entity_names[e]), float(w[e])] for e in nz]
        return w

    def reset_vector(self, question, facts=None) -> tuple[np.ndarray | None, np.ndarray, dict]:
        """(reset over all nodes or None for the dense fallback, dense cosine, trace);
        `facts`: this question's entry of `screened_facts`."""
        q_emb = self.services.query_embedding(question)
        dense = self.passage_emb @ np.asarray(q_emb, dtype=np.float64)
        trace: dict = {"seeding": self.method, "filter": self.use_filter}
        ent = self.entity_reset(question, q_emb, trace, facts)
        if ent is None:
            return None, dense, trace
        return np.concatenate([ent, passage_reset(dense, self.passage_node_weight)]), dense, trace


# ---- the retriever ------------------------------------------------------------------------
class HippoRAGRetriever(Retriever):
    """HippoRAG 2 retrieval on the shared graph (see module docstring): the seeding
    component's reset vector (``retriever.seeding.*``), then PPR."""

    family = "hipporag"
    exact_batches = True  # retrieve_batch: tests/retrieve/test_batched_rows.py
    added_defaults = {"ppr_stop": "tol"}  # earlier runs keep their hashes

    needs_graph = True
    needs_descriptions = False
    unlisted = ("graph_construction",)
    seeding_spec = nested(HippoRAGSeeding)  # what the `seeding` node may hold (hosts pin more)

    def __init__(
        self,
        *,
        damping: float = 0.5,  # PPR damping d (HippoRAG 2: 0.5)
        relation_weight: float = 2.0,  # HippoRAG's effective undirected weights: 2 x fact count,
        synonym_weight: float = 2.0,  #   2 x synonym cosine,
        context_weight: float = 1.0,  #   1 per passage-entity edge
        ppr_tol: float = 1e-10,
        ppr_stop: str = "tol",  # "certified_topk": stop once the top k is proved (kernels/ppr_stop.py)
        graph_construction: str | None = None,  # the graph.construction this runs on
        #   (None: any); hipporag.yaml: hipporag2
        llm_name: str | None = None,  # configs pass ${llm.name}: `filter: auto` sees it
        seeding=seeding_spec,  # HippoRAGSeeding's settings, one nested node
    ) -> None:
        if not 0.0 <= damping < 1.0:
            raise HopbenchError(f"retriever.damping must be in [0, 1), got {damping}")
        self.llm_name = llm_name
        self.seeding = build_nested(seeding, type(self).seeding_spec, "seeding", llm_name=llm_name)
        self.needs_llm = self.seeding.needs_llm
        self.damping = damping
        self.relation_weight, self.synonym_weight = relation_weight, synonym_weight
        self.context_weight = context_weight
        self.ppr_tol = ppr_tol
        self.ppr_stop = check_stop(ppr_stop)
        self.graph_construction = graph_construction

    def prepare(self, kg, services: Services) -> None:
        built = kg.manifest.get("construction", "hopbench")
        if self.graph_construction is not None and built != self.graph_construction:
            raise HopbenchError(
                f"retriever.graph_construction={self.graph_construction} but the graph was built with "
                f"graph.construction={built}: leave graph.construction to follow the retriever, or "
                "choose the retriever of that construction (hipporag: hipporag2, hipporag_hb: hopbench)"
            )
        self.seeding.prepare(kg, services)
        self.kg, self.services, self.E = kg, services, kg.n_entities
        self.prepare_graph(kg)

    def prepare_graph(self, kg) -> None:
        """The PPR graph: HippoRAG's undirected weighted adjacency, normalised once."""
        self.adjacency = kg.adjacency(
            relation=self.relation_weight, synonym=self.synonym_weight, context=self.context_weight
        )
        self.ppr = prepare_ppr(self.adjacency)

    def _finish(
        self, scores: np.ndarray | None, dense: np.ndarray, trace: dict, k: int
    ) -> Retrieval:
        """The PPR ranking, or the dense one when `scores` is None (its reason is in the trace)."""
        if scores is None:
            return to_retrieval(self.kg.passage_ids, order_by(dense, dense), dense, k, trace)
        p = scores[self.E :]
        return to_retrieval(self.kg.passage_ids, order_by(p, dense), p, k, trace)

    # -- retrieval -------------------------------------------------------------------------
    def solve_ppr(self, graph, reset: np.ndarray, k: int, trace: dict, method: str = "auto"):
        """PPR over `graph` as `ppr_stop` says; a certified stop leaves its account in the trace."""
        return ppr_scores(
            graph,
            reset,
            stop=self.ppr_stop,
            k=k,
            candidates=slice(self.E, None),
            damping=self.damping,
            tol=self.ppr_tol,
            trace=trace,
            method=method,
        )

    def retrieve(self, question, k: int) -> Retrieval:
        reset, dense, trace = self.seeding.reset_vector(question)
        scores = None if reset is None else self.solve_ppr(self.ppr, reset, k, trace)
        return self._finish(scores, dense, trace, k)

    def retrieve_batch(self, questions, k: int) -> list[Retrieval]:
        """The rows of `retrieve`, to the last bit; the PPR solves share passes over the graph
        (`personalized_pagerank_block`: each column stops where its own solve would), and the
        fact step one float32 product over the facts (`HippoRAGSeeding.screened_facts`).
        A certified stop ends each question's solve at its own point: one question at a time."""
        if self.ppr_stop != "tol":
            return super().retrieve_batch(questions, k)
        facts = self.seeding.screened_facts([self.services.query_embedding(q) for q in questions])
        prepared = [self.seeding.reset_vector(q, f) for q, f in zip(questions, facts, strict=True)]
        live = [i for i, (r, _, _) in enumerate(prepared) if r is not None]
        solved: dict[int, np.ndarray] = {}
        if live:
            x = personalized_pagerank_block(
                self.ppr,
                np.stack([prepared[i][0] for i in live], axis=1),
                damping=self.damping,
                tol=self.ppr_tol,
            )
            solved = {i: x[:, j] for j, i in enumerate(live)}
        return [self._finish(solved.get(i), d, t, k) for i, (_, d, t) in enumerate(prepared)]
