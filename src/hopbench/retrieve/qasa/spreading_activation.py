"""QASA spreading activation with the semantic gate, in memory (docs/methods/qasa.md).

The method: the question's entity mentions seed entities (exact name match 1.0, else the
nearest entity descriptions of the mention's search text, scored (1 + cos) / 2 and divided by
the largest seed score, as the authors' query does). For T synchronous steps every activated
node u sends a(u) x δ x gate(v) along each relation edge (u, v), where gate(v) = max(0, cos of
v's description and the question) (no gate in the ablation); a node ADDS what it receives in a
step to what it had, only from sources more active than itself, and a new value is kept only
when the step's input exceeds θ. Passages are then ranked by the summed activation of the
entities they contain, the rest by dense cosine; the trace keeps the heaviest seed -> target
paths through activated nodes and the top activated entities.
Each step is a rule of `hopbench.retrieve.qasa.activation_rules`, shared with the Neo4j retriever;
the update is `hopbench.retrieve.qasa.spread.spreading_activation`. Hyper-parameters:
decay δ (0.7), depth T (3), threshold θ (0.01), gate on/off; the authors' seed scores,
normalisation and edge multiplicity by default, hopbench's earlier choices as settings
(``seed_score: cosine``, ``seed_norm: mention``, ``edges: facts``).

The plain implementation of these rules, full products and plain path enumeration, is the
test oracle tests/retrieve/qasa/sa_oracle.py. This one gives the same numbers with less work per
query: an exact vector search over a quantised index (`kernels.topk.ExactTopK`), the gate
computed only for nodes that could pass θ (`LazyGate`), passages scored from the activated
entities' rows, dense cosines taken only where they decide the top k, and a pruned exact path
search (`kernels.paths.top_paths`). `analyse` (question analysis: mentions, and the vectors
of the ones no entity name matches) is split from `retrieve_with_mentions` (retrieval proper)
so the benchmarks can time them apart (benchmarks/speed/results/retrievers_*.md).
"""

from __future__ import annotations

import time

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.kg.graph import entity_node_id
from hopbench.retrieve.base import DESCRIPTION_ORDER, Retrieval, Retriever, Services
from hopbench.retrieve.kernels._csr import as_csr
from hopbench.retrieve.kernels._rows import same_float_rows
from hopbench.retrieve.kernels.topk import ExactTopK
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa import paths as path_kernels
from hopbench.retrieve.qasa.mentions import QasaMentions
from hopbench.retrieve.qasa.passages import (
    entity_passages,
    passage_scores_from_entities,
    top_passages,
)
from hopbench.retrieve.qasa.spread import (
    Int8Rows,
    LazyGate,
    spreading_activation,
    spreading_activation_batch,
    unit_rows,
)
from hopbench.retrieve.question import question_mentions
from hopbench.retrieve.run_checks import check_graph_matches
from hopbench.retrieve.text_vectors import TextVectors

TOP_ACTIVATIONS = 30


