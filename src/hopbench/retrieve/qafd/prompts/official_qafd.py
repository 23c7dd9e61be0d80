"""``prompts: official`` for flow_diffusion: QAFD-RAG's keyword prompt, read from the user's checkout.

hopbench ships none of the authors' prompt text. With ``retriever.prompts=official`` and
``retriever.official_src`` pointing at a checkout of Tarzanagh/QAFD-RAG, the keyword step
sends their prompt as ``kg_query`` (``src/answering/handler.py``) builds it: the
``QA_PROMPTS["keywords_extraction"]`` template of ``src/prompts/prompts_qa.py`` formatted with
``query``, ``examples`` (all of ``QA_PROMPTS["keywords_extraction_examples"]`` joined by
newlines, as when ``example_number`` is unset) and ``language``, sent as one user message.
The file is read with `ast` (string constants and lists of them only), never imported or run.
The reply is read with the same JSON schema as hopbench's own prompt (`qafd_keywords`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from hopbench.core.errors import HopbenchError

PROMPT_FILE = "src/prompts/prompts_qa.py"
TEMPLATE_KEY = "keywords_extraction"
EXAMPLES_KEY = "keywords_extraction_examples"
DEFAULT_LANGUAGE = "English"


@dataclass(frozen=True)
class OfficialKeywordPrompt:
    template: str
    examples: tuple[str, ...]
    language: str = DEFAULT_LANGUAGE

    def messages(self, question: str) -> list[dict]:
        text = self.template.format(
            query=question, examples="\n".join(self.examples), language=self.language
        )
        return [{"role": "user", "content": text}]


def _string(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _assigned(tree: ast.Module, key: str):
    """The value assigned to ``<name>["key"] = ...`` at module level (the last such assignment)."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Subscript) and _string(t.slice) == key:
                found = node.value
    return found


def load(root: str | Path) -> OfficialKeywordPrompt:
    root = Path(root).expanduser()
    path = root / PROMPT_FILE
    if not path.is_file():
        raise HopbenchError(
            f"retriever.official_src: {path} not found (a checkout of "
            "Tarzanagh/QAFD-RAG is expected)"
        )
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as e:
        raise HopbenchError(f"{path}: cannot read the official keyword prompt ({e})") from e
    template = _string(_assigned(tree, TEMPLATE_KEY))
    if template is None:
        raise HopbenchError(f"{path}: no string assigned to [{TEMPLATE_KEY!r}]")
    ex = _assigned(tree, EXAMPLES_KEY)
    if not isinstance(ex, ast.List) or any(_string(e) is None for e in ex.elts):
        raise HopbenchError(f"{path}: [{EXAMPLES_KEY!r}] is not a list of strings")
    return OfficialKeywordPrompt(template=template, examples=tuple(_string(e) for e in ex.elts))
