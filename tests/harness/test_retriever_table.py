"""docs/retrievers.md's retriever table is generated from configs/retriever/*.yaml
(hopbench.harness.retriever_table): the committed table is the one the configs give today, every
config has its row, and a stale table (a config added, a row edited by hand) is caught."""

from __future__ import annotations

import shutil
from pathlib import Path

from hopbench.core.paths import RETRIEVER_CONFIGS
from hopbench.harness import retriever_table


def test_the_committed_table_is_the_generated_one():
    assert retriever_table.committed() == retriever_table.render(), (
        "docs/retrievers.md's retriever table is stale: run "
        "python -m hopbench.harness.retriever_table and commit docs/retrievers.md"
    )
    assert retriever_table.main(["--check"]) == 0


def test_every_config_has_a_row_with_what_it_needs():
    rows = {r["name"]: r for r in retriever_table.rows()}
    assert set(rows) == {p.stem for p in Path(RETRIEVER_CONFIGS).glob("*.yaml")}
    assert rows["dense"]["graph"] is False and rows["dense"]["llm"] == "no"
    assert rows["catrag"]["llm"] == "required"  # refuses to run without llm=
    assert rows["hipporag"]["llm"] == "optional"  # its fact filter is on only with llm=
    assert rows["spreading_activation_neo4j"]["neo4j"] is True
    assert rows["spreading_activation_nogate"]["page"] == "docs/methods/qasa.md"  # its parent's


def test_a_config_added_makes_the_table_stale_until_it_is_rewritten(tmp_path, monkeypatch, capsys):
    configs = tmp_path / "retriever"
    shutil.copytree(RETRIEVER_CONFIGS, configs)
    page = tmp_path / "retrievers.md"
    page.write_text(f"# Retrievers\n\n{retriever_table.render()}\n\nhand-written text\n")
    monkeypatch.setattr(retriever_table, "PAGE", page)
    monkeypatch.setattr(retriever_table, "CONFIGS", configs)
    assert retriever_table.main(["--check"]) == 0
    (configs / "dense_copy.yaml").write_text(
        "# A copy (docs/methods/dense.md).\ndefaults:\n  - dense\n  - _self_\nname: dense_copy\n"
    )
    assert retriever_table.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert retriever_table.main([]) == 0  # rewrites the block, keeps the rest of the page
    text = page.read_text()
    assert "| `dense_copy` | dense | no | no | no | `DenseRetriever` |" in text
    assert text.endswith("hand-written text\n")
    assert retriever_table.main(["--check"]) == 0


def test_a_row_edited_by_hand_is_stale(tmp_path, monkeypatch, capsys):
    page = tmp_path / "retrievers.md"
    table = retriever_table.render()
    edited = table.replace("| `dense` | dense | no |", "| `dense` | dense | yes |")
    assert edited != table
    page.write_text(f"# Retrievers\n\n{edited}\n")
    monkeypatch.setattr(retriever_table, "PAGE", page)
    assert retriever_table.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
