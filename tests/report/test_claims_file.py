"""results/claims.yaml is checked field by field: a bad one is one line naming the file, the
claim and the field, and exit code 2 from `hopbench claims`."""

import copy

import pytest
import yaml

from hopbench.cli import main as hopbench
from hopbench.core.errors import DataError
from hopbench.report.claims_file import load_claims
from tests.report.test_claims import CLAIM


def _write(tmp_path, claims) -> str:
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": claims}))
    return str(path)


def _broken(**changes) -> dict:
    claim = copy.deepcopy(CLAIM)
    for key, value in changes.items():
        if value is None:
            claim.pop(key)
        else:
            claim[key] = value
    return claim


@pytest.mark.parametrize(
    "claim, field, problem",
    [
        (_broken(metric="recall@55"), "metric", "no declared metric"),
        (_broken(direction="up"), "direction", "expected one of"),
        (_broken(source=None), "source", "non-empty text"),
        (_broken(id="Not An Id"), "id", "lower-case"),
        (_broken(row={"graph": "spacy"}), "row.retriever", "missing"),
        (_broken(baseline={"retriever": "dense", "grpah": "x"}), "baseline.grpah", "unknown"),
        (_broken(row={"retriever": "m", "params_diff": "x"}), "row.params_diff", "list of texts"),
        (_broken(checks=[{"kind": "ratio", "column": "x", "min": 0}]), "checks[0].min", "> 0"),
        (_broken(checks=[{"kind": "speed", "column": "x"}]), "checks[0].kind", "one of"),
    ],
)
def test_a_bad_field_is_named(tmp_path, claim, field, problem):
    path = _write(tmp_path, [claim])
    with pytest.raises(DataError) as err:
        load_claims(path)
    assert err.value.field == field and problem in err.value.problem
    assert str(err.value).startswith(f"{path}: record claims[0]")


def test_an_id_used_twice_is_refused(tmp_path):
    with pytest.raises(DataError, match=r"claims\[1\] \(m_beats_base\), field 'id'"):
        load_claims(_write(tmp_path, [CLAIM, CLAIM]))


def test_the_command_says_it_in_one_line_with_exit_code_2(tmp_path, capsys):
    path = _write(tmp_path, [_broken(metric="recall@55")])
    ref = tmp_path / "reference"
    ref.mkdir()
    assert hopbench(["claims", "--claims", path, "--reference-dir", str(ref)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err == (
        f"hopbench claims: error: {path}: record claims[0] (m_beats_base), field 'metric': "
        "'recall@55' is no declared metric"
    )
    assert not (ref / "claims.md").exists()


def test_a_file_without_claims_is_refused(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text("claims: []\n")
    with pytest.raises(DataError, match="non-empty list of claims"):
        load_claims(path)
