"""Saving and loading a KnowledgeGraph: arrays in .npz, tables in .parquet, a JSON manifest.

A graph lives in its own folder named by its content hash. The folder is written under a
temporary name and renamed into place in one step, with the manifest written last, so a reader
sees either a complete graph or none. Nothing is pickled (np.load with allow_pickle=False).

The manifest holds the checksum of every other file (`hopbench.core.checksum`), checked before a
graph is loaded: a file whose bytes changed is refused with its name, never read as a graph.
A graph written before checksums is loaded as it is and gets them added to its manifest.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hopbench.core import checksum
from hopbench.core.atomic import fsync_path, fsync_tree, write_json
from hopbench.core.errors import HopbenchError
from hopbench.kg.description_layer import load_layer
from hopbench.kg.graph import KnowledgeGraph

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
ARRAYS = "arrays.npz"
_EMBEDDINGS = (
    "entity_embeddings",
    "description_embeddings",
    "passage_embeddings",
    "fact_embeddings",
)
_MATRICES = ("relation", "synonym", "context")
_FILES = (ARRAYS, "entities.parquet", "passages.parquet", "facts.parquet")


def _put_csr(arrays: dict, name: str, m: sp.spmatrix, values: bool = True) -> None:
    m = m.tocsr()
    if values:
        arrays[f"{name}_data"] = m.data.astype(np.float32)
    arrays[f"{name}_indices"] = m.indices.astype(np.int32)
    arrays[f"{name}_indptr"] = m.indptr.astype(np.int64)
    arrays[f"{name}_shape"] = np.array(m.shape, dtype=np.int64)


def _get_csr(arrays, name: str) -> sp.csr_matrix | None:
    """The matrix `_put_csr` stored (ones where it stored no values), None if absent."""
    if f"{name}_indptr" not in arrays:
        return None
    idx = arrays[f"{name}_indices"]
    data = arrays[f"{name}_data"] if f"{name}_data" in arrays else np.ones(len(idx), np.float32)
    shape = tuple(int(x) for x in arrays[f"{name}_shape"])
    return sp.csr_matrix((data, idx, arrays[f"{name}_indptr"]), shape=shape)


def is_complete(folder: str | Path) -> bool:
    return (Path(folder) / MANIFEST).exists()


def save_graph(kg: KnowledgeGraph, folder: str | Path) -> Path:
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        # description vectors may be deferred (None): kg/description_layer.py adds them later
        arrays: dict[str, np.ndarray] = {
            name: getattr(kg, name) for name in _EMBEDDINGS if getattr(kg, name) is not None
        }
        for name in _MATRICES:
            _put_csr(arrays, name, getattr(kg, name))
        arrays["passage_title_entity"] = kg.passage_title_entity.astype(np.int64)
        if kg.fact_sources is not None:  # all ones: no data array
            _put_csr(arrays, "fact_sources", kg.fact_sources, values=False)
        if kg.relation_own_direction is not None:
            _put_csr(arrays, "relation_own_direction", kg.relation_own_direction)
        with open(tmp / ARRAYS, "wb") as fh:
            np.savez(fh, **arrays)
        pd.DataFrame(
            {
                "name": kg.entity_names,
                "label": kg.entity_labels,
                "description": kg.entity_descriptions,
            }
        ).to_parquet(tmp / "entities.parquet", index=False)
        pd.DataFrame({"passage_id": kg.passage_ids}).to_parquet(
            tmp / "passages.parquet", index=False
        )
        pd.DataFrame(
            {
                "subject": kg.fact_subject.astype(np.int64),
                "relation": kg.fact_relation,
                "object": kg.fact_object.astype(np.int64),
                "passage": kg.fact_passage.astype(np.int64),
            }
        ).to_parquet(tmp / "facts.parquet", index=False)
        manifest = dict(kg.manifest)
        manifest["format_version"] = FORMAT_VERSION
        manifest["failed_passages"] = list(kg.failed_passages)
        manifest["checksums"] = checksum.digests(tmp, _FILES)
        write_json(tmp / MANIFEST, manifest)
        fsync_tree(tmp)  # every file durable before the folder's name says "complete"
        try:
            os.rename(tmp, folder)
        except OSError:
            if is_complete(folder):  # another process finished the same graph first
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                shutil.rmtree(folder, ignore_errors=True)  # a stale incomplete folder
                os.rename(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_path(folder.parent)
    return folder


def load_graph(folder: str | Path) -> KnowledgeGraph:
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(manifest, dict) or manifest.get("format_version") != FORMAT_VERSION:
            version = manifest.get("format_version") if isinstance(manifest, dict) else None
            raise HopbenchError(
                f"{folder / MANIFEST}: graph format {version} "
                f"is not {FORMAT_VERSION}; delete the folder to rebuild"
            )
        sums = manifest.get("checksums")
        if sums is not None:
            checksum.verify(folder, sums)
        with np.load(folder / ARRAYS, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        ents = pd.read_parquet(folder / "entities.parquet")
        passages = pd.read_parquet(folder / "passages.parquet")
        facts = pd.read_parquet(folder / "facts.parquet")
    except checksum.Damaged as exc:
        raise HopbenchError(
            f"{exc.path}: the cached graph is damaged ({exc.problem}); delete "
            f"{folder} to rebuild it"
        ) from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
        raise HopbenchError(
            f"{folder}: cannot read the cached graph ({type(exc).__name__}: "
            f"{str(exc)[:200]}); delete the folder to rebuild"
        ) from None
    if sums is None:
        _add_checksums(folder, manifest)
    mats = {name: _get_csr(arrays, name) for name in _MATRICES}
    sources = _get_csr(arrays, "fact_sources")
    own = _get_csr(arrays, "relation_own_direction")
    kg = KnowledgeGraph(
        entity_names=ents["name"].tolist(),
        entity_labels=ents["label"].tolist(),
        entity_descriptions=ents["description"].tolist(),
        passage_ids=passages["passage_id"].tolist(),
        fact_subject=facts["subject"].to_numpy(np.int64),
        fact_relation=facts["relation"].tolist(),
        fact_object=facts["object"].to_numpy(np.int64),
        fact_passage=facts["passage"].to_numpy(np.int64),
        **{name: arrays[name] for name in _EMBEDDINGS if name != "description_embeddings"},
        description_embeddings=(
            arrays["description_embeddings"]
            if "description_embeddings" in arrays
            else load_layer(folder)
        ),
        **mats,
        passage_title_entity=arrays["passage_title_entity"],
        failed_passages=list(manifest.get("failed_passages", [])),
        manifest={k: v for k, v in manifest.items() if k != "checksums"},
        fact_sources=sources,
        relation_own_direction=own,
    )
    if sources is None and manifest.get("construction") == "hipporag2":
        kg.fact_sources = _fact_sources_of_older_graph(folder, kg)
    return kg


def _fact_sources_of_older_graph(folder: Path, kg: KnowledgeGraph) -> sp.csr_matrix | None:
    """A hipporag2 graph saved before `fact_sources` was stored: derived from the extraction
    records beside it (the cache layout `kg/graphs/<key>`, `kg/extractions/<key>.jsonl`), which
    gives what a rebuild would; None when they are gone (`passages_of_fact` then says rebuild)."""
    from hopbench.kg.extraction import ExtractionLog
    from hopbench.kg.hipporag2 import fact_sources_from_records

    path = folder.parent.parent / "extractions" / f"{kg.manifest.get('extraction_key')}.jsonl"
    if not path.exists():
        return None
    records = ExtractionLog(path)
    try:
        return fact_sources_from_records(kg, records.records)
    except HopbenchError as exc:
        log.warning("%s: fact sources not derived from %s (%s)", folder, path, exc)
        return None
    finally:
        records.close()


def _add_checksums(folder: Path, manifest: dict) -> None:
    """A graph written before checksums: it loaded, so its files are recorded as they are now."""
    try:
        write_json(folder / MANIFEST, {**manifest, "checksums": checksum.digests(folder, _FILES)})
    except OSError as exc:  # a read-only cache still loads; it is checked again next time
        log.warning("%s: could not add checksums to the manifest (%s)", folder, exc)
    else:
        log.info("%s: checksums added to a graph written before them", folder)
