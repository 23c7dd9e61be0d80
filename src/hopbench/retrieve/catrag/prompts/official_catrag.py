"""``prompts: official``: CatRAG's own prompt files, read at run time from the user's checkout.

hopbench ships none of the authors' prompt text. A user who holds their repository
(kwunhang/CatRAG: ``prompts/templates/*.py``, ``prompts/dspy_prompts/filter_*.json``) points
``retriever.official_prompts`` at it, and CatRAG runs with their exact prompts, rendered as
their code renders them (``PromptTemplateManager``: ``string.Template`` substitution of each
message of a template's ``prompt_template`` list; ``DSPyFilter.make_template`` for the filter).

The template files are Python modules of string constants; they are read with `ast`
(only string constants and the list of role/content dicts), never executed.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from string import Template

from hopbench.core.errors import HopbenchError

TEMPLATES = ("fact_score_with_sum", "node_summarize", "ner_query")

# DSPy's field format, which DSPyFilter (rerank.py) wraps each question and reply in.
_DSPY_IN = (
    "[[ ## question ## ]]\n{question}\n\n[[ ## fact_before_filter ## ]]\n{fact_before_filter}"
    "\n\nRespond with the corresponding output fields, starting with the field "
    "`[[ ## fact_after_filter ## ]]` (must be formatted as a valid Python Fact), and then "
    "ending with the marker for `[[ ## completed ## ]]`."
)
_DSPY_OUT = "[[ ## fact_after_filter ## ]]\n{fact_after_filter}\n\n[[ ## completed ## ]]"


def _read_template(path: Path) -> list[dict]:
    """The module's ``prompt_template``: [{"role", "content"}], contents from string constants."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as e:
        raise HopbenchError(f"{path}: cannot read the official prompt template ({e})") from e
    env: dict[str, str] = {}
    template = None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name = node.targets[0].id
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                env[name] = node.value.value
            elif name == "prompt_template" and isinstance(node.value, ast.List):
                template = node.value
    if template is None:
        raise HopbenchError(f"{path}: no prompt_template list")
    out = []
    for item in template.elts:
        if not isinstance(item, ast.Dict):
            raise HopbenchError(
                f"{path}: prompt_template holds a {type(item).__name__}, not a dict"
            )
        msg = {}
        for k, v in zip(item.keys, item.values, strict=True):
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                msg[k.value] = v.value
            elif isinstance(v, ast.Name) and v.id in env:
                msg[k.value] = env[v.id]
            else:
                raise HopbenchError(
                    f"{path}: prompt_template field {k.value!r} is not a string constant"
                )
        out.append(msg)
    return out


class OfficialCatRAGPrompts:
    """The authors' templates and filter program from `root` (a checkout of kwunhang/CatRAG)."""

    def __init__(self, root: str | Path, filter_file: str | None = None) -> None:
        root = Path(root).expanduser()
        tdir = root / "prompts" / "templates"
        if not tdir.is_dir():
            raise HopbenchError(
                f"retriever.official_prompts={root}: no prompts/templates folder there "
                "(point it at a checkout of kwunhang/CatRAG)"
            )
        self.templates = {name: _read_template(tdir / f"{name}.py") for name in TEMPLATES}
        if filter_file is None:
            found = sorted((root / "prompts" / "dspy_prompts").glob("filter_*.json"))
            if not found:
                raise HopbenchError(f"{root}/prompts/dspy_prompts: no filter_*.json")
            filter_file = str(found[0])
        try:
            prog = json.loads(Path(filter_file).read_text(encoding="utf-8"))["prog"]
            self.filter_prefix = [{"role": "system", "content": prog["system"]}]
            for d in prog["demos"]:
                self.filter_prefix += [
                    {
                        "role": "user",
                        "content": _DSPY_IN.format(
                            question=d["question"], fact_before_filter=d["fact_before_filter"]
                        ),
                    },
                    {
                        "role": "assistant",
                        "content": _DSPY_OUT.format(fact_after_filter=d["fact_after_filter"]),
                    },
                ]
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as e:
            raise HopbenchError(f"{filter_file}: not a DSPy filter program ({e})") from e
        self.filter_file = filter_file

    def render(self, name: str, **values) -> list[dict]:
        return [
            {"role": m["role"], "content": Template(m["content"]).substitute(**values)}
            for m in self.templates[name]
        ]

    def filter_messages(self, question: str, candidates) -> list[dict]:
        before = json.dumps({"fact": [list(c) for c in candidates]})
        return [
            *self.filter_prefix,
            {
                "role": "user",
                "content": _DSPY_IN.format(question=question, fact_before_filter=before),
            },
        ]

    def ner_messages(self, question: str) -> list[dict]:
        return self.render("ner_query", query=question)

    def summary_messages(self, entity: str, triples) -> list[dict]:
        lines = [str(tuple(t)) for t in triples]
        facts = "{\n" + "\n".join(lines) + "\n}" if lines else "No connected facts"
        return self.render(
            "node_summarize",
            summary_length="150",
            language="English",
            entity=entity,
            fact_triplets=facts,
        )

    def score_messages(self, question: str, retrieved, seed: str, neighbours) -> list[dict]:
        """neighbours: (name, linking facts, context C(v)) as call_llm_score lists them."""
        seed_triplet = "; ".join(
            f'("{s.lower()}", "{r.lower()}", "{o.lower()}")' for s, r, o in retrieved
        )
        rows = ""
        for i, (name, links, about) in enumerate(neighbours, start=1):
            link = "; ".join(str(tuple(t)) for t in links) if links else "Semantic Similarity Link"
            rows += f'[{i}] "{name}" | LINKING FACT: {link} | SUMMARY: {about}\n'
        return self.render(
            "fact_score_with_sum",
            query=question,
            seed_entity=seed,
            seed_triplet=seed_triplet,
            neighbor_entities=rows,
        )


def ner_entities(text: str) -> list[str]:
    """ner_query's reply as the code reads it: code fences removed, JSON, 'named_entities'."""
    import re

    msg = re.sub("```", " ", re.sub("```json", " ", text))
    parsed = json.loads(msg)
    ents = parsed.get("named_entities", [])
    if not isinstance(ents, list) or not all(isinstance(e, str) for e in ents):
        raise ValueError("'named_entities' must be a list of strings")
    return ents


def summary_text(text: str) -> str:
    """build_graph_node_sum: the text after 'Answer:', else the whole reply, stripped."""
    parts = text.split("Answer:")
    return parts[1].strip() if len(parts) > 1 else text.strip()
