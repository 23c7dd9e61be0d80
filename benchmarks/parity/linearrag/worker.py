"""Runs DEEP-PolyU/LinearRAG's own `LinearRAG.index` and `LinearRAG.retrieve`, unchanged, in their
virtual environment, on the inputs compare.py wrote (started by compare.py; not a hopbench module).

    python -m benchmarks.parity.linearrag.worker WORK_DIR OUT_JSON [--vectorized]

Inputs are given, not recomputed: the NER of every passage is their own cache file
(``ner_results.json`` in their working folder, which `index` reads instead of running spaCy),
the question entities come from a stand-in for their `SpacyNER.question_ner`, and every vector
from a stand-in embedding model that looks the text up in compare.py's table. Recording
wrappers keep what their methods return (activated entities, node weights, the igraph PPR
vector) without changing what they compute. Their code keeps entities and sentences in Python
sets, so its output depends on PYTHONHASHSEED (compare.py sets it); the orders it produced are
written out so hopbench can be given the same ones.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


class LookupEncoder:
    """The embedding model's `encode`, answered from a table of precomputed vectors."""

    def __init__(self, texts: list[str], vectors: np.ndarray) -> None:
        self.row = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors

    def encode(self, texts, **_kwargs):
        if isinstance(texts, str):
            return self.vectors[self.row[texts]].copy()
        if len(texts) == 0:
            return np.zeros((0, self.vectors.shape[1]), dtype=np.float32)
        return self.vectors[[self.row[t] for t in texts]].copy()


class GivenQuestionEntities:
    """Stands in for their SpacyNER: question entities as given (passage NER is in the cache)."""

    def __init__(self, entities: dict[str, list[str]]) -> None:
        self.entities = entities

    def question_ner(self, question: str):
        return list(self.entities[question])

    def batch_ner(self, *_args):
        raise RuntimeError("passage NER should have been read from ner_results.json")


def record(obj, name: str, log: dict) -> None:
    """Wrap obj.name so its return value is kept in log[name] (the call itself is unchanged)."""
    original = getattr(obj, name)

    def wrapper(*args, **kwargs):
        out = original(*args, **kwargs)
        log[name] = out
        return out

    setattr(obj, name, wrapper)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("out")
    ap.add_argument("--vectorized", action="store_true")
    a = ap.parse_args()
    work = Path(a.work)
    inputs = json.loads((work / "inputs.json").read_text())
    texts = json.loads((work / "vector_texts.json").read_text())
    encoder = LookupEncoder(texts, np.load(work / "vectors.npy"))
    rag = their_rag(work, inputs, encoder, a.vectorized)
    t = time.perf_counter()
    rag.index(inputs["passages"])
    index_s = time.perf_counter() - t

    # read as the index left them, before any retrieve call
    ent_text = rag.entity_embedding_store.hash_id_to_text
    orders = their_orders(rag)
    passage_index = {p: i for i, p in enumerate(inputs["passages"])}
    questions = inputs["questions"]
    t = time.perf_counter()
    rows = per_question_rows(rag, questions, ent_text, passage_index)
    per_question_calls_s = time.perf_counter() - t
    t = time.perf_counter()  # the timed pass: one call for all questions, as run.py makes it
    rag.retrieve(questions)
    retrieve_s = time.perf_counter() - t
    Path(a.out).write_text(
        json.dumps(
            {
                "index_seconds": index_s,
                "retrieve_seconds": retrieve_s,
                "per_question_calls_seconds": per_question_calls_s,
                "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
                "igraph": __import__("igraph").__version__,
                "numpy": np.__version__,
                "torch": __import__("torch").__version__,
                "python": sys.version.split()[0],
                "orders": orders,
                "names": vertex_texts(rag, ent_text, passage_index),
                "questions": rows,
            }
        )
    )


