"""What a run records about its method: its family, its default settings and the settings
of the run that differ from them (metrics.json's `method`), so the report reads them from the
run instead of importing the retrievers.

A method's defaults are its retriever YAML (configs/retriever/<name>.yaml, with the files of its
`defaults:` list merged as Hydra merges them), then the keyword defaults of its class for the
keys the YAML does not set.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
from pathlib import Path

import yaml

from hopbench.core.param_values import flat_params, plain_value, same_value
from hopbench.core.paths import RETRIEVER_CONFIGS

# Config keys that say where things live, not what was computed: never settings.
RETRIEVER_SKIP = {"name", "_target_"}


def method_record(retriever_cfg: dict, config: dict, family: str) -> dict:
    """metrics.json's `method`: {"family", "defaults", "params_diff"} for a run's retriever
    config (`config`: the whole run config, for defaults that interpolate another group)."""
    name = retriever_cfg.get("name")
    params = flat_params({k: v for k, v in retriever_cfg.items() if k not in RETRIEVER_SKIP})
    target = (_method_yaml(name, str(RETRIEVER_CONFIGS)) or {}).get(
        "_target_"
    ) or retriever_cfg.get("_target_")
    defaults = {
        **(_class_defaults(target) if isinstance(target, str) else {}),
        **(method_defaults(name) or {}),
    }
    resolved = {}
    for key, value in defaults.items():
        ok, value = _resolve(value, config)
        if ok:
            resolved[key] = plain_value(value)
    return json.loads(
        json.dumps(
            {
                "family": family,
                "defaults": resolved,
                "params_diff": params_diff(params, name, config),
            },
            default=str,
        )
    )


_INTERPOLATION = re.compile(r"^\$\{([A-Za-z0-9_.]+)\}$")


def _read_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _merged_yaml(name: str, config_dir: Path, seen: tuple[str, ...] = ()) -> dict | None:
    """configs/retriever/<name>.yaml with the files of its `defaults:` list merged under it, in
    the list's order (`_self_` where listed, else last: Hydra's rule); None when there is no file."""
    path = config_dir / f"{name}.yaml"
    if name in seen or not path.is_file():
        return None
    own = _read_yaml(path)
    entries = own.pop("defaults", None) or []
    if "_self_" not in entries:
        entries = [*entries, "_self_"]
    out: dict = {}
    for entry in entries:
        if entry == "_self_":
            _deep_update(out, own)
        elif isinstance(entry, str) and entry.startswith("schema/"):
            _deep_update(out, _schema_settings(entry.split("@", 1)[0].split("/", 1)[1]))
        elif isinstance(entry, str):
            _deep_update(
                out, _merged_yaml(entry.rsplit("/", 1)[-1], config_dir, (*seen, name)) or {}
            )
    return out


def _deep_update(out: dict, new: dict) -> None:
    """Merge `new` into `out` as Hydra merges configs: a nested node key by key."""
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = dict(out[k])
            _deep_update(out[k], v)
        else:
            out[k] = v


@functools.lru_cache(maxsize=None)
def _schema_settings(class_name: str) -> dict:
    """`schema/<Class>` in a defaults list: that class's settings with their defaults, read from
    its constructor as Hydra's structured config is (hopbench.retrieve.registry); {} if unknown."""
    from hopbench.retrieve.registry import configurable_classes, settings

    cls = next((c for c in configurable_classes() if c.__name__ == class_name), None)
    return dict(settings(cls)) if cls is not None else {}


@functools.lru_cache(maxsize=None)
def _method_yaml(retriever: str, config_dir: str) -> dict | None:
    return _merged_yaml(retriever, Path(config_dir))


def _class_of(target: str):
    """The class a `_target_` names, or None when it cannot be imported (a label or a family
    must not fail because a user's module does not import)."""
    module, _, name = target.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except Exception:  # noqa: BLE001
        return None


@functools.lru_cache(maxsize=None)
def _class_defaults(target: str) -> dict:
    """Keyword defaults of the retriever class's __init__ ({} when it cannot be imported)."""
    cls = _class_of(target)
    try:
        sig = inspect.signature(cls.__init__) if cls is not None else None
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        return {}
    from hopbench.retrieve.registry import Nested

    return flat_params(
        {
            k: p.default.defaults() if isinstance(p.default, Nested) else p.default
            for k, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty
        }
    )


def method_defaults(retriever: str, config_dir: str | Path | None = None) -> dict | None:
    """The method's default hyper-parameters: its retriever YAML (with the YAMLs it inherits),
    without `name` / `_target_`; None when there is no YAML for it (a user's own retriever).
    A value may be an interpolation such as '${llm.name}' (see `params_diff`)."""
    merged = _method_yaml(retriever, str(config_dir or RETRIEVER_CONFIGS))
    if merged is None:
        return None
    return flat_params({k: v for k, v in merged.items() if k not in RETRIEVER_SKIP})


def _default_for(retriever: str, key: str, config_dir=None):
    """(found, value): the YAML default, else the class's __init__ default."""
    defaults = method_defaults(retriever, config_dir)
    if defaults is None:
        return False, None
    if key in defaults:
        return True, defaults[key]
    target = (_method_yaml(retriever, str(config_dir or RETRIEVER_CONFIGS)) or {}).get("_target_")
    cls = _class_defaults(target) if isinstance(target, str) else {}
    return (key in cls), cls.get(key)


def _resolve(value, config: dict | None):
    """'${llm.name}' looked up in the run's config; (resolved, value)."""
    m = _INTERPOLATION.match(value) if isinstance(value, str) else None
    if not m:
        return (not (isinstance(value, str) and "${" in value)), value
    node = config
    for part in m.group(1).split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def params_diff(params: dict, retriever: str, config: dict | None = None, config_dir=None) -> dict:
    """The parameters of a run whose value differs from its method's default (its retriever
    YAML, then the class's __init__ defaults for keys the YAML does not set).

    A default that interpolates another config group ('${llm.name}') is compared with the value
    it resolves to in the run's `config`; without a config it is never shown (it follows the
    run's LLM, which the table names elsewhere). A method without a YAML (a user's own
    retriever) has no known defaults: every parameter is returned.
    """
    if method_defaults(retriever, config_dir) is None:
        return dict(params)
    out = {}
    for key, value in params.items():
        found, default = _default_for(retriever, key, config_dir)
        if not found:
            out[key] = value
            continue
        resolved, default = _resolve(default, config)
        if resolved and not same_value(value, default):
            out[key] = value
    return out


def typed_value(retriever: str, key: str, value, config_dir=None):
    """A parameter value as its method declares it: an integral float of an integer parameter
    (a table column with gaps made it a float) back to int."""
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer():
        found, default = _default_for(retriever, key, config_dir)
        if found and isinstance(default, int) and not isinstance(default, bool):
            return int(value)
    return value


def family_of(retriever: str) -> str:
    """The `family` its class declares (hopbench.retrieve.base.Retriever), else the name."""
    target = (_method_yaml(retriever, str(RETRIEVER_CONFIGS)) or {}).get("_target_")
    family = getattr(_class_of(target), "family", None) if isinstance(target, str) else None
    return str(family) if family else retriever
