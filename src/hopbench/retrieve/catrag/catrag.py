"""CatRAG (docs/methods/catrag.md): HippoRAG 2 with a query-adapted transition matrix.

Per question, on top of HippoRAG 2's recognition memory, seeds and passage reset:

1. symbolic anchoring: each question entity (LLM NER, or spaCy with ``ner: spacy``) is linked
   to its nearest entity node by name embedding; a node that is not already a seed joins the
   reset vector with epsilon / |passages(e)| (epsilon = 0.2);
2. stage I: the `n_seed` (5) heaviest entity seeds; for each, its relation neighbours ranked by
   the best cos(question, fact) over the facts joining them; the top `k_edge` (15) are kept
   for scoring, the rest get the "weak" multiplier `pruned_weight` (paper: the minimal weak
   value 0.2; code: 0.3);
3. stage II: the LLM scores each kept neighbour 0-10 given the question, the kept facts, the
   seed and the neighbour's context C(v) (its facts, or an LLM summary when it has more than
   tau = 3 facts), in batches of `score_batch` (15); as the code does it (``score_merge:
   max_target``), each target keeps the best score any seed gave it and phi of that score
   multiplies every top seed's whole edge to it (relation and synonym parts); an edge to a
   target some seed pruned and none scored gets `pruned_weight`; the reverse edges are
   unchanged (``score_merge: pair``, catrag_hb: a score weights only the relation part of the
   edge from the seed whose call produced it);
4. key-fact passage enhancement: seed -> passage context edges whose passage holds a kept fact
   of that seed get x `passage_multiplier` (paper: 1 + beta = 3.5; code, ``boost_scope:
   fact_entities``: the edges of every subject and object of a kept fact);
5. one PPR (damping 0.5) on the adapted, now directed, graph; passages ranked by PPR score.
   The base graph is never modified (`kernels.catrag.adapted_adjacency` builds a new matrix),
   so nothing leaks from one question into the next.

With no kept fact the question falls back to dense retrieval, as HippoRAG 2 and CatRAG's code
do. A reply that never matches its schema falls back for that step only (NER: no anchors;
summary: the entity's facts; scoring: that batch's edges unchanged), recorded in
``trace["fallback"]``; a server that cannot be reached aborts the run (`hopbench.llm.policy`).

``catrag`` runs on HippoRAG 2's graph construction, as the authors' code (a fork of HippoRAG 2)
does; ``catrag_code`` (configs/retriever/catrag_code.yaml) has the code's constants where they
depart from the paper; ``catrag_hb`` is hopbench's earlier reading (its own graph, pair
scoring). docs/methods/catrag.md gives every setting's source. The three components switch off
with ``anchoring``, ``edge_weighting`` and ``passage_boost``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, record_fallback
from hopbench.kg.graph import entity_node_id
from hopbench.kg.linking import nearest_entities
from hopbench.retrieve.base import Retrieval, Services
from hopbench.retrieve.catrag import kernels as cw
from hopbench.retrieve.hipporag.hipporag import (
    HippoRAGRetriever,
    HippoRAGSeeding,
    passage_reset,
)
from hopbench.retrieve.kernels.ppr import prepare_ppr
from hopbench.retrieve.question import question_mentions
from hopbench.retrieve.registry import nested
from hopbench.retrieve.run_checks import resolve_llm_switch

NER_CHOICES = ("llm", "spacy")
SCORE_MERGES = ("max_target", "pair")
BOOST_SCOPES = ("seeds", "fact_entities")
ANCHOR_DIVISORS = ("own", "code")
PROMPTS = ("lines", "json", "official")
ANCHOR_TEXTS = ("processed", "raw")
MAX_SUMMARY_FACTS = 30  # facts shown to the summariser (bounds its prompt on hub entities)
MAX_LINK_FACTS = 3  # linking facts shown per neighbour
SCORE_LINE_TOKENS = 40  # reply budget per neighbour line (name, score, a short reason)


class CatRAGRetriever(HippoRAGRetriever):
    """CatRAG on the shared graph (see module docstring)."""

    family = "catrag"

    needs_graph = True

    seeding_spec = nested(HippoRAGSeeding, method="hipporag2")  # always HippoRAG 2's seeds

    def __init__(
        self,
        *,
        # symbolic anchoring
        anchoring: bool = True,
        ner: str = "llm",  # llm (paper) | spacy (offline, no LLM call)
        epsilon: float = 0.2,  # reset of an anchor = epsilon / |passages(e)|
        # stage I / II edge weighting
        edge_weighting: bool = True,
        n_seed: int = 5,  # N_seed
        k_edge: int = 15,  # K_edge: neighbours per seed sent to the LLM
        score_batch: int = 15,  # neighbours per LLM call (code: llm_score_batch = 15)
        pruned_weight: float = 0.2,  # neighbours beyond K_edge: the minimal "weak"
        #   multiplier (code: 0.3)
        phi_scale: float = 1.0,  # phi as in the paper (code: x2)
        tau: int = 3,  # C(v) = summary when v has more than tau facts
        summaries: bool = True,  # false: the tau facts closest to the question
        #   instead of an LLM summary
        summary_max_tokens: int = 150,  # code: summary_length 150
        # key-fact passage enhancement
        passage_boost: bool = True,
        passage_multiplier: float = 3.5,  # 1 + beta, beta = 2.5 (paper)
        passage_renormalise: bool = False,  # code: true (keep the seed's total passage weight)
        # how the code applies them (CatRAG.py graph_search_with_fact_entities)
        score_merge: str = "max_target",  # max_target (code): the best score any seed gave
        #   a target weights every seed's whole edge to it;
        #   pair (catrag_hb): a score weights only the
        #   relation part of the (seed, neighbour) edge
        boost_scope: str = "seeds",  # seeds (paper) | fact_entities (code: every
        #   subject/object of a kept fact)
        anchor_divisor: str = "own",  # own (paper: |passages(anchor)|) | code (the
        #   passage count of the previous phrase_key)
        summary_facts: int = MAX_SUMMARY_FACTS,  # facts given to the summariser (0: all, code)
        link_facts: int = MAX_LINK_FACTS,  # linking facts shown per neighbour (0: all, code)
        neighbour_copies: bool = False,  # code: true (a neighbour is listed once per
        #   parallel out-edge, as igraph's successors()
        #   returns it, in node order when none is cut)
        anchor_text: str = "processed",  # processed (code: ner_query links HippoRAG's
        #   text_processing of each entity) | raw
        prompts: str = "lines",  # lines: the authors' design in hopbench's words
        #   (reply lines parsed as the code parses them,
        #   filter with demonstrations); json: hopbench's
        #   earlier JSON prompts; official: the authors'
        #   files from `official_prompts`
        official_prompts: str | None = None,  # a checkout of kwunhang/CatRAG (prompts: official)
        seeding=seeding_spec,  # HippoRAG 2's seeding settings, one nested node
        **hipporag,
    ) -> None:
        """``**hipporag``: HippoRAGRetriever's settings (HippoRAG 2 substrate, docs/methods/hipporag.md;
        the same defaults match CatRAG Table 6: synonym 2 x sim, d = 0.5; code: synonym 3.0)."""
        super().__init__(seeding=seeding, **hipporag)
        self.seeding.fact_filter = self._filter  # CatRAG's recognition filter (its prompts)
        llm_name = self.llm_name
        if ner not in NER_CHOICES:
            raise HopbenchError(f"retriever.ner must be one of {NER_CHOICES}, got {ner!r}")
        for key, val in (("n_seed", n_seed), ("k_edge", k_edge), ("score_batch", score_batch)):
            if int(val) < 1:
                raise HopbenchError(f"retriever.{key} must be >= 1, got {val}")
        if edge_weighting or (anchoring and ner == "llm"):
            resolve_llm_switch(
                True, llm_name, "edge_weighting" if edge_weighting else "ner", "catrag"
            )
        self.anchoring, self.ner, self.epsilon = anchoring, ner, epsilon
        self.edge_weighting, self.n_seed, self.k_edge = edge_weighting, n_seed, k_edge
        self.score_batch, self.pruned_weight, self.phi_scale = score_batch, pruned_weight, phi_scale
        self.tau, self.summaries, self.summary_max_tokens = tau, summaries, summary_max_tokens
        self.passage_boost, self.passage_multiplier = passage_boost, passage_multiplier
        self.passage_renormalise = passage_renormalise
        for key, val, choices in (
            ("score_merge", score_merge, SCORE_MERGES),
            ("boost_scope", boost_scope, BOOST_SCOPES),
            ("anchor_divisor", anchor_divisor, ANCHOR_DIVISORS),
        ):
            if val not in choices:
                raise HopbenchError(f"retriever.{key} must be one of {choices}, got {val!r}")
        for key, val in (("summary_facts", summary_facts), ("link_facts", link_facts)):
            if int(val) < 0:
                raise HopbenchError(f"retriever.{key} must be >= 0 (0: all), got {val}")
        self.score_merge, self.boost_scope, self.anchor_divisor = (
            score_merge,
            boost_scope,
            anchor_divisor,
        )
        self.summary_facts, self.link_facts = int(summary_facts), int(link_facts)
        if prompts not in PROMPTS:
            raise HopbenchError(f"retriever.prompts must be one of {PROMPTS}, got {prompts!r}")
        if prompts == "official" and not official_prompts:
            raise HopbenchError(
                "retriever.prompts=official needs retriever.official_prompts=<a checkout "
                "of kwunhang/CatRAG>"
            )
        self.prompts, self.official_prompts = prompts, official_prompts
        if anchor_text not in ANCHOR_TEXTS:
            raise HopbenchError(
                f"retriever.anchor_text must be one of {ANCHOR_TEXTS}, got {anchor_text!r}"
            )
        self.anchor_text = anchor_text
        self.neighbour_copies = bool(neighbour_copies)
        self.needs_llm = self.seeding.use_filter or edge_weighting or (anchoring and ner == "llm")

    def prepare(self, kg, services: Services) -> None:
        self.official = None
        if self.prompts == "official":
            from hopbench.retrieve.catrag.prompts.official_catrag import OfficialCatRAGPrompts

            self.official = OfficialCatRAGPrompts(self.official_prompts)
        super().prepare(kg, services)
        self.llm = services.llm if self.needs_llm else None
        if self.anchoring and self.ner == "spacy":
            question_mentions("warm up")
        if self.anchoring:
            self.seeding.vectors.load_model()

    def prepare_graph(self, kg) -> None:
        """The base graph split by edge type (each question re-weights parts of it), instead of
        HippoRAG's undirected PPR matrices: every CatRAG PageRank runs on an adapted copy."""
        E, P = kg.n_entities, kg.n_passages
        r, s, c = self.relation_weight, self.synonym_weight, self.context_weight
        zero_pp = sp.csr_matrix((P, P))
        zero_ep = sp.csr_matrix((E, P))
        # the code's fact edges (own direction, less what a synonym overwrote) on its graph
        # construction; hopbench's construction has no overwritten directions
        facts = kg.relation if kg.relation_own_direction is None else kg.relation_own_direction
        rel = sp.csr_matrix(facts, dtype=np.float64) * r
        syn = sp.csr_matrix(kg.synonym, dtype=np.float64) * s
        ctx = sp.csr_matrix(kg.context, dtype=np.float64) * c
        self.relation_part = sp.bmat([[rel, zero_ep], [zero_ep.T, zero_pp]], format="csr")
        self.context_part = sp.bmat([[sp.csr_matrix((E, E)), ctx.T], [ctx, zero_pp]], format="csr")
        base = (
            self.relation_part
            + sp.bmat([[syn, zero_ep], [zero_ep.T, zero_pp]], format="csr")
            + self.context_part
        ).tocsr()
        base.eliminate_zeros()
        base.sort_indices()
        self.base = base
        self.relation_csr = sp.csr_matrix(kg.relation)
        self._summaries: dict[int, str] = {}
        self._fact_directions = {
            (int(a), int(b)) for a, b in zip(kg.fact_subject, kg.fact_object, strict=True) if a != b
        }

    # -- 1. anchors (recognition memory is HippoRAG 2's `recognise`) ---------------------
    def question_entities(self, question, trace: dict) -> list[str]:
        """The question's entities as the NER step returned them (recorded in the trace)."""
        ents = self._question_entities(question, trace)
        trace["question_entities"] = ents
        return ents

    def _question_entities(self, question, trace: dict) -> list[str]:
        if self.ner == "spacy":
            return question_mentions(question.text)
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.llm.prompts import question_entities as qe

        calls = trace.setdefault("llm_calls", [])
        if self.prompts == "official":
            return self._official_entities(question, calls, trace)
        with fallback_on_bad_reply(trace, qe.SCHEMA_NAME, instead="no anchors"):
            reply = self.llm.chat_json(
                qe.messages(question.text),
                qe.SCHEMA,
                schema_name=qe.SCHEMA_NAME,
                max_tokens=96,
                trace=calls,
            )
            return qe.entities(reply)
        return []

    def _official_entities(self, question, calls: list, trace: dict) -> list[str]:
        """The authors' ner_query; a reply their parser rejects gives no anchors (as the code)."""
        from hopbench.kg.hipporag2 import text_processing
        from hopbench.retrieve.catrag.prompts import official_catrag as oc

        res = self.llm.chat(self.official.ner_messages(question.text), max_tokens=96)
        calls.append(
            {
                "schema": "official_ner_query",
                "cached": res.cached,
                "latency_s": round(res.latency_s, 3),
                **res.usage,
            }
        )
        try:
            return [e for e in (text_processing(x) for x in oc.ner_entities(res.text)) if e]
        except (ValueError, AttributeError) as e:
            record_fallback(trace, "official_ner_query", f"no anchors: {e}")
            return []

    def _filter(self, question: str, candidates: np.ndarray, trace: dict) -> np.ndarray:
        """The recognition filter: hopbench's JSON prompt (prompts: json) or, as the code,
        demonstrations with facts in and out, mapped back by difflib in the reply's order."""
        if self.prompts == "json":
            return self.seeding.llm_filter(question, candidates, trace)
        from hopbench.llm.errors import LLMFormatError
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.catrag.prompts import fact_filter_demos as fd

        triples = [self.kg.fact_triple(int(f)) for f in candidates]
        calls: list = []
        kept = candidates[:0]
        step = "official_fact_filter" if self.prompts == "official" else fd.SCHEMA_NAME
        with fallback_on_bad_reply(trace, step, instead="no fact kept"):
            if self.prompts == "official":
                res = self.llm.chat(
                    self.official.filter_messages(question, triples), max_tokens=512
                )
                calls.append(
                    {
                        "schema": step,
                        "cached": res.cached,
                        "latency_s": round(res.latency_s, 3),
                        **res.usage,
                    }
                )
                generated = fd.parse_official(res.text)
                if not generated and "fact_after_filter" not in res.text:
                    raise LLMFormatError(step, 1, "no fact_after_filter field", res.text)
            else:
                reply = self.llm.chat_json(
                    fd.messages(question, triples),
                    fd.SCHEMA,
                    schema_name=fd.SCHEMA_NAME,
                    max_tokens=160,
                    trace=calls,
                )
                generated = reply["fact"]
            kept = candidates[fd.selected_positions(generated, triples, self.seeding.linking_top_k)]
        trace["llm_calls"] = calls
        return kept

    def anchor(self, question, w: np.ndarray, trace: dict, kept=None) -> np.ndarray:
        """Add epsilon / divisor for each linked question entity that is not a seed yet.

        ``anchor_divisor: own`` divides by the anchor's own passage count (paper). ``code``
        does what CatRAG.py computes: the divisor is the passage count of the variable
        ``phrase_key`` left from the previous loop, i.e. the object of the last kept fact for
        the first anchor added, then the anchor added before; anchors are visited in the order
        of the Python set of their node indices, as the code's ``list(set(...))``."""
        mentions = self.question_entities(question, trace)
        if self.anchor_text == "processed":
            from hopbench.kg.hipporag2 import text_processing

            mentions = [m for m in (text_processing(x) for x in mentions) if m]
        w = w.copy()
        anchors, linked = [], []
        if mentions and len(self.seeding.entity_emb):
            linked = [
                int(e)
                for e in nearest_entities(self.seeding.vectors(mentions), self.seeding.entity_emb)
            ]
            if self.anchor_divisor == "code":
                first = {}
                for m, e in zip(mentions, linked, strict=True):
                    first.setdefault(e, m)
                pairs = [(first[e], e) for e in list(set(linked))]
                prev = (
                    int(self.kg.fact_object[int(kept[-1])])
                    if kept is not None and len(kept)
                    else None
                )
            else:
                pairs = list(zip(mentions, linked, strict=True))
            for m, e in pairs:
                if w[e] > 0:
                    continue
                src = e if self.anchor_divisor == "own" else prev
                c = self.seeding.passage_counts[src] if src is not None else 0
                w[e] = self.epsilon / c if c > 0 else self.epsilon
                anchors.append([m, self.kg.entity_names[e], float(w[e])])
                prev = e
        trace["linked_mentions"] = mentions
        trace["linked_nodes"] = [self.kg.entity_names[e] for e in linked]
        trace["anchors"] = anchors
        return w

    # -- 2./3. stage I and II ------------------------------------------------------------
    def neighbour_sims(self, seed: int, fact_cos: np.ndarray) -> dict[int, tuple[float, list[int]]]:
        """{neighbour: (best cos(question, fact), joining facts best first)} over seed's facts."""
        kg = self.kg
        out: dict[int, tuple[float, list[int]]] = {}
        for f in kg.facts_of_entity(seed):
            f = int(f)
            s, o = int(kg.fact_subject[f]), int(kg.fact_object[f])
            v = o if s == seed else s
            if v == seed:
                continue
            best, facts = out.get(v, (-np.inf, []))
            out[v] = (max(best, float(fact_cos[f])), facts + [f])
        for v, (best, facts) in out.items():
            out[v] = (best, sorted(facts, key=lambda f: (-fact_cos[f], f)))
        return out

    def listed_neighbours(self, u: int, sims: dict) -> tuple[list[int], list[int]]:
        """The code's stage I list (CatRAG.py, graph_search_with_fact_entities): every neighbour
        sharing a fact, once per out-edge of u to it (a direction with a fact or a synonym entry
        each give one), in node order; when more than k_edge entries, the k_edge best by
        question-fact score (a stable sort), the others skipped."""
        directed = self._fact_directions
        syn = self.kg.synonym
        entries: list[int] = []
        for v in sorted(sims):
            has_syn = syn[u, v] > 0
            copies = int(has_syn or (u, v) in directed) + int(has_syn or (v, u) in directed)
            entries += [v] * max(copies, 1)
        if len(entries) <= self.k_edge:
            return entries, []
        order = sorted(range(len(entries)), key=lambda i: -sims[entries[i]][0])
        return [entries[i] for i in order[: self.k_edge]], [
            entries[i] for i in order[self.k_edge :]
        ]

    def context_of(self, v: int, fact_cos: np.ndarray, trace: dict) -> str:
        """C(v): v's facts when it has at most tau of them, else a summary (LLM, memoised)."""
        from hopbench.retrieve.catrag.prompts import neighbour_lines, neighbour_scores

        ns = neighbour_scores if self.prompts == "json" else neighbour_lines

        kg = self.kg
        facts = [int(f) for f in kg.facts_of_entity(v)]
        if len(facts) <= self.tau:
            return ns.format_facts([kg.fact_triple(f) for f in facts])
        if not self.summaries:  # harness variant: the tau facts closest to the question
            best = sorted(facts, key=lambda f: (-fact_cos[f], f))[: self.tau]
            return ns.format_facts([kg.fact_triple(f) for f in best])
        if v not in self._summaries:
            return self._summarise(v, facts, trace)
        return self._summaries[v]

    def _summarise(self, v: int, facts: list[int], trace: dict) -> str:
        """The LLM summary of v (memoised), or its first tau facts when the reply is empty; the
        fallback is not memoised, so every question it affects records it."""
        from hopbench.llm.errors import LLMFormatError
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.catrag.prompts import (
            entity_summary,
            neighbour_lines,
            neighbour_scores,
        )
        from hopbench.retrieve.catrag.prompts import official_catrag as oc

        kg = self.kg
        name = kg.entity_names[v]
        triples = [
            kg.fact_triple(f)
            for f in (facts[: self.summary_facts] if self.summary_facts else facts)
        ]
        calls = trace.setdefault("llm_calls", [])
        official = self.prompts == "official"
        step = "official_node_summarize" if official else entity_summary.STEP
        with fallback_on_bad_reply(trace, step, instead=f"the facts of {name!r}"):
            msgs = (
                self.official.summary_messages(name, triples)
                if official
                else entity_summary.messages(name, triples)
            )
            res = self.llm.chat(msgs, max_tokens=self.summary_max_tokens)
            calls.append(
                {
                    "schema": step,
                    "cached": res.cached,
                    "latency_s": round(res.latency_s, 3),
                    **res.usage,
                }
            )
            text = oc.summary_text(res.text) if official else entity_summary.clean(res.text)
            if not text:
                raise LLMFormatError(step, 1, "empty summary", res.text)
            self._summaries[v] = text
            return text
        fmt = neighbour_scores if self.prompts == "json" else neighbour_lines
        return fmt.format_facts(triples[: self.tau])

    def score_neighbours(
        self,
        question,
        seed: int,
        kept_nbrs: list[int],
        sims: dict,
        retrieved: list,
        fact_cos: np.ndarray,
        trace: dict,
    ) -> dict[int, int]:
        """LLM scores 0-10 for the kept neighbours of one seed. prompts=json: a batch whose
        reply never matches its schema gets none (its edges keep their base weight);
        lines/official: reply lines parsed as the code does, an unparsed neighbour gets the
        code's default 4, recorded in trace["fallback"]."""
        kg = self.kg
        calls = trace.setdefault("llm_calls", [])
        out: dict[int, int] = {}
        for start in range(0, len(kept_nbrs), self.score_batch):
            batch = kept_nbrs[start : start + self.score_batch]
            names = [kg.entity_names[v] for v in batch]
            links = [
                [
                    kg.fact_triple(f)
                    for f in (sims[v][1][: self.link_facts] if self.link_facts else sims[v][1])
                ]
                for v in batch
            ]
            contexts = [self.context_of(v, fact_cos, trace) for v in batch]
            if self.prompts == "json":
                out.update(
                    self._score_json(
                        question, seed, batch, names, links, contexts, retrieved, calls, trace
                    )
                )
                continue
            from hopbench.retrieve.catrag.prompts import neighbour_lines as nl

            if self.prompts == "official":
                msgs = self.official.score_messages(
                    question.text,
                    retrieved,
                    kg.entity_names[seed],
                    list(zip(names, links, contexts, strict=True)),
                )
                step = "official_fact_score_with_sum"
            else:
                msgs = nl.messages(
                    question.text,
                    retrieved,
                    kg.entity_names[seed],
                    [
                        nl.Neighbour(n, lk, c)
                        for n, lk, c in zip(names, links, contexts, strict=True)
                    ],
                )
                step = nl.STEP
            res = self.llm.chat(msgs, max_tokens=SCORE_LINE_TOKENS * len(batch) + 16)
            calls.append(
                {
                    "schema": step,
                    "cached": res.cached,
                    "latency_s": round(res.latency_s, 3),
                    **res.usage,
                }
            )
            for v, name, score in zip(batch, names, nl.parse(res.text, names), strict=True):
                if score is None:
                    record_fallback(
                        trace,
                        step,
                        f"{name!r} (seed {kg.entity_names[seed]!r}) not in "
                        f"the reply: score {nl.DEFAULT_SCORE}",
                    )
                    score = nl.DEFAULT_SCORE
                out[v] = max(out.get(v, int(score)), int(score))  # copies: the code keeps the best
        return out

    def _score_json(
        self, question, seed, batch, names, links, contexts, retrieved, calls, trace
    ) -> dict:
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.catrag.prompts import neighbour_scores as ns

        items = [ns.Neighbour(n, lk, c) for n, lk, c in zip(names, links, contexts, strict=True)]
        msgs = ns.messages(question.text, retrieved, self.kg.entity_names[seed], items)
        with fallback_on_bad_reply(
            trace, ns.SCHEMA_NAME, instead=f"edges of {self.kg.entity_names[seed]!r} unchanged"
        ):
            reply = self.llm.chat_json(
                msgs,
                ns.schema(len(batch)),
                schema_name=ns.SCHEMA_NAME,
                max_tokens=8 + 4 * len(batch),
                trace=calls,
            )
            return {v: int(s) for v, s in zip(batch, reply["scores"], strict=True)}
        return {}

    def adapt(self, question, w: np.ndarray, kept: np.ndarray, q_emb: np.ndarray, trace: dict):
        """Edge multipliers for this question: ({(u, v): m} entity edges, {(u, p): m} context).

        ``score_merge: pair``: m applies to the relation part of A[u, v] only, from the score u's
        own call gave v. ``max_target``: m applies to the whole entry A[u, v] (relation and
        synonym), from the best score v got from any seed (`kernels.catrag.target_multipliers`);
        `entity_multipliers_are_full` tells `adapted_graph` which."""
        kg = self.kg
        E = kg.n_entities
        order = np.flatnonzero(w > 0)
        order = order[np.lexsort((order, -w[order]))][: self.n_seed]
        trace["stage1_seeds"] = [kg.entity_names[e] for e in order]
        rel_m: dict[tuple[int, int], float] = {}
        ctx_m: dict[tuple[int, int], float] = {}
        fact_cos = (
            self.seeding.fact_emb @ np.asarray(q_emb, dtype=np.float64)
            if kg.n_facts
            else np.zeros(0)
        )
        retrieved = [kg.fact_triple(int(f)) for f in kept]
        edges_trace = []
        best: dict[int, int] = {}
        skipped: set[int] = set()
        for u in (int(e) for e in order):
            if not self.edge_weighting:
                continue
            sims = self.neighbour_sims(u, fact_cos)
            if self.score_merge == "pair":
                ranked = cw.rank_neighbours(
                    self.relation_csr, u, {v: s for v, (s, _) in sims.items()}
                )
                ranked = [v for v in ranked if v in sims]
            elif self.neighbour_copies:
                ranked = None
                keep, pruned = self.listed_neighbours(u, sims)
            else:  # the code: every entity sharing a fact with the seed (its edge may be a synonym one)
                ranked = sorted(sims, key=lambda v: (-sims[v][0], v))
            if ranked is not None:
                keep, pruned = ranked[: self.k_edge], ranked[self.k_edge :]
            scores = self.score_neighbours(question, u, keep, sims, retrieved, fact_cos, trace)
            if self.score_merge == "pair":
                for v in pruned:
                    rel_m[(u, v)] = self.pruned_weight
                for v, s in scores.items():
                    rel_m[(u, v)] = cw.phi(s, self.phi_scale)
            else:
                skipped.update(pruned)
                for v, s in scores.items():
                    best[v] = max(best.get(v, s), s)
            edges_trace.append(
                {
                    "seed": kg.entity_names[u],
                    "pruned": len(pruned),
                    "scored": [[kg.entity_names[v], scores.get(v)] for v in keep],
                }
            )
        if self.edge_weighting and self.score_merge == "max_target":
            targets = {
                int(u): [
                    int(v)
                    for v in self.base.indices[self.base.indptr[u] : self.base.indptr[u + 1]]
                    if v < E
                ]
                for u in order
            }
            rel_m = cw.target_multipliers(
                targets, best, skipped, self.phi_scale, self.pruned_weight
            )
        if self.passage_boost:
            if self.boost_scope == "seeds":
                boost_entities = [int(e) for e in order]
            else:  # the code: every subject and object of a kept fact, in first-seen order
                boost_entities = list(
                    dict.fromkeys(
                        int(x) for f in kept for x in (kg.fact_subject[f], kg.fact_object[f])
                    )
                )
            for u in boost_entities:
                seed_facts = [
                    int(f) for f in kept if u in (int(kg.fact_subject[f]), int(kg.fact_object[f]))
                ]
                boosted = {int(p) for f in seed_facts for p in kg.passages_of_fact(f)}
                passages = [int(p) for p in kg.passages_of_entity(u)]
                mult = cw.key_fact_multipliers(
                    passages, boosted, self.passage_multiplier, self.passage_renormalise
                )
                ctx_m.update({(u, E + p): m for p, m in mult.items() if m != 1.0})
        trace["edge_scores"] = edges_trace
        trace["n_boosted_passage_edges"] = sum(1 for m in ctx_m.values() if m > 1.0)
        return rel_m, ctx_m

    # -- retrieval ---------------------------------------------------------------------------
    def adapted_graph(self, rel_m: dict, ctx_m: dict) -> sp.csr_matrix:
        entity_part = self.base if self.score_merge == "max_target" else self.relation_part
        return cw.adapted_adjacency(self.base, entity_part, self.context_part, rel_m, ctx_m)

    def retrieve(self, question, k: int) -> Retrieval:
        q_emb = self.services.query_embedding(question)
        dense = self.seeding.passage_emb @ np.asarray(q_emb, dtype=np.float64)
        trace: dict = {
            "filter": self.seeding.use_filter,
            "anchoring": self.anchoring,
            "edge_weighting": self.edge_weighting,
            "passage_boost": self.passage_boost,
        }
        w, kept, _ = self.seeding.recognise(question, q_emb, trace)
        if w is None:
            return self._finish(None, dense, trace, k)
        if self.anchoring:
            w = self.anchor(question, w, trace, kept)
        if not np.any(w > 0):
            record_fallback(trace, DENSE, "no seed entity")
            return self._finish(None, dense, trace, k)
        nz = np.flatnonzero(w)
        nz = nz[np.argsort(-w[nz], kind="stable")]
        trace["seeds"] = [[entity_node_id(self.kg.entity_names[e]), float(w[e])] for e in nz]
        rel_m, ctx_m = self.adapt(question, w, kept, q_emb, trace)
        graph = self.adapted_graph(rel_m, ctx_m)
        reset = np.concatenate([w, passage_reset(dense, self.seeding.passage_node_weight)])
        ppr = prepare_ppr(graph, check_symmetric=False)
        scores = self.solve_ppr(ppr, reset, k, trace, method="power")
        return self._finish(scores, dense, trace, k)

    def retrieve_batch(self, questions, k: int) -> list[Retrieval]:
        """One adapted graph per question, so no shared solve: plain per-question retrieval."""
        return [self.retrieve(q, k) for q in questions]