def their_rag(work: Path, inputs: dict, encoder: LookupEncoder, vectorized: bool):
    """Their `LinearRAG` on an empty store holding only the given NER cache, configured from
    compare.py's settings, with the given question entities in place of their spaCy."""
    from src.config import LinearRAGConfig
    from src.LinearRAG import LinearRAG

    run_dir = work / ("official_vec" if vectorized else "official_bfs")
    store = run_dir / "data"
    store.mkdir(parents=True, exist_ok=True)
    for f in store.iterdir():  # their stores load what is there: start empty
        f.unlink()
    (store / "ner_results.json").write_text(json.dumps(inputs["ner"]))
    s = inputs["settings"]
    config = LinearRAGConfig(
        dataset_name="data",
        embedding_model=encoder,
        spacy_model=inputs["spacy_model"],
        working_dir=str(run_dir),
        max_workers=1,
        retrieval_top_k=inputs["k"],
        max_iterations=s["max_iterations"],
        iteration_threshold=s["iteration_threshold"],
        passage_ratio=s["passage_ratio"],
        top_k_sentence=s["top_k_sentence"],
        passage_node_weight=s["passage_node_weight"],
        damping=s["damping"],
        use_vectorized_retrieval=vectorized,
    )
    rag = LinearRAG(global_config=config)
    rag.spacy_ner = GivenQuestionEntities(inputs["question_entities"])
    return rag


def their_orders(rag) -> dict:
    """The entity and sentence orders their sets produced (they depend on PYTHONHASHSEED), as
    texts, so hopbench can be given the same ones."""
    ent_text = rag.entity_embedding_store.hash_id_to_text
    sent_text = rag.sentence_embedding_store.hash_id_to_text
    return {
        "entities": list(rag.entity_embedding_store.texts),
        "sentences": list(rag.sentence_embedding_store.texts),
        "sentence_entities": {
            sent_text[s_id]: [ent_text[e] for e in ents]
            for s_id, ents in rag.sentence_hash_id_to_entity_hash_ids.items()
        },
        "entity_sentences": {
            ent_text[e]: [sent_text[s_id] for s_id in sents]
            for e, sents in rag.entity_hash_id_to_sentence_hash_ids.items()
        },
    }


def per_question_rows(rag, questions: list, ent_text: dict, passage_index: dict) -> list[dict]:
    """One `retrieve` call per question, so each one's internals can be kept: its ranking and,
    when it ran their graph search, the activated entities, the PPR vector and its reset."""
    vertex_names = rag.graph.vs["name"]
    log: dict = {}
    for name in ("calculate_entity_scores", "calculate_entity_scores_vectorized"):
        record(rag, name, log)
    record(rag, "calculate_passage_scores", log)
    record(rag.graph, "personalized_pagerank", log)
    rows = []
    for q in questions:
        log.clear()
        res = rag.retrieve([q])[0]
        row = {
            "top": [passage_index[p] for p in res["sorted_passage"]],
            "scores": [float(x) for x in res["sorted_passage_scores"]],
        }
        ent_key = next((k for k in log if k.startswith("calculate_entity_scores")), None)
        if ent_key is not None:
            _weights, activated = log[ent_key]
            row["activated"] = {ent_text[h]: [float(v[1]), int(v[2])] for h, v in activated.items()}
            row["ppr"] = dict(zip(vertex_names, map(float, log["personalized_pagerank"])))
            node_weights = log[ent_key][0] + log["calculate_passage_scores"]
            row["reset"] = {vertex_names[i]: float(w) for i, w in enumerate(node_weights) if w != 0}
        rows.append(row)
    return rows


def vertex_texts(rag, ent_text: dict, passage_index: dict) -> dict:
    """vertex name -> ("entity", text) or ("passage", index), so compare.py can map PPR scores
    onto its own nodes."""
    return {
        **{h: ("entity", t) for h, t in ent_text.items()},
        **{
            h: ("passage", passage_index[t])
            for h, t in rag.passage_embedding_store.hash_id_to_text.items()
        },
    }


if __name__ == "__main__":
    main()
