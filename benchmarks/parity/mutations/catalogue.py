"""The committed list of mutations (mutations.yaml): reading it, checking it against today's
source and configs, and applying one entry to a scratch copy of the repository."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
LIST = HERE / "mutations.yaml"


class StaleMutation(ValueError):
    """An entry that no longer fits the source: its old text is not there exactly once, or its
    config has no such setting."""


@dataclass(frozen=True)
class Mutation:
    name: str
    method: str
    kind: str  # rule | default
    why: str
    file: str | None = None
    old: str | None = None
    new: str | None = None
    config: str | None = None
    setting: str | None = None
    value: object = None
    audit: bool = False
    equivalent: str | None = None  # why the change cannot alter any bundled input's result
    catch_with: str | None = None  # what would catch it, where nothing does yet

    @property
    def edit(self) -> str:
        """What the mutation changes, for the table."""
        if self.file:
            return f"`{self.file}`: `{self.old}` -> `{self.new}`"
        return f"`configs/retriever/{self.config}.yaml`: `{self.setting}` = `{self.value}`"


def load(path: Path = LIST) -> tuple[dict, list[Mutation]]:
    """(tests per method, mutations) from the list; names must be unique."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    muts = [Mutation(**m) for m in raw["mutations"]]
    names = [m.name for m in muts]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{path.name}: names used twice: {dupes}")
    return raw["tests"], muts


def check_text(m: Mutation, root: Path) -> None:
    """A rule (text) mutation's old text must occur exactly once in its file under `root`."""
    text = (root / m.file).read_text(encoding="utf-8")
    n = text.count(m.old)
    if n != 1:
        raise StaleMutation(f"{m.name}: {m.file} holds its old text {n} times, not once")
    if m.old == m.new:
        raise StaleMutation(f"{m.name}: new text equals old text")


def config_file(root: Path, config: str) -> Path:
    return root / "configs" / "retriever" / f"{config}.yaml"


def set_dotted(node: dict, dotted: str, value: object) -> None:
    keys = dotted.split(".")
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value


def apply(m: Mutation, root: Path) -> None:
    """Applies the mutation to the copy at `root` (never to the checkout: the caller's job)."""
    if m.file:
        check_text(m, root)
        path = root / m.file
        path.write_text(path.read_text(encoding="utf-8").replace(m.old, m.new), encoding="utf-8")
        return
    path = config_file(root, m.config)
    if not path.is_file():
        raise StaleMutation(f"{m.name}: no config {path.name}")
    node = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    set_dotted(node, m.setting, m.value)
    path.write_text(yaml.safe_dump(node, sort_keys=False), encoding="utf-8")
