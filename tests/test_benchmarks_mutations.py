"""The mutation list of issue #55 (benchmarks/parity/mutations/mutations.yaml) cannot rot: every
rule mutation's old text is in today's source exactly once, every default mutation names a
setting its config really has and changes its value, and the suite's copy tests the copy."""

from __future__ import annotations

import pytest
from benchmarks.common.paths import REPO
from benchmarks.parity.mutations import catalogue, scratch

from tests.retrieve.authors_table import same_value
from tests.retrieve.test_authors_defaults import settings_of

TESTS, MUTATIONS = catalogue.load()
TEXT = [m for m in MUTATIONS if m.file]
CONFIG = [m for m in MUTATIONS if m.config]


@pytest.mark.parametrize("m", TEXT, ids=[m.name for m in TEXT])
def test_old_text_is_found_exactly_once(m):
    catalogue.check_text(m, REPO)


@pytest.mark.parametrize("m", CONFIG, ids=[m.name for m in CONFIG])
def test_default_names_a_real_setting_and_changes_it(m):
    settings = settings_of(m.config)
    assert m.setting in settings, f"{m.name}: {m.config} has no setting {m.setting}"
    assert not same_value(settings[m.setting], m.value), f"{m.name}: value unchanged"


def test_every_mutation_has_a_method_with_tests_and_a_reason():
    for m in MUTATIONS:
        assert m.method in TESTS and m.kind in ("rule", "default") and m.why, m.name
        assert bool(m.file) != bool(m.config), f"{m.name}: a text edit or a config, not both"
    for sel in TESTS.values():
        assert all((REPO / p).exists() for p in sel["paths"]), sel


def test_the_audits_five_are_listed():
    assert sum(m.audit for m in MUTATIONS) == 5


def test_a_stale_text_is_refused(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\nx = 1\n")
    m = catalogue.Mutation(
        name="t", method="m", kind="rule", why="w", file="f.py", old="x = 1", new="x = 2"
    )
    with pytest.raises(catalogue.StaleMutation, match="2 times"):
        catalogue.apply(m, tmp_path)
    (tmp_path / "f.py").write_text("x = 1\n")
    catalogue.apply(m, tmp_path)
    assert (tmp_path / "f.py").read_text() == "x = 2\n"


def test_a_config_mutation_sets_the_dotted_setting(tmp_path):
    cfg = tmp_path / "configs" / "retriever"
    cfg.mkdir(parents=True)
    (cfg / "c.yaml").write_text("defaults:\n  - _self_\nname: c\nalpha: 1.0\n")
    m = catalogue.Mutation(
        name="t", method="m", kind="default", why="w", config="c", setting="a.b", value=3
    )
    catalogue.apply(m, tmp_path)
    text = (cfg / "c.yaml").read_text()
    assert "alpha: 1.0" in text and "b: 3" in text and "- _self_" in text


def test_the_copy_imports_hopbench_from_itself(tmp_path):
    pkg = tmp_path / "src" / "hopbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert scratch.imported_from(tmp_path) == (pkg / "__init__.py").resolve()


def test_the_table_rows_run_last_and_only_the_methods():
    argv = scratch.pytest_argv({"paths": ["tests/a.py"], "table": True}, "catrag")
    assert argv[-1].endswith("test_defaults_against_the_authors") and argv[-2] == "tests/a.py"
    assert "not test_defaults_against_the_authors or catrag-" in argv and "-x" in argv


def test_table_first_runs_only_the_methods_table_rows_and_their_deselects():
    sel = {
        "paths": ["tests/a.py"],
        "table": True,
        "deselect": ["tests/a.py::t", f"{scratch.TABLE_TEST}[qafd-x]"],
    }
    argv = scratch.pytest_argv(scratch.table_only(sel), "qafd")
    assert "tests/a.py" not in argv and argv[-1] == scratch.TABLE_TEST
    assert f"{scratch.TABLE_TEST}[qafd-x]" in argv and "tests/a.py::t" not in argv


class _Runs:
    """Stands in for scratch.run_tests: the table run fails or passes as told; records calls."""

    def __init__(self, table_fails: bool):
        self.table_fails, self.calls = table_fails, []

    def __call__(self, root, selection, method, timeout):
        table_only = not selection["paths"]
        self.calls.append("table" if table_only else "selection")
        failed = table_only and self.table_fails
        return {"passed": not failed, "failed": ["T"] if failed else [], "seconds": 1.0}


class _Ok:
    """Baselines that pass, recording which were asked for."""

    def __init__(self, table_passes: bool = True):
        self.table_passes, self.asked = table_passes, []

    def passed(self, method, table_only=False):
        self.asked.append(table_only)
        return self.table_passes or not table_only


def _fakes(monkeypatch, runs):
    monkeypatch.setattr(scratch, "make_copy", lambda root, worktree: None)
    monkeypatch.setattr(scratch, "imported_from", lambda root: root)
    monkeypatch.setattr(scratch, "run_tests", runs)
    monkeypatch.setattr(catalogue, "apply", lambda m, root: None)


@pytest.mark.parametrize(
    ("kind", "table_fails", "calls", "stage"),
    [
        ("default", True, ["table"], "defaults table"),
        ("default", False, ["table", "selection"], None),
        ("rule", True, ["selection"], None),
    ],
)
def test_table_first_falls_back_to_the_selection_only_when_the_table_passes(
    tmp_path, monkeypatch, kind, table_fails, calls, stage
):
    import argparse

    from benchmarks.parity.mutations import __main__ as suite

    runs = _Runs(table_fails)
    _fakes(monkeypatch, runs)
    m = catalogue.Mutation(name="t", method="m", kind=kind, why="w", config="c", setting="a")
    args = argparse.Namespace(worktree=False, table_first=True, timeout=1.0)
    r = suite.run_one(m, {"m": {"paths": ["tests/a.py"], "table": True}}, tmp_path, args, _Ok())
    assert runs.calls == calls
    assert r["caught_by_stage"] == stage and r["caught"] == (stage is not None)
    assert r["seconds"] == pytest.approx(len(calls), abs=1e-9)


def test_a_failing_table_baseline_marks_the_row_not_run(tmp_path, monkeypatch):
    import argparse

    from benchmarks.parity.mutations import __main__ as suite

    runs = _Runs(table_fails=True)
    _fakes(monkeypatch, runs)
    m = catalogue.Mutation(name="t", method="m", kind="default", why="w", config="c", setting="a")
    args = argparse.Namespace(worktree=False, table_first=True, timeout=1.0)
    base = _Ok(table_passes=False)
    r = suite.run_one(m, {"m": {"paths": ["tests/a.py"], "table": True}}, tmp_path, args, base)
    assert r["baseline_failed"] and not r["caught"] and runs.calls == [] and base.asked == [True]


def test_a_timed_out_run_is_inconclusive_not_caught():
    from benchmarks.parity.mutations.report import TIMEOUT, status

    row = {"caught": True, "failed": [TIMEOUT], "equivalent": None}
    assert status(row) == "timed out (inconclusive)"
    assert status({**row, "failed": ["tests/a.py::t"]}) == "caught"
