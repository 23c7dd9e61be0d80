"""NeuroPath's prompts in the authors' own words, read at run time from a checkout (never shipped).

``prompts: official`` with ``official_src: /path/to/NeuroPath`` (a checkout of
KennyCaty/NeuroPath; the parity benchmark used commit c9ed3ac) makes the retriever send the
authors' exact messages. The strings are taken from the source files with `ast` (nothing of
the checkout is imported or run):

* tracker system prompt: the first ``sys_prompt = "..."`` in ``NeuroPath.llm_path_track``
  (``src/neuropath.py``), and its one-shot example: the ``sys_prompt += "..."`` after it;
* NER: the module-level ``sys_prompt`` and ``input_frame`` of ``src/query_ner_vtp_parallel.py``.

The user turns are laid out as the reference lays them out (`neuropath_tracker.user_message`,
``input_frame.format(question)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hopbench.core.errors import HopbenchError
from hopbench.llm.prompts import chat
from hopbench.retrieve.neuropath.prompts.neuropath_tracker import user_message

TRACKER_FILE = "src/neuropath.py"
NER_FILE = "src/query_ner_vtp_parallel.py"


@dataclass(frozen=True)
class OfficialPrompts:
    tracker_system: str
    tracker_example: str
    ner_system: str
    ner_frame: str

    def tracker_messages(
        self, question: str, path_block: str, one_shot: bool = False
    ) -> list[dict]:
        system = self.tracker_system + (self.tracker_example if one_shot else "")
        return chat(system, user_message(question, path_block))

    def ner_messages(self, question: str) -> list[dict]:
        return chat(self.ner_system, self.ner_frame.format(question))


def _tree(root: Path, rel: str) -> ast.Module:
    path = root / rel
    if not path.is_file():
        raise HopbenchError(
            f"retriever.official_src: {path} not found (a checkout of "
            f"KennyCaty/NeuroPath is expected)"
        )
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _tracker_strings(tree: ast.Module, where: str) -> tuple[str, str]:
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name == "llm_path_track":
            system = example = None
            for node in ast.walk(fn):
                if (
                    system is None
                    and isinstance(node, ast.Assign)
                    and _str(node.value) is not None
                    and any(isinstance(t, ast.Name) and t.id == "sys_prompt" for t in node.targets)
                ):
                    system = _str(node.value)
                if (
                    example is None
                    and isinstance(node, ast.AugAssign)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == "sys_prompt"
                ):
                    example = _str(node.value)
            if system is not None and example is not None:
                return system, example
    raise HopbenchError(
        f"retriever.official_src: {where}: no sys_prompt (and its one-shot "
        f"addition) in llm_path_track"
    )


def _module_string(tree: ast.Module, name: str, where: str) -> str:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            value = _str(node.value)
            if value is not None:
                return value
    raise HopbenchError(f"retriever.official_src: {where}: no module-level string {name}")


@lru_cache(maxsize=4)
def load(official_src: str) -> OfficialPrompts:
    """The authors' prompt strings from the checkout at `official_src`."""
    if not official_src:
        raise HopbenchError(
            "retriever.prompts=official needs retriever.official_src: the path "
            "of a KennyCaty/NeuroPath checkout"
        )
    root = Path(official_src).expanduser()
    system, example = _tracker_strings(_tree(root, TRACKER_FILE), str(root / TRACKER_FILE))
    ner = _tree(root, NER_FILE)
    where = str(root / NER_FILE)
    return OfficialPrompts(
        system,
        example,
        _module_string(ner, "sys_prompt", where),
        _module_string(ner, "input_frame", where),
    )
