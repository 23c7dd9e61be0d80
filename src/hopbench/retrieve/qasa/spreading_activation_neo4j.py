"""QASA spreading activation inside Neo4j: the whole retrieval is ONE Cypher query per question.

What QASA claims (docs/methods/qasa.md): seed mapping, T gated propagation steps and top-K selection run
in one round trip and the graph never leaves the database. Here the graph is exported once into
its own namespace of the database (`hopbench.graphdb.export.ensure_exported`: labels and
vector indexes named after the graph's content hash, skipped when the stored export key
matches; other graphs and a user's own data are left alone, so runs on different graphs can
share a server at the same time), and each question sends only parameters: its mentions with
their embeddings and the question embedding (`hopbench.retrieve.qasa.activation_rules`, computed in
Python as the paper's LLM step is). The query (`hopbench.graphdb.sa_query`) is the authors'
(docs/methods/qasa.md): seeds, T propagation blocks with the built-in cosine as the gate, their
path block (top 30 rows; de-duplicated as they do, into the trace), and returns the seeds,
every activation and the top-k passages, ranked by the same rule as the in-memory
`SpreadingActivationRetriever`.

A question whose query exceeds ``graphdb.query_timeout`` is not fatal: its trace says
``query_timeout: true`` and it gets the dense ranking (computed in Python), so the run goes on.
"""

from __future__ import annotations

import logging
import time
from functools import partial

import numpy as np

from hopbench.core.errors import HopbenchError
from hopbench.graphdb.connection import GraphDB, QueryTimeout, check_apoc, connect
from hopbench.graphdb.export import ensure_exported
from hopbench.graphdb.sa_query import FORMS, GATE_FUNCTIONS, spreading_activation_query
from hopbench.kg.graph import entity_node_id
from hopbench.retrieve.base import DESCRIPTION_ORDER, Retrieval, Retriever, Services
from hopbench.retrieve.qasa import activation_rules as rules
from hopbench.retrieve.qasa.mentions import QasaMentions
from hopbench.retrieve.qasa.paths import dedupe_path_rows
from hopbench.retrieve.qasa.spread import TIE_FACTOR
from hopbench.retrieve.question import question_mentions
from hopbench.retrieve.run_checks import check_graph_matches
from hopbench.retrieve.text_vectors import TextVectors

log = logging.getLogger("hopbench.retrieve.qasa.spreading_activation_neo4j")

TOP_ACTIVATIONS = 30


