"""The retriever contract: hyper-parameters in __init__, per-graph work in prepare(), then retrieve()."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hopbench.data.schema import Dataset, Question
from hopbench.embed.encoder import Encoder
from hopbench.retrieve.registry import Configurable

# The position feature of every retriever that reads the graph's entity description vectors:
# the KG builder takes an entity's label, its facts (up to `max_facts`) and its first-mention
# sentence in corpus order (kg/assembly.py, kg/descriptions.py), so a shuffled corpus gives some
# entities other description texts and vectors (tests/retrieve/test_order_invariance.py)
DESCRIPTION_ORDER = "entity_descriptions"


@dataclass
class Retrieval:
    passage_ids: list[str]
    scores: list[float]
    trace: dict[str, Any] = field(default_factory=dict)


@dataclass
class Services:
    """What a retriever may use besides the graph: corpus, encoder, cached embeddings, the LLM."""

    dataset: Dataset
    encoder: Encoder
    llm: Any = None
    graphdb: Any = None  # the `graphdb` settings (mapping) for retrievers that run in Neo4j
    _passage_emb: np.ndarray | None = None
    _query_emb: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def passage_ids(self) -> list[str]:
        return [p.id for p in self.dataset.corpus]

    @property
    def passage_embeddings(self) -> np.ndarray:
        if self._passage_emb is None:
            self._passage_emb = self.encoder.encode(
                [p.content for p in self.dataset.corpus], desc="passages"
            )
        return self._passage_emb

    def encode_questions(self, questions: list[Question]) -> None:
        """Encode questions once; retrievers then look their vector up (see query_embedding).
        Each question alone: a resumed run encodes fewer of them, and must get the same vectors."""
        missing = [q for q in questions if q.id not in self._query_emb]
        if missing:
            vecs = self.encoder.encode(
                [q.text for q in missing], desc="questions", alone=True, query=True
            )
            self._query_emb.update({q.id: v for q, v in zip(missing, vecs, strict=True)})

    def query_embedding(self, question: Question) -> np.ndarray:
        if question.id not in self._query_emb:
            self.encode_questions([question])
        return self._query_emb[question.id]


class Retriever(Configurable):
    """Base class. A subclass takes only its hyper-parameters, as keyword-only arguments with
    defaults, in __init__ (they are its config's settings: `hopbench.retrieve.registry`),
    stores them as given and does no work there; per-graph work goes in prepare().

    What a run provides is read from the class (or, where a setting decides it, the
    instance): `needs_graph` (the knowledge graph is built or loaded, and its settings join
    the run hash), `needs_llm` (the run needs llm=..., whose settings join the hash),
    `needs_graphdb` (prepare() connects to the Neo4j server in `services.graphdb`),
    `needs_descriptions` (prepare() reads `kg.description_embeddings`; a graph built for a
    retriever that does not is saved without them, kg/description_layer.py).
    A method with counts of its own in metrics.json overrides `run_metrics`. `family` names the
    method its variants belong to (metrics.json's `method.family`: one colour in the figures);
    None: the config's name.
    """

    family: str | None = None

    needs_graph: bool = False
    needs_llm: bool = False
    needs_graphdb: bool = False
    needs_descriptions: bool = True  # the safe default; methods that never read them say False
    # What the ranking reads of corpus positions beyond breaking exact ties (e.g. LinearRAG's
    # adjacent-passage edges). A method that declares none must rank the same under a shuffled
    # corpus (tests/retrieve/test_order_invariance.py; dataset.corpus_order)
    position_features: tuple[str, ...] = ()
    # True where `retrieve_batch` is an override proven row for row equal to `retrieve`
    # (tests/retrieve/test_batched_rows.py): only then does the run loop hand it blocks. Read
    # from the class's own body, not inherited: a subclass must be proven again
    exact_batches: bool = False
    # Settings added after run hashes existed, at the value that changes nothing: left out of
    # the run hash while at it (harness.runner.semantic_config), so earlier runs keep theirs
    added_defaults: dict = {}

    def prepare(self, kg, services: Services) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def retrieve(self, question: Question, k: int) -> Retrieval:  # pragma: no cover - interface
        raise NotImplementedError

    def retrieve_batch(self, questions: list[Question], k: int) -> list[Retrieval]:
        """`retrieve` of each question, in order. A method whose work shares passes over the
        graph or the vectors overrides it (the run loop then hands it blocks of questions when
        no LLM is used: `hopbench.harness.question_blocks`); an override must return, for every
        question, rankings and scores equal to the last bit to what `retrieve` returns."""
        return [self.retrieve(q, k) for q in questions]

    def run_metrics(self, rows: list[dict]) -> dict:
        """This method's own entries of metrics.json, from every row of the run (the
        predictions.jsonl records); the runner adds them to the shared ones. None here."""
        return {}
