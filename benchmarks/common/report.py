"""Writing a benchmark's result pair: OUT.json (every figure) and OUT.md (the table a reader
reads, rendered from the JSON so `--render-only` can redo it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


def write_json_and_md(out: Path, res: dict, markdown: Callable[[dict], str]) -> str:
    """Writes OUT.json and OUT.md (folders made as needed), prints the markdown, returns it."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    text = markdown(res)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return text


def render_only(out: Path, markdown: Callable[[dict], str]) -> str:
    """`--render-only`: rewrites OUT.md from OUT.json (after a change to the table's wording)."""
    out = Path(out)
    text = markdown(json.loads(out.with_suffix(".json").read_text(encoding="utf-8")))
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return text
