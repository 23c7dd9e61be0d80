"""The retriever table of docs/retrievers.md, generated from configs/retriever/*.yaml.

One row per config: its name, its family (the class's `family`), what a run of it needs (the
knowledge graph, an LLM, the Neo4j server: read from the retriever built with the config's
settings, once without and once with an LLM), its class and its page in docs/methods/ (the
first one the config's comment, or a config it starts from, cites; else the page most configs
of its family cite). Nothing is hand-written, so the table cannot drift from the configs:

    python -m hopbench.harness.retriever_table           # rewrite the table in docs/retrievers.md
    python -m hopbench.harness.retriever_table --check   # exit 1 when the committed table is stale

The table sits between the two marker lines below; the rest of the page is hand-written.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from hopbench.core.paths import REPO_ROOT, RETRIEVER_CONFIGS
from hopbench.harness import method_info

PAGE = REPO_ROOT / "docs" / "retrievers.md"
CONFIGS = RETRIEVER_CONFIGS
BEGIN = "<!-- BEGIN retriever table: python -m hopbench.harness.retriever_table -->"
END = "<!-- END retriever table -->"
_DOC = re.compile(r"docs/methods/[\w-]+\.md")
_LLM_NAME = "${llm.name}"


def _header_pages(name: str, config_dir: Path, seen: tuple[str, ...] = ()) -> list[str]:
    """docs/methods pages cited by the config's comments, then by the configs it starts from."""
    path = config_dir / f"{name}.yaml"
    if name in seen or not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    pages = _DOC.findall("\n".join(ln for ln in text.splitlines() if ln.lstrip().startswith("#")))
    parents = re.findall(r"^\s*-\s*([A-Za-z0-9_]+)\s*$", text, flags=re.M)
    for parent in parents:
        pages += _header_pages(parent, config_dir, (*seen, name))
    return pages


def _needs(settings: dict, cls, llm_name: str | None) -> tuple[bool, bool, bool] | None:
    """(graph, llm, graphdb) of the retriever built with these settings; None if it refuses."""
    kwargs = {k: (llm_name if v == _LLM_NAME else v) for k, v in settings.items()}
    try:
        r = cls(**kwargs)
    except Exception:  # noqa: BLE001 - a retriever that refuses these settings without an LLM
        return None
    return bool(r.needs_graph), bool(r.needs_llm), bool(r.needs_graphdb)


def rows(config_dir: Path | None = None) -> list[dict]:
    """One dict per configs/retriever/*.yaml, sorted by family then name."""
    config_dir = Path(config_dir or CONFIGS)
    out = []
    for path in sorted(Path(config_dir).glob("*.yaml")):
        name = path.stem
        merged = method_info._merged_yaml(name, Path(config_dir)) or {}
        target = merged.get("_target_", "")
        cls = method_info._class_of(target) if target else None
        if cls is None:
            raise SystemExit(f"configs/retriever/{name}.yaml: cannot import {target!r}")
        settings = {k: v for k, v in merged.items() if k not in method_info.RETRIEVER_SKIP}
        without, with_llm = _needs(settings, cls, None), _needs(settings, cls, "local")
        if with_llm is None:
            raise SystemExit(f"configs/retriever/{name}.yaml: {target} refuses its own settings")
        if without is None or without[1]:
            llm = "required"
        else:
            llm = "optional" if with_llm[1] else "no"
        pages = _header_pages(name, Path(config_dir))
        out.append(
            {
                "name": name,
                "family": str(getattr(cls, "family", "") or name),
                "graph": with_llm[0],
                "llm": llm,
                "neo4j": with_llm[2],
                "class": cls.__name__,
                "page": pages[0] if pages else None,
            }
        )
    by_family: dict[str, Counter] = {}
    for row in out:
        if row["page"]:
            by_family.setdefault(row["family"], Counter())[row["page"]] += 1
    for row in out:
        if row["page"] is None and row["family"] in by_family:
            row["page"] = by_family[row["family"]].most_common(1)[0][0]
    return sorted(out, key=lambda r: (r["family"], r["name"]))


def render(config_dir: Path | None = None) -> str:
    """The markdown table, markers included."""
    lines = [
        BEGIN,
        "",
        "| retriever | family | knowledge graph | LLM (`llm=`) | Neo4j | class | page |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows(config_dir):
        page = f"[{Path(r['page']).name}](methods/{Path(r['page']).name})" if r["page"] else "-"
        lines.append(
            f"| `{r['name']}` | {r['family']} | {'yes' if r['graph'] else 'no'} | {r['llm']} "
            f"| {'yes' if r['neo4j'] else 'no'} | `{r['class']}` | {page} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def committed(page: Path | None = None) -> str:
    """The table as the page holds it now (markers included); '' when there is none."""
    page = Path(page or PAGE)
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    if BEGIN not in text or END not in text:
        return ""
    start = text.index(BEGIN)
    return text[start : text.index(END, start) + len(END)]


def write(page: Path | None = None, table: str | None = None) -> bool:
    """Put the table into the page between its markers; True when the page changed."""
    page = Path(page or PAGE)
    table = render() if table is None else table
    text = page.read_text(encoding="utf-8")
    old = committed(page)
    if not old:
        raise SystemExit(f"{page}: no '{BEGIN}' ... '{END}' block to fill")
    if old == table:
        return False
    page.write_text(text.replace(old, table, 1), encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hopbench.harness.retriever_table",
        description="Generate the retriever table of docs/retrievers.md from configs/retriever/.",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    args = parser.parse_args(argv)
    if args.check:
        if committed() != render():  # PAGE and CONFIGS as set now (tests point them elsewhere)
            print(
                "docs/retrievers.md: the retriever table is stale; "
                "run python -m hopbench.harness.retriever_table",
                file=sys.stderr,
            )
            return 1
        return 0
    changed = write()
    print("docs/retrievers.md: " + ("table rewritten" if changed else "table up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
