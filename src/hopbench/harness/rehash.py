"""The one deliberate re-hash of issue #58, from a run's old hash to today's, which
- names the retriever's registry name, not its `_target_` (a Python import path: harness.runner);
- holds HippoRAG's seeding settings as one nested node (``retriever.seeding.*``, or
  ``retriever.hipporag_seeding.*`` in flow_diffusion_joint) where they were flat keys.

Between the two steps, runs and the reference were keyed by the registry name with flat seeding
keys (the "mid" hash); a run or a reference row under its old or its mid hash is re-keyed.

A run's new hash is computed from its stored config.yaml by the runner's own `semantic_config`
and `config_hash`; before a folder is renamed, the hash it had is recomputed from the same
config in the old form (the `_target_` it recorded, no registry name) and must equal the
folder's name, so a run is re-keyed only when its old hash is reproduced from what it stored.
The reference tables have no config.yaml: their rows are re-keyed through the grid that makes
them (`grid_rehash_map`), in the same two forms.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from hopbench.core.atomic import write_json
from hopbench.core.locks import Busy
from hopbench.harness.run_store import RunStore, config_hash

# Where each registered retriever class lived before issue #58 (its `_target_` then): the old
# form of a hash composed today, for the reference rows, which stored no config.yaml.
LEGACY_TARGETS = {
    "CatRAGRetriever": "hopbench.retrieve.catrag.CatRAGRetriever",
    "DenseRetriever": "hopbench.retrieve.dense.DenseRetriever",
    "FlowDiffusionRetriever": "hopbench.retrieve.flow_diffusion.FlowDiffusionRetriever",
    "HippoRAGRetriever": "hopbench.retrieve.hipporag.HippoRAGRetriever",
    "JointFlowDiffusionRetriever": (
        "hopbench.retrieve.flow_diffusion_joint.JointFlowDiffusionRetriever"
    ),
    "NeuroPathRetriever": "hopbench.retrieve.neuropath.NeuroPathRetriever",
    "OracleRetriever": "hopbench.retrieve.oracle.OracleRetriever",
    "QAFDCodeRetriever": "hopbench.retrieve.qafd_code.QAFDCodeRetriever",
    "SpreadingActivationRetriever": (
        "hopbench.retrieve.spreading_activation.SpreadingActivationRetriever"
    ),
    "SpreadingActivationNeo4jRetriever": (
        "hopbench.retrieve.spreading_activation_neo4j.SpreadingActivationNeo4jRetriever"
    ),
}
MAP_FIELDS = ("dataset", "retriever", "old_hash", "mid_hash", "new_hash")
# The flat seeding keys of before issue #58 (HippoRAGSeeding's settings) and where they went.
SEEDING_KEYS = ("linking_top_k", "top_phrases", "passage_node_weight", "filter")
NESTED_SEEDING = {  # class -> (node name, does the node carry `method`, the old flat `seeding`)
    "HippoRAGRetriever": ("seeding", True),
    "CatRAGRetriever": ("seeding", False),
    "QAFDCodeRetriever": ("seeding", False),
    "JointFlowDiffusionRetriever": ("hipporag_seeding", False),
}
_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{12}(?![0-9a-f])")


def flat_seeding(node: dict, class_name: str) -> dict:
    """A retriever node with its nested seeding node as the flat keys of before issue #58
    (HippoRAGRetriever's `method` was its string setting `seeding`; flow_diffusion_joint's
    node, unused unless `seeding: hipporag`, was not in its config at all)."""
    where = NESTED_SEEDING.get(class_name)
    if where is None or not isinstance(node.get(where[0]), dict):
        return dict(node)
    name, has_method = where
    out = {k: v for k, v in node.items() if k != name}
    if class_name == "JointFlowDiffusionRetriever":
        return out
    inner = dict(node[name])
    if has_method:
        out["seeding"] = inner.pop("method", "hipporag2")
    out.update(inner)
    return out


def nested_seeding(node: dict, class_name: str) -> dict:
    """The inverse of `flat_seeding`: a stored config's flat seeding keys as today's node
    (flow_diffusion_joint gets its node's defaults, as a config composed today has them)."""
    where = NESTED_SEEDING.get(class_name)
    if where is None or isinstance(node.get(where[0]), dict):
        return dict(node)
    name, has_method = where
    if class_name == "JointFlowDiffusionRetriever":
        from hopbench.retrieve.qafd.flow_diffusion_joint import JointFlowDiffusionRetriever

        return {**node, name: JointFlowDiffusionRetriever.hipporag_seeding_spec.defaults()}
    out = {k: v for k, v in node.items() if k not in SEEDING_KEYS}
    inner = {k: node[k] for k in SEEDING_KEYS if k in node}
    if has_method:
        inner = {"method": out.pop("seeding", "hipporag2"), **inner}
    out[name] = inner
    return out


def mid_form(semantic: dict) -> dict:
    """A semantic config as the runner built it between the two steps: registry name, flat keys."""
    node = semantic["retriever"]
    return {**semantic, "retriever": flat_seeding(node, str(node.get("class", "")))}


def legacy_form(semantic: dict, target: str) -> dict:
    """A semantic config as the runner built it before issue #58: the retriever node with the
    class's `_target_`, without its registry name, its seeding keys flat."""
    node = mid_form(semantic)["retriever"]
    node = {k: v for k, v in node.items() if k != "class"}
    return {**semantic, "retriever": {**node, "_target_": target}}


def current_target(target: str) -> str:
    """Today's import path of a retriever class recorded at `target`: the registered class of
    that name when `target` no longer imports (the class moved), else `target` itself."""
    from hopbench.harness.method_info import _class_of
    from hopbench.retrieve.registry import configurable_classes

    if _class_of(target) is not None:
        return target
    name = target.rpartition(".")[2]
    for cls in configurable_classes():
        if cls.__name__ == name:
            return f"{cls.__module__}.{cls.__qualname__}"
    return target


def hashes(cfg, dataset, retriever, old_target: str) -> tuple[str, str]:
    """(old hash, new hash) of one composed config, by the runner's own functions."""
    old, _, new = all_hashes(cfg, dataset, retriever, old_target)
    return old, new


def all_hashes(cfg, dataset, retriever, old_target: str) -> tuple[str, str, str]:
    """(old, mid, new hash) of one composed config (module docstring)."""
    from hopbench.harness.runner import semantic_config

    semantic = semantic_config(cfg, dataset, retriever)
    return (
        config_hash(legacy_form(semantic, old_target)),
        config_hash(mid_form(semantic)),
        config_hash(semantic),
    )


@dataclass
class Rehashed:
    run_dir: Path
    old: str
    new: str | None = None
    why: str = ""  # why the run was left as it is ("" when it was re-keyed)


def _stored_config(run_dir: Path, data_dir: str | None) -> tuple[dict, str]:
    """(config.yaml with today's `_target_` and, if given, another data_dir; its old target)."""
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    target = str((config.get("retriever") or {}).get("_target_", ""))
    today = current_target(target)
    node = nested_seeding(config["retriever"], today.rpartition(".")[2])
    config["retriever"] = {**node, "_target_": today}
    stored = str((config.get("paths") or {}).get("data_dir", ""))
    if data_dir and stored:
        for key in ("questions_path", "corpus_path"):
            v = config["dataset"].get(key)
            if isinstance(v, str) and v.startswith(stored):
                config["dataset"][key] = str(data_dir) + v[len(stored) :]
        config["paths"]["data_dir"] = str(data_dir)
    return config, target


def rehash_run(run_dir: str | Path, data_dir: str | None = None) -> Rehashed:
    """Re-key one complete run folder: rename <old> to <new> beside it and record the old hash
    in metrics.json (`migrated_from_hash`). Left as it is, with why, when its old hash is not
    reproduced, the new folder exists, or another process holds the run."""
    from hopbench.harness.compose import build_dataset, build_retriever

    run_dir = Path(run_dir)
    out = Rehashed(run_dir, run_dir.name)
    try:
        config, target = _stored_config(run_dir, data_dir)
        cfg = OmegaConf.create(config)
        old, mid, new = all_hashes(cfg, build_dataset(cfg), build_retriever(cfg), target)
    except Exception as exc:  # noqa: BLE001 - one run's problem is told, the others go on
        out.why = f"its config.yaml could not be hashed: {type(exc).__name__}: {exc}"
        return out
    out.new = new
    if new == run_dir.name:
        out.why = "already under its new hash"
        return out
    if run_dir.name not in (old, mid):
        out.why = f"its old hash is not reproduced from its config.yaml (got {old})"
        return out
    old = run_dir.name
    dest = run_dir.parent / new
    if dest.exists():
        out.why = f"{dest} exists already (the run was made again under its new hash)"
        return out
    try:
        with RunStore(run_dir).lock(wait=False):
            metrics_path = run_dir / "metrics.json"
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
            metrics.update(config_hash=new, migrated_from_hash=old)
            write_json(metrics_path, metrics)
            os.replace(run_dir, dest)
    except Busy:
        out.why = "another process is working on it"
    return out


# ---- the reference: through the grid that makes its rows --------------------------------------
def grid_rehash_map(rows, planner=None, errors: list | None = None) -> list[dict]:
    """(dataset, retriever, old_hash, mid_hash, new_hash) of every run of the grid `rows`
    (harness.paper), each hashed in every form from the config the grid composes; a row that
    fails is left out, with its error appended to `errors` when given."""
    from hopbench.harness.compose import build_retriever, check_encoder, load_config
    from hopbench.harness.paper.plan import Planner
    from hopbench.retrieve.registry import registry_name

    planner = planner or Planner()
    out, seen = [], set()
    for row in rows:
        try:
            cfg = load_config(list(row.overrides))
            check_encoder(cfg)
            retriever = build_retriever(cfg)
            name = registry_name(type(retriever))
            target = LEGACY_TARGETS.get(name, str(cfg.retriever._target_))
            old, mid, new = all_hashes(cfg, planner.dataset(cfg), retriever, target)
        except Exception as exc:  # noqa: BLE001 - the plan shows such a row's error
            if errors is not None:
                errors.append(f"{row.dataset}/{row.retriever}: {type(exc).__name__}: {exc}")
            continue
        key = (row.dataset, row.retriever, old)
        if key not in seen:
            seen.add(key)
            out.append(dict(zip(MAP_FIELDS, (*key, mid, new))))
    return out


def reference_map(grid_map: list[dict], reference_csv: str | Path) -> list[dict]:
    """The grid's mapping restricted to the runs of the reference leaderboard (found under their
    old or their new hash, so it is the same before and after the re-key), sorted."""
    with open(reference_csv, newline="", encoding="utf-8") as fh:
        ref = {(r["dataset"], r["retriever"], r["config_hash"]) for r in csv.DictReader(fh)}
    keep = [
        m
        for m in grid_map
        if any(
            (m["dataset"], m["retriever"], m[f]) in ref
            for f in ("old_hash", "mid_hash", "new_hash")
        )
    ]
    return sorted(keep, key=lambda m: (m["dataset"], m["retriever"], m["old_hash"]))


def unmapped(mapping: list[dict], reference_csv: str | Path) -> list[str]:
    """The reference rows (dataset/retriever/hash) that no entry of `mapping` names."""
    known = {
        (m["dataset"], m["retriever"], m[f])
        for m in mapping
        for f in ("old_hash", "mid_hash", "new_hash")
    }
    with open(reference_csv, newline="", encoding="utf-8") as fh:
        rows = [(r["dataset"], r["retriever"], r["config_hash"]) for r in csv.DictReader(fh)]
    return ["/".join(r) for r in rows if r not in known]


def write_map(path: str | Path, mapping: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=MAP_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(mapping)


def read_map(path: str | Path) -> dict[str, str]:
    """old hash -> new hash from a map file written by `write_map`."""
    with open(path, newline="", encoding="utf-8") as fh:
        return old_to_new(list(csv.DictReader(fh)))


def old_to_new(mapping: list[dict]) -> dict[str, str]:
    """old hash -> new hash; an old hash given two new ones is refused (hashes are the keys)."""
    out: dict[str, str] = {}
    for m in mapping:
        for field in ("old_hash", "mid_hash"):
            if m.get(field) and out.setdefault(m[field], m["new_hash"]) != m["new_hash"]:
                raise ValueError(f"{field.replace('_', ' ')} {m[field]} maps to two new hashes")
    return out


# ---- re-keying what names runs by hash ---------------------------------------------------------
def rekey_text(text: str, old_new: dict[str, str]) -> str:
    """Every whole 12-hex-digit token that is an old hash replaced by its new one (longer hex
    strings, such as reply keys, are left alone)."""
    return _HASH.sub(lambda m: old_new.get(m.group(0), m.group(0)), text)


MAP_FILE = "rehash_map.csv"


def rekey_tables(folder: str | Path, old_new: dict[str, str]) -> dict[str, int]:
    """Re-key the hashes of a results folder: every old hash in its parquet tables' text cells
    (config_hash, baseline_config_hash, a leaderboard_long `run`, the hash part of `run_dir`) and
    in its csv and markdown files (their bytes otherwise kept); the map itself is left alone.
    Files changed -> number of hashes replaced; applying it twice changes nothing."""
    import pandas as pd

    changed = {}
    for path in sorted(Path(folder).iterdir()):
        if path.name == MAP_FILE:
            continue
        if path.suffix in (".csv", ".md"):
            text = path.read_text(encoding="utf-8")
            n = sum(1 for m in _HASH.finditer(text) if m.group(0) in old_new)
            if n:
                with open(path, "w", encoding="utf-8", newline="") as fh:
                    fh.write(rekey_text(text, old_new))
                changed[path.name] = n
        elif path.suffix == ".parquet":
            df = pd.read_parquet(path)
            n = 0
            for col in df.select_dtypes(include="object").columns:
                cells = df[col].map(lambda v: rekey_text(v, old_new) if isinstance(v, str) else v)
                differs = [a is not b and a != b for a, b in zip(df[col], cells)]
                if any(differs):
                    n += sum(differs)
                    df[col] = cells
            if n:
                df.to_parquet(path, index=False)
                changed[path.name] = n
    return changed


def rekey_reply_file(path: str | Path, old_new: dict[str, str]) -> int:
    """Re-key the run labels (dataset/retriever/hash) of a reply file in the version it has:
    the header's `runs`/`incomplete_runs` and an entry's `runs` (version 3); every other line
    is kept byte for byte, and the digest list beside it is written again by its own writer.
    The number of labels changed."""
    import gzip

    from hopbench.core.atomic import atomic_path
    from hopbench.llm.reply_digests import read_verified, write_digests
    from hopbench.llm.reply_file import line_digest

    path = Path(path)
    read_verified(path)  # a damaged file or list is refused before anything is written

    def label(run: str) -> str:
        dataset, retriever, h = run.rsplit("/", 2)
        return f"{dataset}/{retriever}/{old_new.get(h, h)}"

    lines, keys, changed = [], [], 0
    with gzip.open(path, "rb") as fh:
        for n, raw in enumerate(fh):
            obj = json.loads(raw)
            if n == 0:
                for field in ("runs", "incomplete_runs"):
                    if field in obj:
                        relabelled = dict(sorted((label(k), v) for k, v in obj[field].items()))
                        changed += sum(a != b for a, b in zip(obj[field], map(label, obj[field])))
                        obj[field] = relabelled
            else:
                keys.append(obj["key"])
                if obj.get("runs"):
                    obj["runs"] = sorted(map(label, obj["runs"]))
            line = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
            lines.append(line if json.loads(line) != json.loads(raw) else raw)
    if not changed:
        return 0
    with (
        atomic_path(path, suffix=".gz") as tmp,
        open(tmp, "wb") as out,
        gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as gz,
    ):
        for line in lines:
            gz.write(line)
    write_digests(path, [line_digest(line) for line in lines], keys)
    read_verified(path)
    return changed
