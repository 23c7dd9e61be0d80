"""The tests are a package: every folder of test code has an `__init__.py`, so pytest imports
`tests/llm/test_cache.py` as `tests.llm.test_cache`, and helpers are shared by plain imports
(`from tests.helpers.scripted_llm_server import ScriptedServer`), never by editing sys.path.

Read as text, nothing is imported.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# a call of insert, append, extend or remove on the list, `+=`, or an assignment to it or to a
# slice of it (the pattern is spelled in pieces so this file does not match itself)
SYS_PATH_EDIT = re.compile(
    r"\bsys\.path" + r"(\.(insert|append|extend|remove)\s*\(|\s*\+=|\s*=(?!=)|\[[^\]]*\]\s*=(?!=))"
)
# The one allowed: a child process script written as a string and run with `python -c`; the
# child has no pytest config, so it puts this checkout's src first itself.
CHILD_SCRIPTS = {"tests/harness/test_run_store.py": 1}


def _test_code() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_test_file_edits_sys_path():
    found: dict[str, int] = {}
    for path in _test_code():
        hits = len(SYS_PATH_EDIT.findall(path.read_text(encoding="utf-8")))
        if hits:
            found[path.relative_to(ROOT).as_posix()] = hits
    assert found == CHILD_SCRIPTS, (
        "import test helpers as modules of the tests package "
        "(from tests.helpers.x import y), do not edit sys.path"
    )


def test_the_pattern_sees_each_way_of_editing_sys_path():
    path = "sys." + "path"
    for line in (
        f"{path}.insert(0, 'x')",
        f"{path}.append('x')",
        f"{path}.extend(['x'])",
        f"{path} += ['x']",
        f"{path} = ['x']",
        f"{path}[:0] = ['x']",
    ):
        assert SYS_PATH_EDIT.search(line), line
    for line in (f"print({path})", f"assert {path} == before", f"x in {path}"):
        assert not SYS_PATH_EDIT.search(line), line


def test_every_folder_of_test_code_is_a_package():
    folders = {p.parent for p in _test_code()}
    assert TESTS / "helpers" in folders
    missing = sorted(
        f.relative_to(ROOT).as_posix() for f in folders if not (f / "__init__.py").is_file()
    )
    assert not missing, f"add an __init__.py to {missing}"


def test_a_test_module_is_imported_as_part_of_the_tests_package():
    assert __name__ == "tests.test_test_imports"
