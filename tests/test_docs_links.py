"""The repository documents itself: every docs/ page it cites exists, and nothing cites a
document that lives outside it.

Read as text, nothing is imported. Checked: every `docs/....md` path written in src/, configs/,
README.md, CONTRIBUTING.md or docs/ names a file of the checkout; every relative link of a
docs/ page, and every results file it names (`benchmarks/<room>/results/...`, `results/reference/...`,
where docs/findings.md points for its numbers), is a file of the checkout; and no file of the
repository mentions the two design documents that were kept outside it (their names are
spelled in pieces below, so this file does not count itself).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITING = ["src", "configs", "README.md", "CONTRIBUTING.md", "docs"]
TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".yaml",
    ".yml",
    ".csv",
    ".txt",
    ".toml",
    ".cypher",
    ".json",
    ".cfg",
    ".ini",
    ".sh",
    "",
}
# a docs/ path relative to the repository root, not the tail of a longer path or URL
DOC_PATH = re.compile(r"(?<![\w/.-])docs/[\w./-]*\.md")
# a results path relative to the repository root; `*` and `{a,b}` as the pages write them
RESULTS_PATH = re.compile(
    r"(?<![\w/.-])(?:benchmarks/(?:[\w-]+/)*results|results/reference)/[\w./*{},-]*[\w*}]"
)
# a markdown link's target, without its #anchor
MD_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
OUTSIDE = ("methods" + ".md", "DESIGN" + ".md")
SKIP_DIRS = {
    ".git",
    "__pycache__",
    ".venv",
    "venv",
    "runs",
    "node_modules",
    ".pytest_cache",
    ".ruff_cache",
    "target",
}


def _files_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return [
        p
        for p in sorted(path.rglob("*"))
        if p.is_file()
        and not SKIP_DIRS & set(p.relative_to(ROOT).parts)
        and not any(part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)
    ]


def _repository_files() -> list[Path]:
    """The tracked files when this is a git checkout, else every file outside caches."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        names = [n for n in out.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
        files = [ROOT / n for n in names if (ROOT / n).is_file()]
        # files added but not yet committed count too
        return sorted(set(files) | set(_files_under(ROOT / "docs")) | {Path(__file__).resolve()})
    except (OSError, subprocess.CalledProcessError):
        return _files_under(ROOT)


def _text(path: Path) -> str | None:
    if path.suffix not in TEXT_SUFFIXES:
        return None
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


def _cited_doc_paths() -> dict[str, set[str]]:
    cited: dict[str, set[str]] = {}
    for top in CITING:
        for f in _files_under(ROOT / top):
            text = _text(f)
            if text is None:
                continue
            for m in DOC_PATH.findall(text):
                cited.setdefault(m, set()).add(str(f.relative_to(ROOT)))
    return cited


def test_the_scan_sees_the_docs():
    cited = _cited_doc_paths()
    assert "docs/internals/architecture.md" in cited
    assert any(p.startswith("docs/methods/") for p in cited)


def test_every_cited_docs_page_exists():
    missing = {
        p: sorted(where) for p, where in _cited_doc_paths().items() if not (ROOT / p).is_file()
    }
    assert not missing, f"docs pages cited but not in the repository: {missing}"


def _docs_pages() -> list[Path]:
    return [p for p in _files_under(ROOT / "docs") if p.suffix == ".md"]


def _expand(pattern: str) -> list[str]:
    """`a.{json,md}` -> [`a.json`, `a.md`] (one brace group, as the pages write them)."""
    m = re.search(r"\{([^}]*)\}", pattern)
    if not m:
        return [pattern]
    return [pattern[: m.start()] + alt + pattern[m.end() :] for alt in m.group(1).split(",")]


def test_every_relative_link_of_a_docs_page_is_a_file_of_the_repository():
    bad = []
    for page in _docs_pages():
        for target in MD_LINK.findall(page.read_text()):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # a URL, not a file
                continue
            path = (page.parent / target).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert not bad, "links in docs/ that name no file of the repository:\n" + "\n".join(bad)


def test_the_findings_link_their_numbers():
    page = ROOT / "docs" / "findings.md"
    links = [t for t in MD_LINK.findall(page.read_text()) if "results/" in t]
    assert len(links) >= 10, (
        "docs/findings.md links each finding to the results file that holds its numbers"
    )


def test_every_results_file_a_docs_page_names_exists():
    missing = []
    for page in _docs_pages():
        for cited in RESULTS_PATH.findall(page.read_text()):
            if not any(
                any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists() for p in _expand(cited)
            ):
                missing.append(f"{page.relative_to(ROOT)}: {cited}")
    assert not missing, "results files named in docs/ but not in the repository:\n" + "\n".join(
        missing
    )


def test_nothing_cites_the_design_documents_outside_the_repository():
    me = Path(__file__).resolve()
    hits = []
    for f in _repository_files():
        if f.resolve() == me:
            continue
        text = _text(f)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if any(name in line for name in OUTSIDE):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, (
        "cite the page inside the repository (docs/internals/architecture.md, "
        "docs/methods/<method>.md, docs/published.md) instead:\n" + "\n".join(hits)
    )
