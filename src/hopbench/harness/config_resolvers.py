"""OmegaConf resolvers and structured configs the Hydra configs use (registered once, on import).

`hopbench.retrieve.registry.register_configs`: ``retriever/schema/<Class>``, every retriever's
settings with their defaults, read from its constructor (configs/retriever/*.yaml start from it).
`hopbench.kg.settings.register_schema`: ``graph/schema/settings``, every graph setting with its
default (configs/graph/*.yaml start from it).

`hopbench.embedding_instruction`: the query or passage instruction of an embedding model
(`hopbench.embed.server.KNOWN_INSTRUCTIONS`), resolved into the config so that the run's
config.yaml shows it and its hash covers it.

`hopbench.dataset_name`: a dataset group's name only for its own bundled file. A user who points
`dataset=musique` at their own questions file gets runs filed under `musique-<file stem>`,
not under `musique`, so the report never pairs their numbers with the subset's baseline;
`dataset.name=...` names them explicitly.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from omegaconf import OmegaConf


def dataset_name(group: str, questions_path, bundled_path) -> str:
    if questions_path in (None, "", "None") or (
        bundled_path
        and os.path.normpath(str(questions_path)) == os.path.normpath(str(bundled_path))
    ):
        return group
    stem = Path(str(questions_path)).name
    for suffix in (".jsonl", ".ndjson", ".json"):
        stem = stem.removesuffix(suffix)
    return f"{group}-{re.sub(r'[^A-Za-z0-9._-]+', '_', stem).strip('_') or 'file'}"


def embedding_instruction(model, kind: str):
    from hopbench.embed.server import instruction_for

    return instruction_for(model, kind)


def register() -> None:
    if not OmegaConf.has_resolver("hopbench.dataset_name"):
        OmegaConf.register_new_resolver("hopbench.dataset_name", dataset_name)
    if not OmegaConf.has_resolver("hopbench.embedding_instruction"):
        OmegaConf.register_new_resolver("hopbench.embedding_instruction", embedding_instruction)
    from hopbench.kg.settings import register_schema
    from hopbench.retrieve.registry import register_configs

    register_configs()
    register_schema()


register()
