"""constraints.txt (what `make install` installs) pins every dependency pyproject.toml declares,
at a version pyproject allows, so the lock and the declared ranges cannot drift apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep, f"constraints.txt: '{line}' is not an exact pin (name==version)"
        pins[canonicalize_name(name)] = version
    return pins


def test_every_declared_dependency_is_pinned_within_its_range():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in ("dev", "llm"):
        declared += project["optional-dependencies"][extra]
    pins = _pins()
    for spec in declared:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in pins, (
            f"{req.name} is declared in pyproject.toml but not pinned in constraints.txt"
        )
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {req.name}=={pins[name]}, outside pyproject's '{req.specifier}'"
        )