class SpreadingActivationRetriever(Retriever):
    """Entities activated from the question's seeds; passages scored by their entities' activation."""

    family = "spreading_activation"
    exact_batches = True

    needs_graph = True
    # seeds are the nearest description vectors and the gate compares the question with them
    position_features = (DESCRIPTION_ORDER,)

    def __init__(
        self,
        *,
        decay: float = 0.7,  # δ
        depth: int = 3,  # T synchronous steps
        threshold: float = 0.01,  # θ
        gate: bool = True,  # false: the ungated ablation
        seed_fallback_k: int = rules.SEED_FALLBACK_TOTAL,  # vector fallback: k = max(1, 5 //
        #   n_mentions) entities per unmatched mention
        top_paths: int = path_kernels.TOP_PATHS,  # trace: heaviest seed->target paths (0: none)
        path_max_hops: int = path_kernels.PATH_MAX_HOPS,
        path_budget: int = 200_000,  # partial paths grown at most; trace.paths_complete
        #   says if it was enough
        mentions: str = "spacy",  # spacy: question.question_mentions (as the Neo4j
        #   version); llm: the LLM names the entities with a
        #   search hint (needs llm=; a bad reply: spaCy's, in
        #   trace.fallback)
        llm_name: str | None = None,
        prompts: str = "own",  # mentions: llm: own (prompts/qasa_entities.py) or official
        #   (the authors' text, read from official_src at run time)
        official_src: str | None = None,  # the authors' checkout, for prompts: official
        seed_score: str = "index",  # index: (1 + cos) / 2 (the authors'); cosine: max(cos, 0)
        seed_norm: str = "all",  # all: / the largest seed score (the authors');
        #   mention: / each mention's best
        edges: str = "pairs",  # pairs: one edge per ordered pair with a fact (the
        #   authors'); facts: the number of facts
    ) -> None:
        if not 0.0 < decay <= 1.0:
            raise HopbenchError(f"retriever.decay must be in (0, 1], got {decay}")
        if depth < 0:
            raise HopbenchError(f"retriever.depth must be >= 0, got {depth}")
        self.decay, self.depth, self.threshold, self.gate = decay, int(depth), threshold, bool(gate)
        self.seed_fallback_k = seed_fallback_k
        self.top_paths, self.path_max_hops, self.path_budget = top_paths, path_max_hops, path_budget
        for key, value, allowed in (
            ("seed_score", seed_score, rules.SEED_SCORES),
            ("seed_norm", seed_norm, rules.SEED_NORMS),
            ("edges", edges, rules.EDGE_RULES),
        ):
            if value not in allowed:
                raise HopbenchError(
                    f"retriever.{key} must be one of {', '.join(allowed)}, got {value!r}"
                )
        self.seed_score, self.seed_norm, self.edges = seed_score, seed_norm, edges
        self.mention_step = QasaMentions(
            mentions, llm_name, prompts, official_src, "spreading_activation"
        )
        self.mentions, self.prompts, self.official_src = mentions, prompts, official_src
        self.needs_llm = self.mention_step.needs_llm
        self.last_parts: dict[str, float] = {}

    def prepare(self, kg, services: Services) -> None:
        check_graph_matches(kg, services)
        self.kg, self.services = kg, services
        self.adjacency = as_csr(rules.relation_matrix(kg, self.edges), "kg.relation")  # once
        self.context = kg.context.tocsr()
        self.entity_passages = entity_passages(self.context)
        self.desc_emb = np.asarray(kg.description_embeddings, dtype=np.float64)
        self._desc_unit = unit_rows(self.desc_emb)  # semantic_gate's normalisation, done once
        self._desc_int8 = Int8Rows(self._desc_unit)  # LazyGate's cheap upper bound
        self.desc_search = ExactTopK(self.desc_emb)
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        self.vectors = TextVectors(services.encoder)
        self.vectors.load_model()
        if self.mentions == "spacy":
            question_mentions("warm up")  # load spaCy once, outside any timed retrieval

    # -- pieces --------------------------------------------------------------------------
    def seeds(
        self, question, mentions: list[str] | None = None, trace: dict | None = None
    ) -> tuple[list[str], np.ndarray, np.ndarray, list[dict]]:
        if mentions is None:
            mentions = self.question_mentions(question, {} if trace is None else trace)
        names, hints = rules.split_mentions(mentions)
        idx, act, detail = rules.seed_activations(
            names,
            self.kg.entity_index,
            self.vectors,
            self.desc_emb,
            self.seed_fallback_k,
            search=self.desc_search.search,
            score=self.seed_score,
            norm=self.seed_norm,
            hints=hints,
        )
        return mentions, idx, act, detail

    def analyse(self, question, trace: dict | None = None) -> list[str]:
        """Question analysis: the mentions, with the vectors of unmatched ones encoded (memoised).
        `trace` receives what the LLM step records (its calls, a fallback)."""
        mentions = self.question_mentions(question, {} if trace is None else trace)
        names, hints = rules.split_mentions(mentions)
        self.vectors.warm([h for m, h in zip(names, hints) if self.kg.entity_index(m) is None])
        return mentions

    def question_mentions(self, question, trace: dict) -> list:
        """The configured mention source (`qasa_mentions.QasaMentions`)."""
        return self.mention_step(question, self.services.llm, trace)

    def gate_vector(self, q_emb: np.ndarray) -> np.ndarray | None:
        """`semantic_gate(description embeddings, q)` with the row norms computed once in prepare()."""
        return None if not self.gate else LazyGate(self._desc_unit, q_emb).full()

    def lazy_gate(self, q_emb: np.ndarray) -> LazyGate | None:
        """The same gate, computed by the kernel only for nodes that could pass θ."""
        return None if not self.gate else LazyGate(self._desc_unit, q_emb, self._desc_int8)

    def _finish(
        self,
        question,
        q_emb,
        mentions,
        idx,
        detail,
        activation,
        activated,
        k,
        analysis: dict | None = None,
    ) -> Retrieval:
        t0 = time.perf_counter()
        kg = self.kg
        q = np.asarray(q_emb, dtype=np.float64)
        scores = passage_scores_from_entities(self.entity_passages, activation, activated)
        top, dense = top_passages(
            scores,
            lambda rows: (
                self.passage_emb @ q if rows is None else same_float_rows(self.passage_emb, rows, q)
            ),
            k,
        )
        names = kg.entity_names
        hot = np.flatnonzero(activated)
        hot = hot[np.lexsort((hot, -activation[hot]))][:TOP_ACTIVATIONS]
        trace = {
            **(analysis or {}),  # the question analysis' record (LLM calls, fallback)
            "mentions": rules.split_mentions(mentions)[0],
            **(
                {"search_hints": rules.split_mentions(mentions)[1]}
                if any(isinstance(m, rules.Mention) for m in mentions)
                else {}
            ),
            "seeds": [{**d, "entity": entity_node_id(names[d["entity"]])} for d in detail],
            "n_activated": int(activated.sum()),
            "activations": [[entity_node_id(names[e]), float(activation[e])] for e in hot],
            "n_passages_scored": int((scores > 0).sum()),
        }
        t1 = time.perf_counter()
        if self.top_paths:
            paths, complete = path_kernels.top_paths(
                self.adjacency,
                activation,
                activated,
                idx,
                max_hops=self.path_max_hops,
                top=self.top_paths,
                budget=self.path_budget,
            )
            trace["paths"] = [{"nodes": [names[v] for v in p], "weight": w} for p, w in paths]
            trace["paths_complete"] = complete
        # timings of the last query's parts, for benchmarks/speed/retrievers.py
        self.last_parts.update(rank=t1 - t0, paths=time.perf_counter() - t1)
        # score shown: the activation score; passages with none show their dense cosine
        shown = scores[top] if dense is None else np.where(scores[top] > 0, scores[top], dense[top])
        return Retrieval([kg.passage_ids[i] for i in top], [float(x) for x in shown], trace)

    # -- retrieval -----------------------------------------------------------------------
    def retrieve(self, question, k: int) -> Retrieval:
        analysis: dict = {}
        mentions = self.analyse(question, analysis)
        return self.retrieve_with_mentions(question, mentions, k, analysis)

    def retrieve_with_mentions(
        self, question, mentions: list[str], k: int, analysis: dict | None = None
    ) -> Retrieval:
        """Retrieval proper, given the question's mentions: seeds, gate, propagation, ranking, trace
        (which starts with `analysis`, what `analyse` recorded)."""
        t0 = time.perf_counter()
        q_emb = self.services.query_embedding(question)
        mentions, idx, act, detail = self.seeds(question, mentions)
        t1 = time.perf_counter()
        res = spreading_activation(
            self.adjacency,
            idx,
            act,
            self.lazy_gate(q_emb),
            decay=self.decay,
            steps=self.depth,
            threshold=self.threshold,
        )
        self.last_parts = {"seeds": t1 - t0, "gate_and_propagate": time.perf_counter() - t1}
        return self._finish(
            question, q_emb, mentions, idx, detail, res.activation, res.activated, k, analysis
        )

    def retrieve_batch(self, questions, k: int) -> list[Retrieval]:
        """Same rows as `retrieve` per question, to the last bit (each question's lazy gate, as
        `retrieve` gates it); all propagations in one batched kernel call."""
        q_embs = [self.services.query_embedding(q) for q in questions]
        analyses: list[dict] = [{} for _ in questions]
        # each question parsed alone, as `retrieve` parses it: spaCy's pipe over a block pads
        # its questions together, and a run at question_batch=64 then gave other mentions
        # for some questions than the one-question run (rows' digests differed; issue #59)
        all_mentions = [self.question_mentions(q, a) for q, a in zip(questions, analyses)]
        self.vectors.warm(
            [h for ms in all_mentions for h in rules.split_mentions(ms)[1]]
        )  # one call
        seeds = [self.seeds(q, ms) for q, ms in zip(questions, all_mentions)]
        gates = None if not self.gate else [self.lazy_gate(e) for e in q_embs]
        res = spreading_activation_batch(
            self.adjacency,
            [(s[1], s[2]) for s in seeds],
            gates,
            decay=self.decay,
            steps=self.depth,
            threshold=self.threshold,
        )
        return [
            self._finish(q, e, s[0], s[1], s[3], res.activation[:, j], res.activated[:, j], k, a)
            for j, (q, e, s, a) in enumerate(zip(questions, q_embs, seeds, analyses))
        ]
