"""NeuroPath (docs/methods/neuropath.md): LLM-tracked paths over the fact graph, then dense completion.

Two handlings (docs/methods/neuropath.md):

* ``handling: reference`` (default, ``retriever=neuropath``): the authors' code's computation
  (KennyCaty/NeuroPath c9ed3ac), step by step in `hopbench.retrieve.neuropath.reference`:
  JSON-object-mode NER and tracker replies read with the reference's rules, no caps, a reply
  it cannot apply drops every path (dense ranking), no NER entity gives the dense ranking;
  prompts in our words after the authors' design, or theirs (``prompts: official``) read
  from a checkout at run time.
* ``handling: robust`` (``retriever=neuropath_robust``): hopbench's earlier, tolerant loop,
  described below, with the compact ``path_tracker`` prompt and its caps.

Both write ``trace["hop_stats"]`` (tracker calls, failed replies and why, whether the list
differs from the plain dense one); `run_metrics` sums them into metrics.json.

The robust handling, read from KennyCaty/NeuroPath ``src/neuropath.py`` (line numbers of that file) and the paper
(arXiv 2511.14096):

* **Coreference sets** (L116-123): each entity's top-5 entities by name-embedding cosine,
  self included (so at most 4 others), kept when cosine >= 0.8. ``expand_seed`` always adds
  the entity itself, so ``coref[e]`` = {e} + those neighbours.
* **Seeds** (L496): LLM query NER (the shared `question_entities` prompt) -> for each mention
  the entity with the highest name-embedding cosine (argmax), expanded with its coreference
  set. When NER returns nothing, the spaCy mentions (`question.question_mentions`)
  are used instead; when there are no mentions either, the ranking is plain dense retrieval
  (the reference's "fallback to pure similarity").
* **Hop loop** (L435-476, ``get_path_filtered_docs``). A *hop* is one round of
  (build candidate paths, prune the new ones, one tracker call); ``max_hop`` = 2 (L51) means
  at most 2 tracker calls and paths of at most 2 triples:

  - hop 1: every triple touching a seed entity (or its coreference set) is a one-triple path
    whose *link phrase* is its other end (duplicate triples dropped); all are new;
  - hop h > 1: the paths kept by the previous reply (valid ids and ids to expand, in id order)
    come first, unchanged and untagged; each path the tracker asked to expand grows by every
    triple touching its link phrase or that phrase's coreference set (a triple already on
    the path, or equal to an existing one-triple path, is skipped) and the new path's link
    phrase is the triple's other end; only paths shown with an [expand: ...] tag (the new
    ones of that hop) can be expanded, ids of untagged paths in need_expand_ids are ignored;
  - only the new paths are pruned: above ``filter_k`` (30) the top 30 by cosine(path text,
    g), g = the previous reply's expansion requirement (the question on hop 1; also the
    question when the requirement is empty, where the reference would embed "");
  - the tracker answers {current_chain, valid_ids, expansion_requirements, need_expand_ids,
    continue}; the valid paths are the *last* reply's valid ids (earlier valid paths count
    only when re-selected, as in the reference);
  - the loop stops on continue = 0, at the hop limit, when the reply has neither valid nor
    expandable paths (as the reference), or when it asks to continue with nothing to expand
    (a departure: the reference would call the tracker again on the same, all-locked paths).
* **Replay** (L501-515): q' = question + last current_chain + last expansion_requirements
  (joined with spaces; the reference concatenates them with no separator) is embedded and
  ranked densely over the corpus. Final list = passages visited along the valid paths (valid
  order, each path's triples in order, first occurrence kept; score 1 as in the reference)
  followed by the top ``dense_pool`` (100) dense passages not already listed; top k returned.

Switches (the paper's ablations, docs/methods/neuropath.md, Settings):

* ``one_shot`` (default false, as the reference's ``rank_docs`` runs zero-shot) adds one
  worked tracker example before the question, a harness variant for small models: the 1.5B
  local model answering zero-shot listed ids 1..10 and stopped at hop 1 on both smoke-test
  questions, while with the example it followed the protocol better, at about twice the
  LLM time per question;
* ``pruning: false`` keeps every new path ("w/o pruning"; R@5 barely moves in the paper);
* ``completion: false``: no second-stage retrieval with q'. The valid-path passages are
  followed by the plain question's dense ranking so Recall@k stays defined. The paper's
  "w/o completion" rows (MuSiQue R@2/R@5 41.8/45.3 against Contriever-only 34.8/46.6) show a
  list that is no worse than dense at 5, i.e. padded by the plain query; we mirror that
  reading, which is not spelled out in the code.

Robustness: a tracker reply that never matches its schema ends the loop with the valid
paths, chain and requirement of the previous hop; a NER reply that does not match (or names
no entity) is replaced by the spaCy mentions. Both are recorded in ``trace["fallback"]``.
This departs from the reference, which on a parse error drops every path and the chain. A
server that cannot be reached, or keeps failing, aborts the run (`hopbench.llm.policy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, record_fallback
from hopbench.kg.linking import nearest_entities
from hopbench.kg.text import normalize_name
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.neuropath.coref import coreference_sets, expand_with_coref
from hopbench.retrieve.question import question_mentions
from hopbench.retrieve.run_checks import check_graph_matches
from hopbench.retrieve.text_vectors import TextVectors


# ---- pure steps ---------------------------------------------------------------------------
def top_new(scores: np.ndarray, filter_k: int) -> np.ndarray:
    """Positions of the filter_k best scores, best first (ties by position)."""
    return np.lexsort((np.arange(len(scores)), -np.asarray(scores)))[:filter_k]


@dataclass(frozen=True)
class Path:
    facts: tuple[int, ...]  # fact indices, in walking order
    link: int  # entity at the open end (the phrase to expand)


def merge_ranking(
    path_passages: list[int], dense_scores: np.ndarray, k: int, dense_pool: int
) -> tuple[list[int], list[float]]:
    """Path passages (score 1) then the best `dense_pool` dense passages not yet listed."""
    order = np.lexsort((np.arange(len(dense_scores)), -np.asarray(dense_scores)))[:dense_pool]
    ids: list[int] = []
    scores: list[float] = []
    for p in path_passages:
        if p not in ids:
            ids.append(p)
            scores.append(1.0)
    for p in order:
        p = int(p)
        if p not in ids:
            ids.append(p)
            scores.append(float(dense_scores[p]))
    return ids[:k], scores[:k]


# ---- the retriever ------------------------------------------------------------------------
class NeuroPathRetriever(Retriever):
    """NeuroPath's Dynamic Path Tracking + Post-retrieval Completion (see module docstring)."""

    family = "neuropath"

    needs_graph = True
    needs_descriptions = False
    needs_llm = True

    def __init__(
        self,
        *,
        handling: str = "reference",  # reference: the authors' loop and reply rules
        #   (neuropath_reference); robust: hopbench's
        #   tolerant loop with caps (neuropath_robust)
        prompts: str = "own",  # own: the reference's design in our words;
        #   official: the authors' text read from
        #   official_src; compact: robust's short prompts
        official_src: str | None = None,  # checkout of KennyCaty/NeuroPath (prompts=official)
        max_hop: int = 2,  # tracker calls / path length in triples (L51, script default)
        filter_k: int = 30,  # new paths kept per hop by cosine to the previous
        #   expansion requirement (L223)
        coref_top_k: int = 5,  # coreference set: top-5 nearest entity names, self
        #   included (faiss k=5, L116) ...
        coref_threshold: float = 0.8,  # ... kept when cosine >= 0.8 (L123)
        dense_pool: int = 100,  # dense passages appended after the path passages
        #   (L509-513: top 100)
        pruning: bool = True,  # false = "w/o pruning" ablation (paper §4): every new
        #   path goes to the tracker
        completion: bool = True,  # false = "w/o completion": no replay with q'; path
        #   passages then the plain question's dense ranking
        one_shot: bool = False,  # true: a worked example in the tracker prompt (the
        #   reference's --one_shot switch; off in its script)
        ner: str = "llm",  # query NER by the LLM; spacy = spaCy mentions only
        #   (robust handling only)
        tracker_max_tokens: int = 4096,  # the reference sends no limit; 4096 is half the
        #   local context (robust: 200, with its schema)
        llm_name: str | None = None,  # configs pass ${llm.name}: the tracker needs an LLM
    ) -> None:
        if handling not in ("reference", "robust"):
            raise HopbenchError(f"retriever.handling must be reference or robust, got {handling!r}")
        allowed = ("own", "official") if handling == "reference" else ("compact",)
        if prompts not in allowed:
            raise HopbenchError(
                f"retriever.prompts must be one of {allowed} with "
                f"handling={handling}, got {prompts!r}"
            )
        if max_hop < 1:
            raise HopbenchError(f"retriever.max_hop must be >= 1, got {max_hop}")
        if filter_k < 1:
            raise HopbenchError(f"retriever.filter_k must be >= 1, got {filter_k}")
        if ner not in ("llm", "spacy") or (handling == "reference" and ner != "llm"):
            raise HopbenchError(
                f"retriever.ner must be llm (or spacy with handling=robust), got {ner!r}"
            )
        self.handling, self.prompts, self.official_src = handling, prompts, official_src
        self.max_hop = max_hop
        self.filter_k = filter_k
        self.coref_top_k = coref_top_k
        self.coref_threshold = coref_threshold
        self.dense_pool = dense_pool
        self.pruning = bool(pruning)
        self.completion = bool(completion)
        self.one_shot = bool(one_shot)
        self.ner = ner
        self.tracker_max_tokens = tracker_max_tokens
        if prompts == "official" and not official_src:
            raise HopbenchError(
                "retriever.prompts=official needs retriever.official_src: the "
                "path of a KennyCaty/NeuroPath checkout (it is never shipped)"
            )

    def prepare(self, kg, services: Services) -> None:
        check_graph_matches(kg, services)
        self.kg, self.services, self.llm = kg, services, services.llm
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        self.entity_emb = np.asarray(kg.entity_embeddings, dtype=np.float64)
        self.fact_emb = np.asarray(kg.fact_embeddings, dtype=np.float64)
        self.coref = coreference_sets(kg.entity_embeddings, self.coref_top_k, self.coref_threshold)
        self.vectors = TextVectors(services.encoder)
        self.query_vectors = TextVectors(
            services.encoder, query=True
        )  # question-like texts vs passages
        self.vectors.load_model()
        if self.handling == "reference":
            from hopbench.retrieve.neuropath import reference as ref

            self.index = ref.build_fact_index(kg)
            self.coref_others = ref.coref_neighbours(
                kg.entity_embeddings, self.coref_top_k, self.coref_threshold
            )
            self.entity_emb32 = np.asarray(kg.entity_embeddings, dtype=np.float32)
            self.passage_emb32 = np.asarray(services.passage_embeddings, dtype=np.float32)
        if self.prompts == "official":
            from hopbench.retrieve.neuropath.prompts import neuropath_official

            self.official = neuropath_official.load(self.official_src)

    # -- seeds -----------------------------------------------------------------------------
    def question_entities(self, question, trace: dict) -> list[str]:
        """Normalised mentions: LLM NER, spaCy when NER gives none (or `ner: spacy`)."""
        mentions: list[str] = []
        if self.ner == "llm":
            from hopbench.llm.policy import fallback_on_bad_reply
            from hopbench.llm.prompts import question_entities as qe

            with fallback_on_bad_reply(trace, qe.SCHEMA_NAME, instead="spaCy mentions instead"):
                reply = self.llm.chat_json(
                    qe.messages(question.text),
                    qe.SCHEMA,
                    schema_name=qe.SCHEMA_NAME,
                    max_tokens=96,
                    trace=trace["llm_calls"],
                )
                raw = qe.entities(reply)
                trace["ner"] = raw
                mentions = [m for m in dict.fromkeys(normalize_name(x) for x in raw) if m]
                if not mentions:
                    record_fallback(
                        trace, qe.SCHEMA_NAME, "no entity in the reply; spaCy mentions instead"
                    )
        if not mentions:
            mentions = question_mentions(question.text)
            trace["mention_source"] = "spacy"
        else:
            trace["mention_source"] = "llm"
        trace["mentions"] = mentions
        return mentions

    def seeds(self, question, trace: dict) -> list[int]:
        mentions = self.question_entities(question, trace)
        linked = nearest_entities(self.vectors(mentions), self.entity_emb)
        names = self.kg.entity_names
        trace["linked"] = [names[e] for e in linked]
        seeds = expand_with_coref(dict.fromkeys(linked), self.coref)
        trace["seeds"] = [names[e] for e in seeds]
        return seeds

    # -- paths -----------------------------------------------------------------------------
    def _other_end(self, f: int, e: int) -> int:
        s, o = int(self.kg.fact_subject[f]), int(self.kg.fact_object[f])
        return o if s == e else s

    def initial_paths(self, seeds: list[int]) -> list[Path]:
        """Hop 1: one path per distinct triple touching a seed (seeds already coref-expanded)."""
        kg = self.kg
        seen: set[tuple[str, str, str]] = set()
        out: list[Path] = []
        for e in seeds:
            for f in kg.facts_of_entity(e):
                f = int(f)
                t = kg.fact_triple(f)
                if t in seen:
                    continue
                seen.add(t)
                out.append(Path((f,), self._other_end(f, e)))
        return out

    def expansions(self, kept: list[Path], to_expand: list[Path]) -> list[Path]:
        """Hop > 1: each path to expand + every triple touching its link phrase (or coref)."""
        kg = self.kg
        single = {kg.fact_triple(p.facts[0]) for p in kept if len(p.facts) == 1}
        existing = {p.facts for p in kept}
        out: list[Path] = []
        for path in to_expand:
            on_path = set(path.facts)
            for e in self.coref[path.link]:
                for f in kg.facts_of_entity(e):
                    f = int(f)
                    if f in on_path or kg.fact_triple(f) in single:
                        continue
                    new = Path(path.facts + (f,), self._other_end(f, e))
                    if new.facts not in existing:
                        existing.add(new.facts)
                        out.append(new)
        return out

    def path_text(self, path: Path) -> str:
        return "; ".join(self.kg.fact_text(f) for f in path.facts)

    def path_vectors(self, paths: list[Path]) -> np.ndarray:
        """One-triple paths reuse the graph's fact embeddings (same text); longer ones are encoded."""
        longer = [self.path_text(p) for p in paths if len(p.facts) > 1]
        enc = iter(self.vectors(longer)) if longer else iter(())
        rows = [self.fact_emb[p.facts[0]] if len(p.facts) == 1 else next(enc) for p in paths]
        return np.asarray(rows, dtype=np.float64).reshape(len(paths), -1)

    def prune(self, new: list[Path], goal: str) -> list[Path]:
        """The filter_k new paths closest to `goal` (best first); all when pruning is off."""
        if not self.pruning or len(new) <= self.filter_k:
            return new
        g = np.asarray(self.vectors([goal])[0], dtype=np.float64)
        keep = top_new(self.path_vectors(new) @ g, self.filter_k)
        return [new[i] for i in keep]

    def render(self, path: Path, expandable: bool) -> str:
        from hopbench.retrieve.neuropath.prompts.path_tracker import render_path

        labels = self.kg.entity_labels
        triples = [
            (
                labels[self.kg.fact_subject[f]],
                self.kg.fact_relation[f],
                labels[self.kg.fact_object[f]],
            )
            for f in path.facts
        ]
        return render_path(triples, labels[path.link] if expandable else None)

    def triples(self, path: Path) -> list[list[str]]:
        return [list(self.kg.fact_triple(f)) for f in path.facts]

    # -- the loop --------------------------------------------------------------------------
    def track(self, question, seeds: list[int], trace: dict) -> tuple[list[Path], str, str]:
        """(valid paths of the last good reply, its current_chain, its expansion_requirements)."""
        from hopbench.llm.policy import fallback_on_bad_reply
        from hopbench.retrieve.neuropath.prompts import path_tracker as pt

        kept: list[Path] = []
        to_expand: list[Path] = []
        valid: list[Path] = []
        chain, requirement = "", ""
        hops: list[dict] = []
        trace["hops"] = hops
        for hop in range(1, self.max_hop + 1):
            new = self.initial_paths(seeds) if hop == 1 else self.expansions(kept, to_expand)
            goal = requirement if hop > 1 and requirement.strip() else question.text
            pruned = self.prune(new, goal)
            paths = kept + pruned
            record = {
                "hop": hop,
                "kept": len(kept),
                "new_before_pruning": len(new),
                "new_after_pruning": len(pruned),
                "goal": goal,
            }
            hops.append(record)
            if not paths:
                record["stop"] = "no candidate paths"
                break
            shown = [self.render(p, False) for p in kept] + [self.render(p, True) for p in pruned]
            msgs = pt.messages(question.text, shown, chain, requirement, one_shot=self.one_shot)
            with fallback_on_bad_reply(
                trace, pt.SCHEMA_NAME, instead=f"hop {hop}: the paths of the previous hop kept"
            ) as out:
                reply = self.llm.chat_json(
                    msgs,
                    pt.SCHEMA,
                    schema_name=pt.SCHEMA_NAME,
                    max_tokens=self.tracker_max_tokens,
                    trace=trace["llm_calls"],
                )
            if out.failed:
                record["stop"] = "tracker reply did not match its schema"
                break
            record["reply"] = reply
            valid_ids = pt.ids(reply.get("valid_ids"), len(paths))
            expand_ids = [
                i for i in pt.ids(reply.get("need_expand_ids"), len(paths)) if i >= len(kept)
            ]
            valid = [paths[i] for i in valid_ids]
            to_expand = [paths[i] for i in expand_ids]
            kept = [paths[i] for i in sorted(set(valid_ids) | set(expand_ids))]
            chain = str(reply.get("current_chain", "")).strip()
            requirement = str(reply.get("expansion_requirements", "")).strip()
            record["valid_paths"] = [self.triples(p) for p in valid]
            record["expand_paths"] = [self.triples(p) for p in to_expand]
            if int(reply.get("continue", 0)) == 0:
                record["stop"] = "continue=0"
                break
            if not valid and not to_expand:
                record["stop"] = "no valid or expandable path"
                break
            if hop == self.max_hop:
                record["stop"] = "hop limit"
                break
            if not to_expand:
                record["stop"] = "nothing to expand"
                break
        trace["valid_paths"] = [self.triples(p) for p in valid]
        trace["current_chain"] = chain
        trace["expansion_requirements"] = requirement
        return valid, chain, requirement

    def path_passages(self, valid: list[Path]) -> list[int]:
        out: list[int] = []
        for p in valid:
            for f in p.facts:
                d = int(self.kg.fact_passage[f])
                if d not in out:
                    out.append(d)
        return out

    # -- retrieval -------------------------------------------------------------------------
    def dense(self, text: str) -> np.ndarray:
        return self.passage_emb @ np.asarray(self.query_vectors([text])[0], dtype=np.float64)

    def retrieve(self, question, k: int) -> Retrieval:
        if self.handling == "reference":
            return self.retrieve_reference(question, k)
        return self.retrieve_robust(question, k)

    def retrieve_robust(self, question, k: int) -> Retrieval:
        trace: dict = {"pruning": self.pruning, "completion": self.completion, "llm_calls": []}
        q_dense = self.passage_emb @ np.asarray(
            self.services.query_embedding(question), dtype=np.float64
        )
        seeds = self.seeds(question, trace)
        if not seeds:
            record_fallback(trace, DENSE, "no seed entity")
            ids, scores = merge_ranking([], q_dense, k, max(self.dense_pool, k))
            self._hop_stats(trace, ids, q_dense, k)
            return self._retrieval(ids, scores, trace)
        valid, chain, requirement = self.track(question, seeds, trace)
        on_paths = self.path_passages(valid)
        trace["path_passages"] = [self.kg.passage_ids[p] for p in on_paths]
        if self.completion:
            q2 = " ".join(x for x in (question.text, chain, requirement) if x)
            trace["replay_query"] = q2
            scores = q_dense if q2 == question.text else self.dense(q2)
        else:
            scores = q_dense
        ids, out_scores = merge_ranking(on_paths, scores, k, self.dense_pool)
        self._hop_stats(trace, ids, q_dense, k)
        return self._retrieval(ids, out_scores, trace)

    def _retrieval(self, ids: list[int], scores: list[float], trace: dict) -> Retrieval:
        return Retrieval([self.kg.passage_ids[i] for i in ids], scores, trace)

    # -- the reference's loop (handling=reference) ---------------------------------------------
    def _ask(
        self, messages: list[dict], schema_name: str, max_tokens: int, trace: dict
    ) -> str | None:
        """The raw reply text of one JSON-object-mode request; None when the prompt does not fit
        (the reference's client raises there and the caller's except clause takes over)."""
        from hopbench.llm.errors import LLMContextOverflowError
        from hopbench.retrieve.neuropath.prompts.neuropath_tracker import SCHEMA

        try:
            res = self.llm.chat(
                messages, schema=SCHEMA, schema_name=schema_name, max_tokens=max_tokens
            )
        except LLMContextOverflowError as exc:
            trace["llm_calls"].append({"schema": schema_name, "error": str(exc)[:200]})
            return None
        trace["llm_calls"].append(
            {
                "schema": schema_name,
                "cached": res.cached,
                "latency_s": round(res.latency_s, 3),
                **res.usage,
                "error": res.error,
            }
        )
        return res.text

    def reference_mentions(self, question, trace: dict) -> list[str]:
        """Query NER as the reference reads it (``query_ner``, L531-549): processed mentions."""
        from hopbench.retrieve.neuropath.prompts import neuropath_ner as ner
        from hopbench.retrieve.neuropath.reference import read_ner_reply

        msgs = (
            self.official.ner_messages(question.text)
            if self.prompts == "official"
            else ner.messages(question.text)
        )
        text = self._ask(msgs, ner.SCHEMA_NAME, ner.MAX_TOKENS, trace)
        trace["ner_reply"] = text
        if text is None:
            trace["ner_problem"] = "prompt does not fit"
            return []
        mentions, problem = read_ner_reply(text)
        if problem:
            trace["ner_problem"] = problem
        trace["mentions"] = mentions
        return mentions

    def tracker_messages(self, question_text: str, block: str) -> list[dict]:
        from hopbench.retrieve.neuropath.prompts import neuropath_tracker as nt

        if self.prompts == "official":
            return self.official.tracker_messages(question_text, block, one_shot=self.one_shot)
        return nt.messages(question_text, block, one_shot=self.one_shot)

    def track_reference(self, question, seeds: list[int], trace: dict):
        """The reference's ``get_path_filtered_docs`` (L435-475): the final path state."""
        from hopbench.retrieve.neuropath import reference as ref
        from hopbench.retrieve.neuropath.prompts import neuropath_tracker as nt

        hops: list[dict] = []
        trace["hops"] = hops
        failures: list[str] = []
        trace["reply_failures"] = failures
        st = ref.PathState()
        flag, count, goal = 1, 0, question.text
        while count < self.max_hop and flag == 1:
            count += 1
            if count == 1:
                st, old_len, locked = ref.first_hop(self.index, seeds, self.coref_others), 0, None
            else:
                old_len, locked = ref.next_hop(self.index, st, self.coref_others)
            record = {"hop": count, "kept": old_len, "new_before_pruning": len(st.paths) - old_len}
            if self.pruning:  # goal is text: a reply whose requirement is not was dropped
                ref.prune(st, old_len, goal, self.vectors, self.filter_k)
            record["new_after_pruning"] = len(st.paths) - old_len
            record["goal"] = goal
            block = ref.path_block(self.index, st, locked, nt.path_line)
            record["paths"] = list(st.paths)
            hops.append(record)
            text = self._ask(
                self.tracker_messages(question.text, block),
                nt.SCHEMA_NAME,
                self.tracker_max_tokens,
                trace,
            )
            record["reply_text"] = text
            reply, problem = ref.read_tracker_reply(text or "")
            if text is None:
                problem = "prompt_too_long"
            flag, apply_problem = ref.apply_reply(st, reply)
            problem = problem or apply_problem
            if problem is None and not (
                isinstance(st.chain, str) and isinstance(st.requirement, str)
            ):
                # the reference's chain + requirement would raise and its run skip the question
                problem = "chain_not_text"
                st.drop_all()
                flag = 0
            if problem:
                failures.append(problem)
                record["problem"] = problem
            goal = st.requirement
            record["valid_paths"] = list(st.valid_paths)
            record["expand_paths"] = list(st.need_expand)
            record["continue"] = flag if isinstance(flag, int | float | str | bool) else str(flag)
            if not st.valid_paths and not st.need_expand:
                flag = 0
        trace["valid_paths"] = list(st.valid_paths)
        trace["current_chain"] = st.chain
        trace["expansion_requirements"] = st.requirement
        return st

    def retrieve_reference(self, question, k: int) -> Retrieval:
        """The reference's ``rank_docs`` (L479-527)."""
        from hopbench.retrieve.neuropath import reference as ref

        trace: dict = {
            "handling": "reference",
            "pruning": self.pruning,
            "completion": self.completion,
            "llm_calls": [],
        }
        plain = self.passage_emb32 @ self.query_vectors([question.text])[0]
        mentions = self.reference_mentions(question, trace)
        if not mentions:
            record_fallback(
                trace,
                DENSE,
                "query NER gave no entity"
                + (f" ({trace['ner_problem']})" if trace.get("ner_problem") else ""),
            )
            ids, scores = merge_ranking([], plain, k, max(self.dense_pool, k))
            self._hop_stats(trace, ids, plain, k)
            return self._retrieval(ids, scores, trace)
        sims = self.vectors(mentions) @ self.entity_emb32.T
        seeds = [int(np.argmax(row)) for row in sims]
        trace["linked"] = [self.kg.entity_names[e] for e in seeds]
        st = self.track_reference(question, seeds, trace)
        on_paths = ref.candidate_docs(st)
        trace["path_passages"] = [self.kg.passage_ids[p] for p in on_paths]
        if trace["reply_failures"]:
            record_fallback(
                trace,
                DENSE if not on_paths else "neuropath_tracker",
                "tracker reply not usable ("
                + ", ".join(trace["reply_failures"])
                + "): every path, the chain and the requirement dropped, as the reference does",
            )
        scores = plain
        if self.completion:
            q2 = question.text + st.chain + st.requirement
            trace["replay_query"] = q2
            if q2 != question.text:
                scores = self.passage_emb32 @ self.query_vectors([q2])[0]
        ids, out_scores = merge_ranking(on_paths, scores, k, self.dense_pool)
        self._hop_stats(trace, ids, plain, k)
        return self._retrieval(ids, out_scores, trace)

    # -- per-question hop statistics (both handlings) ----------------------------------------
    def _hop_stats(self, trace: dict, ids: list[int], plain_scores: np.ndarray, k: int) -> None:
        """How far the tracker got: calls made, failed replies and why, path passages, and
        whether the list differs from the plain question's dense list at all."""
        dense_ids, _ = merge_ranking([], plain_scores, k, max(self.dense_pool, k))
        hops = trace.get("hops") or []
        calls = sum(
            1
            for h in hops
            if "reply_text" in h
            or "reply" in h
            or str(h.get("stop", "")).startswith("tracker reply")
        )
        failures = list(trace.get("reply_failures") or [])
        if self.handling == "robust":
            failures = [
                f"schema:{e['step']}" for e in trace.get("fallback", []) if e.get("step") != DENSE
            ]
        trace["hop_stats"] = {
            "ner_entities": len(trace.get("mentions") or []),
            "tracker_calls": calls,
            "failed_replies": len(failures),
            "failure_reasons": failures,
            "path_passages": len(trace.get("path_passages") or []),
            "differs_from_dense": [int(i) for i in ids] != [int(i) for i in dense_ids],
        }

    def run_metrics(self, rows: list[dict]) -> dict:
        """NeuroPath's hop statistics over the run (from each row's trace.hop_stats)."""
        stats = [(r.get("trace") or {}).get("hop_stats") for r in rows]
        stats = [s for s in stats if s]
        if not stats:
            return {}
        n = len(stats)
        reasons: dict[str, int] = {}
        for s in stats:
            for why in s["failure_reasons"]:
                reasons[why] = reasons.get(why, 0) + 1
        calls = [s["tracker_calls"] for s in stats]
        return {
            "neuropath_questions": n,
            "neuropath_tracker_calls_mean": round(sum(calls) / n, 3),
            "neuropath_tracker_calls_hist": {str(c): calls.count(c) for c in sorted(set(calls))},
            "neuropath_second_hop_share": round(sum(c >= 2 for c in calls) / n, 4),
            "neuropath_no_ner_share": round(sum(s["ner_entities"] == 0 for s in stats) / n, 4),
            "neuropath_failed_replies": sum(s["failed_replies"] for s in stats),
            "neuropath_failed_reply_reasons": dict(sorted(reasons.items())),
            "neuropath_with_path_passages_share": round(
                sum(s["path_passages"] > 0 for s in stats) / n, 4
            ),
            "neuropath_differs_from_dense_share": round(
                sum(s["differs_from_dense"] for s in stats) / n, 4
            ),
        }