class SpreadingActivationNeo4jRetriever(Retriever):
    """Seeds, propagation, gate and passage ranking computed by one Cypher query in Neo4j."""

    family = "spreading_activation"

    needs_graph = True
    needs_graphdb = True
    # as the in-memory version: seeds and gate read the description vectors
    position_features = (DESCRIPTION_ORDER,)

    def __init__(
        self,
        *,
        decay: float = 0.7,  # δ
        depth: int = 3,  # T propagation blocks in the query
        threshold: float = 0.01,  # θ
        gate: bool = True,  # false: the ungated ablation
        form: str = "apoc",  # apoc: the paper's query (apoc.map.fromPairs);
        #   portable: plain Cypher, no APOC
        seed_fallback_k: int = rules.SEED_FALLBACK_TOTAL,  # k = max(1, 5 // n_mentions)
        #   entities per unmatched mention
        vector_candidates: int = 1000,  # entity vector-index hits per unmatched mention (HNSW
        #   is approximate: 100 missed the nearest entity of 2 of 1,000 2Wiki questions,
        #   1,000 missed none; docs/methods/qasa.md) ...
        vector_rerank_margin: int = 10,  # ... of which the best k + margin are re-ranked by
        #   the exact cosine
        dense_candidates: int = 1000,  # passage vector-index hits for the dense fill (when
        #   fewer than k passages are activated; 100 missed a 7th-nearest passage on HoVer)
        export_batch_size: int = 1000,  # rows per UNWIND write when the graph is exported
        seed_score: str = "index",  # as retriever=spreading_activation (activation_rules
        seed_norm: str = "all",  #   rule 2): the authors' seed scores and normalisation
        edges: str = "pairs",  # pairs: one edge per ordered pair (the authors'); facts
        gate_function: str = "native",  # native: the authors' built-in cosine (float32);
        #   exact: float64 in Cypher, the in-memory kernel's floats
        top_paths: int = 30,  # the authors' path block: its top rows into the trace
        #   (0: no path block)
        mentions: str = "spacy",  # as retriever=spreading_activation (qasa_mentions):
        #   spacy, or llm: {name, search_hint} pairs, the hint
        #   is what the vector seeds embed (needs llm=)
        llm_name: str | None = None,
        prompts: str = "own",  # mentions: llm: own or official (the authors' text,
        official_src: str | None = None,  #   read from official_src at run time)
    ) -> None:
        if not 0.0 < decay <= 1.0:
            raise HopbenchError(f"retriever.decay must be in (0, 1], got {decay}")
        if form not in FORMS:
            raise HopbenchError(f"retriever.form must be one of {', '.join(FORMS)}, got {form!r}")
        if int(depth) != depth or depth < 0:
            raise HopbenchError(f"retriever.depth must be an integer >= 0, got {depth}")
        self.decay, self.depth, self.threshold = float(decay), int(depth), float(threshold)
        self.gate, self.form = bool(gate), form
        self.seed_fallback_k = int(seed_fallback_k)
        self.vector_candidates, self.dense_candidates = (
            int(vector_candidates),
            int(dense_candidates),
        )
        self.vector_rerank_margin = int(vector_rerank_margin)
        self.export_batch_size = int(export_batch_size)
        for key, value, allowed in (
            ("seed_score", seed_score, rules.SEED_SCORES),
            ("seed_norm", seed_norm, rules.SEED_NORMS),
            ("edges", edges, rules.EDGE_RULES),
        ):
            if value not in allowed:
                raise HopbenchError(
                    f"retriever.{key} must be one of {', '.join(allowed)}, got {value!r}"
                )
        if gate_function not in GATE_FUNCTIONS:
            raise HopbenchError(
                f"retriever.gate_function must be one of {', '.join(GATE_FUNCTIONS)}, "
                f"got {gate_function!r}"
            )
        self.seed_score, self.seed_norm, self.edges = seed_score, seed_norm, edges
        self.gate_function, self.top_paths = gate_function, int(top_paths)
        self.mention_step = QasaMentions(
            mentions, llm_name, prompts, official_src, "spreading_activation_neo4j"
        )
        self.mentions, self.prompts, self.official_src = mentions, prompts, official_src
        self.needs_llm = self.mention_step.needs_llm
        self.db: GraphDB | None = None
        self.n_timeouts = 0

    # -- set-up ---------------------------------------------------------------------------
    def prepare(self, kg, services: Services, db: GraphDB | None = None) -> None:
        """Connect (``services.graphdb`` settings unless `db` is given), export the graph if its
        namespace does not hold it yet, and build the query text (over that namespace) once."""
        check_graph_matches(kg, services)
        self.kg, self.services = kg, services
        if db is None:
            if services.graphdb is None:
                raise HopbenchError(
                    "spreading_activation_neo4j needs a Neo4j server: the run's "
                    "`graphdb` config is missing (configs/graphdb/local.yaml)"
                )
            db = connect(services.graphdb)
        self.db = db
        if self.form == "apoc":
            with db.translate_errors("APOC check"), db.session() as s:
                if check_apoc(s) is None:
                    raise HopbenchError(
                        f"Neo4j at {db.uri} has no APOC (apoc.map.fromPairs); "
                        "install APOC core or set retriever.form=portable"
                    )
        t0 = time.perf_counter()
        self.export = ensure_exported(
            db,
            kg,
            pair_counts=partial(rules.relation_matrix, edges="pairs"),
            batch_size=self.export_batch_size,
        )
        self.export_seconds = time.perf_counter() - t0
        if self.export.exported:
            log.info("exported the graph to %s in %.1f s", db.uri, self.export.seconds)
        self.cypher = spreading_activation_query(
            self.form,
            self.depth,
            self.gate,
            self.export.namespace,
            self.edges,
            self.gate_function,
            self.top_paths > 0,
        )
        self.search_steps = max(1, int(kg.n_entities).bit_length() + 1)
        self.vectors = TextVectors(services.encoder)
        self.passage_emb = np.asarray(services.passage_embeddings, dtype=np.float64)
        if self.mentions == "spacy":
            question_mentions("warm up")  # load spaCy once, outside any timed retrieval

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    # -- one question ---------------------------------------------------------------------
    def parameters(self, question, k: int, trace: dict | None = None) -> dict:
        """Everything the query needs, as parameters (never pasted into the Cypher text).

        `trace` receives what the mention step records (LLM calls, a fallback). A mention no
        entity name matches is searched by its search hint's vector (the mention itself with
        spaCy mentions, the LLM's hint with `mentions: llm`), as in memory."""
        trace = {} if trace is None else trace
        mentions = self.mention_step(question, self.services.llm, trace)
        names, hints = rules.split_mentions(mentions)
        if any(isinstance(m, rules.Mention) for m in mentions):
            trace["search_hints"] = hints
        unmatched = [h for m, h in zip(names, hints) if self.kg.entity_index(m) is None]
        vecs = dict(zip(unmatched, self.vectors(unmatched))) if unmatched else {}
        qe = np.asarray(self.services.query_embedding(question), dtype=np.float32)
        kpm = rules.fallback_k(len(mentions), self.seed_fallback_k)
        return {
            # exact matches need no vector; the query only searches for unmatched mentions
            "mentions": [
                {
                    "name": m,
                    "emb": vecs[h].astype(np.float64).tolist()
                    if self.kg.entity_index(m) is None
                    else None,
                }
                for m, h in zip(names, hints)
            ],
            "k_per_mention": kpm,
            "seed_index": self.seed_score == "index",
            "seed_norm_all": self.seed_norm == "all",
            "vector_candidates": max(self.vector_candidates, kpm),
            "vector_rerank": kpm + self.vector_rerank_margin,
            "qe": qe.astype(np.float64).tolist(),
            "qe_norm": float(np.linalg.norm(qe.astype(np.float64))) or 1.0,
            "decay": self.decay,
            "threshold": self.threshold,
            "tie_factor": TIE_FACTOR,
            "k": int(k),
            "dense_candidates": max(self.dense_candidates, int(k)),
            "search_steps": self.search_steps,
            "top_paths": max(self.top_paths, 1),
        }

    def run_query(self, params: dict) -> dict:
        """The single round trip; returns {seeds, activation, ranked} with entity names as keys."""
        rows = self.db.query(self.cypher, params, what="spreading-activation query")
        row = rows[0]
        if self.form == "apoc":
            seeds, activation = row["seed_map"], row["activation"]
        else:
            names = self.kg.entity_names
            seeds = {names[i]: a for i, a in zip(row["seed_ids"], row["seed_acts"])}
            activation = {names[i]: a for i, a in zip(row["ids"], row["acts"])}
        return {
            "seeds": seeds,
            "activation": activation,
            "ranked": row["ranked"],
            "path_rows": [(p["names"], p["weight"]) for p in row["paths"]],
        }

    def run_metrics(self, rows: list[dict]) -> dict:
        """n_query_timeouts: the run's questions whose query timed out (they got the dense ranking)."""
        return {
            "n_query_timeouts": sum(1 for r in rows if (r.get("trace") or {}).get("query_timeout"))
        }

    def retrieve(self, question, k: int) -> Retrieval:
        analysis: dict = {}  # the mention step's record (LLM calls, fallback), first in the trace
        params = self.parameters(question, k, analysis)
        mentions = [m["name"] for m in params["mentions"]]
        t0 = time.perf_counter()
        try:
            out = self.run_query(params)
        except QueryTimeout as exc:
            self.n_timeouts += 1
            log.warning("question %s: %s; using the dense ranking", question.id, exc)
            dense = self.passage_emb @ np.asarray(params["qe"])
            order = np.lexsort((np.arange(dense.size), -dense))[:k]
            fallback = [
                *analysis.pop("fallback", []),
                {"step": "dense_fallback", "reason": f"graph query timed out ({exc})"},
            ]
            return Retrieval(
                [self.kg.passage_ids[i] for i in order],
                [float(dense[i]) for i in order],
                {
                    **analysis,
                    "mentions": mentions,
                    "query_timeout": True,
                    "timeout_s": self.db.settings.query_timeout,
                    "fallback": fallback,
                },
            )
        query_ms = 1000 * (time.perf_counter() - t0)
        act = out["activation"]
        hot = sorted(act.items(), key=lambda kv: (-kv[1], self.kg.entity_index(kv[0])))[
            :TOP_ACTIVATIONS
        ]
        seeds = sorted(out["seeds"].items(), key=lambda kv: (-kv[1], self.kg.entity_index(kv[0])))
        trace = {
            **analysis,
            "mentions": mentions,
            "seeds": [{"entity": entity_node_id(n), "activation": a} for n, a in seeds],
            "n_activated": len(act),
            "activations": [[entity_node_id(n), float(a)] for n, a in hot],
            "n_top_k_by_activation": sum(1 for r in out["ranked"][:k] if r["by_activation"]),
            "query_ms": query_ms,
            "form": self.form,
        }
        if self.top_paths:  # the authors' path rows after their de-duplication
            trace["paths"] = [
                {"nodes": n, "weight": w} for n, w in dedupe_path_rows(out["path_rows"])
            ]
        ranked = out["ranked"][:k]
        return Retrieval([r["id"] for r in ranked], [float(r["score"]) for r in ranked], trace)
