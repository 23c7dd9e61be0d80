"""Paper-style tables (issue #29): per dataset, methods x headline metrics with 95% intervals and
the paired difference to dense, built from the leaderboard frame itself (nothing recomputed)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from hopbench.commands.report import main as cli
from hopbench.evaluate import metric_registry
from hopbench.evaluate.metric_registry import (
    BINARY,
    CONTINUOUS,
    LEADERBOARD,
    RETRIEVAL,
    Metric,
    register,
)
from hopbench.report.collect import write_everything
from hopbench.report.leaderboard import finish_table
from hopbench.report.paper_tables import (
    OTHER_QUESTIONS,
    PAPER_TABLES,
    main,
    paper_tables_markdown,
    split_methods,
)
from hopbench.report.stats import holm

P = {"d1": math.nan, "s1": 0.004, "s2": 0.2, "h1": 0.01, "x1": 0.03}


def _row(
    retriever, h, base, n, value, *, n_paired=None, diff="", params=None, dataset="toy", extra=()
):
    row = {
        "dataset": dataset,
        "retriever": retriever,
        "reader": "none",
        "params": diff,
        "params_diff": diff,
        "params_json": json.dumps(params or {}),
        "config_hash": h,
        "n_questions": n,
        "n_retrieval_scored": n,
        "n_answer_scored": 0,
        "baseline": "dense",
        "baseline_config_hash": base,
        "n_paired": n_paired,
        "recall@5": value,
        "recall@5_lo": value - 0.05,
        "recall@5_hi": value + 0.04,
        "p_recall@5": P.get(h, 0.5),
        "delta_recall@5": math.nan if n_paired is None else value - 0.60,
    }
    for m in extra:
        row.update(
            {
                m: value / 2,
                f"{m}_lo": value / 2 - 0.1,
                f"{m}_hi": value / 2 + 0.1,
                f"p_{m}": P.get(h, 0.5),
                f"delta_{m}": math.nan if n_paired is None else 0.02,
            }
        )
    return row


def frame(extra=()) -> pd.DataFrame:
    """dense (the baseline), spreading activation at its defaults and at depth=3 (a variant),
    hipporag_hb on 5 of the 10 questions, and a row whose baseline run is not in the table."""
    return pd.DataFrame(
        [
            _row("dense", "d1", "d1", 10, 0.60, extra=extra),
            _row("spreading_activation", "s1", "d1", 10, 0.70, n_paired=10, extra=extra),
            _row(
                "spreading_activation",
                "s2",
                "d1",
                10,
                0.65,
                n_paired=10,
                diff="depth=3",
                params={"depth": 3},
                extra=extra,
            ),
            _row("hipporag_hb", "h1", "d1", 5, 0.62, n_paired=5, extra=extra),
            _row("flow_diffusion", "x1", "gone00000000", 10, 0.55, n_paired=10, extra=extra),
        ]
    )


def _tables(md: str) -> list[list[list[str]]]:
    """Every markdown table of `md` as rows of cells (header first, separator dropped)."""
    tables, current = [], []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    out = []
    for t in tables:
        cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in t]
        assert all(line.strip().endswith("|") for line in t)
        assert all(len(c) == len(cells[0]) for c in cells), "ragged markdown table"
        assert all(set(c) <= set(":-") for c in cells[1]), "second line is not a separator"
        out.append([cells[0]] + cells[2:])
    return out


def _by_config(table) -> dict[str, dict[str, str]]:
    header, *rows = table
    return {r[header.index("config")]: dict(zip(header, r)) for r in rows}


def test_the_table_reads_values_intervals_and_holm_adjusted_differences():
    df = finish_table(frame())
    md = paper_tables_markdown(df)
    assert md.startswith("## toy")
    main_table, variants = _tables(md)
    rows = _by_config(main_table)
    assert set(rows) == {"d1", "s1", "h1", "x1"} and set(_by_config(variants)) == {"s2"}
    assert main_table[1][main_table[0].index("config")] == "d1"  # the baseline first
    assert rows["d1"]["R@5"] == "60.0 [55.0, 64.0]"
    assert rows["d1"]["Δ R@5"] == "baseline" and rows["d1"]["vs dense"] == "baseline"
    adjusted = dict(zip(P, holm(list(P.values()))))
    assert rows["s1"]["R@5"] == "70.0 [65.0, 74.0]"
    assert rows["s1"]["Δ R@5"] == f"+10.0 ▲ ({adjusted['s1']:.3f})"
    assert rows["s1"]["vs dense"] == "d1" and rows["s1"]["n"] == "10"
    assert _by_config(variants)["s2"]["Δ R@5"] == f"+5.0 ({adjusted['s2']:.3f})"
    assert _by_config(variants)["s2"]["params"] == "depth=3"


def test_rows_on_other_questions_get_no_difference_and_are_marked():
    rows = _by_config(_tables(paper_tables_markdown(finish_table(frame())))[0])
    for h in ("h1", "x1"):  # 5 of dense's 10 questions; a baseline run the table does not hold
        assert rows[h]["method"].endswith(OTHER_QUESTIONS)
        assert rows[h]["Δ R@5"] == "–" and rows[h]["vs dense"] == "–"
        assert rows[h]["R@5"] != "–"
    assert not rows["s1"]["method"].endswith(OTHER_QUESTIONS)


def test_main_row_is_the_defaults_configuration_then_the_most_questions():
    df = finish_table(
        pd.concat(
            [
                frame(),
                pd.DataFrame([_row("spreading_activation", "s3", "d1", 20, 0.5, n_paired=10)]),
            ],
            ignore_index=True,
        )
    )
    main, variants = split_methods(df)
    assert set(main["config_hash"]) == {"d1", "s3", "h1", "x1"}
    assert set(variants["config_hash"]) == {"s1", "s2"}


@pytest.fixture
def declared(monkeypatch):
    monkeypatch.setattr(metric_registry, "_METRICS", dict(metric_registry._METRICS))
    register(
        Metric(
            "precision@3",
            lambda o: 0.0,
            kind=CONTINUOUS,
            needs=(RETRIEVAL,),
            label="Precision@3",
            short="P@3",
            show=(LEADERBOARD,),
        ),
        Metric("first_gold", lambda o: 0.0, kind=BINARY, needs=(RETRIEVAL,), label="Top-1 gold"),
    )


def test_a_headline_metric_declared_in_the_registry_is_a_column(declared):
    header = _tables(
        paper_tables_markdown(finish_table(frame(extra=("precision@3", "first_gold"))))
    )[0][0]
    assert "P@3" in header and "Δ P@3" in header
    assert header.index("R@5") < header.index("P@3")
    assert not any("Top-1" in h or "first_gold" in h for h in header)  # not a headline metric


def test_r_at_1024_tokens_sits_beside_r_at_5_with_its_unadjusted_p():
    """Issue #57: the token-budget recall beside R@k; outside the Holm family, so its Δ carries
    the paired test's own p (P of the row), where R@5's is Holm-adjusted."""
    table = _tables(paper_tables_markdown(finish_table(frame(extra=("recall@1024t",)))))[0]
    header = table[0]
    assert header[header.index("R@5") + 2 : header.index("R@5") + 4] == ["R@1024t", "Δ R@1024t"]
    rows = _by_config(table)
    assert rows["s1"]["R@1024t"] == "35.0 [25.0, 45.0]"  # value / 2 with ±0.1 (frame's extra)
    assert rows["s1"]["Δ R@1024t"] == f"+2.0 ▲ ({P['s1']:.3f})"
    assert rows["d1"]["Δ R@1024t"] == "baseline"
    assert "R@1024t" not in _tables(paper_tables_markdown(finish_table(frame())))[0][0]


def test_without_the_declaration_the_column_is_not_there():
    header = _tables(paper_tables_markdown(finish_table(frame(extra=("precision@3",)))))[0][0]
    assert "P@3" not in header


def test_report_writes_paper_tables_and_points_to_them(toy_runs, tmp_path, capsys):
    results = tmp_path / "results"
    assert (
        cli(
            [
                "--runs-dir",
                str(toy_runs),
                "--results-dir",
                str(results),
                "--no-reference",
                "--no-figures",
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "paper-style tables" in out and str(results / PAPER_TABLES) in out
    md = (results / PAPER_TABLES).read_text()
    rows = _by_config(_tables(md)[0])
    assert rows["d0000000000a"]["Δ R@5"] == "baseline"
    assert rows["5a0000000001"]["vs dense"] == "d0000000000a"
    # the same numbers as the leaderboard it was written with
    lb = pd.read_parquet(results / "leaderboard.parquet").set_index("config_hash")
    r = lb.loc["5a0000000001"]
    assert rows["5a0000000001"]["R@5"].startswith(
        f"{100 * r['recall@5']:.1f} [{100 * r['recall@5_lo']:.1f}, "
    )
    # and the module rewrites it from the folder's leaderboard alone, to the same text
    (results / PAPER_TABLES).unlink()
    assert main([str(results)]) == 0
    assert (results / PAPER_TABLES).read_text() == md


def test_update_reference_writes_paper_tables_into_the_reference(toy_runs, tmp_path):
    ref = tmp_path / "reference"
    write_everything(
        toy_runs, ref, n_resamples=200, figures=False, reference_dir=ref, update_reference=True
    )
    assert "## musique_toy" in (ref / PAPER_TABLES).read_text()
