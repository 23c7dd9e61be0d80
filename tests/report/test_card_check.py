"""`hopbench report --check-reference`, protocol side: reference rows without a card or with an
incomplete one, and pairs across protocols, are named one line each and exit 2; the plain report
only warns (issue #57)."""

from __future__ import annotations

import pandas as pd

from hopbench.commands.report import main as report
from hopbench.core.protocol_card import card_columns
from hopbench.report.card_check import as_rerun, card_problems, card_summary, lacking_card
from tests.helpers.protocol_cards import nested_card

DENSE_CARD = nested_card(llm=None, reader_context=None, graph=None)


def _row(retriever, h, base, card):
    return {
        "dataset": "toy",
        "retriever": retriever,
        "config_hash": h,
        "baseline_config_hash": base,
        **card_columns(card),
    }


def test_a_table_on_one_protocol_has_no_problem():
    df = pd.DataFrame(
        [_row("dense", "d", "d", DENSE_CARD), _row("hipporag", "h", "d", nested_card())]
    )
    assert card_problems(df) == []
    assert card_summary(df)[0].endswith(
        "every card complete, every paired row on its baseline's protocol"
    )


def test_each_problem_is_one_line_naming_the_row():
    df = pd.DataFrame(
        [
            _row("dense", "d", "d", DENSE_CARD),
            _row("old", "o", "d", None),
            _row("half", "h", "d", nested_card(embedder={"name": "minilm", "digest": None})),
            _row("bge", "b", "d", nested_card(embedder={"name": "bge", "digest": "sha256:b"})),
        ]
    )
    assert card_problems(df) == [
        "  no protocol card: toy/old/o (written before runs recorded one; rerun it)",
        "  incomplete card: toy/half/h: no embedder_digest",
        "  paired across protocols: toy/half/h vs d: embedder_digest differ",
        "  paired across protocols: toy/bge/b vs d: embedder, embedder_digest differ",
    ]
    assert lacking_card(df) == ["toy/old/o"]


def test_a_baseline_outside_the_table_falls_back_to_the_recorded_flag():
    row = _row("m", "m", "gone", nested_card())
    flagged = pd.DataFrame([{**row, "card_differs": True, "card_differences": "corpus_digest"}])
    assert card_problems(flagged) == [
        "  paired across protocols: toy/m/m vs gone: corpus_digest differ"
    ]
    assert card_problems(pd.DataFrame([{**row, "card_differs": False}])) == []


def _runs(tmp_path, run_factory, run_maker, spread_card):
    make_run, dense_table = run_factory
    _, spread_table = run_maker
    runs = tmp_path / "runs"
    dense = nested_card(
        llm={"name": "qwen", "digest": "sha256:" + "f" * 64, "roles": ["reader"]}, graph=None
    )
    make_run(runs, "toy", "dense", "d0000000000a", dense_table, llm={"protocol": dense})
    extra = {} if spread_card is None else {"protocol": spread_card}
    make_run(runs, "toy", "spreading_activation", "5a0000000001", spread_table, llm=extra)
    return runs


def _report(tmp_path, runs, *flags):
    base = ["--runs-dir", str(runs), "--no-figures", "--resamples", "200"]
    return report([*base, "--reference-dir", str(tmp_path / "ref"), *flags])


def test_check_reference_passes_on_complete_cards_and_exits_2_without_one(
    tmp_path, run_factory, run_maker, capsys, caplog
):
    good = _runs(tmp_path / "good", run_factory, run_maker, nested_card())
    assert _report(tmp_path, good, "--update-reference") == 0
    capsys.readouterr()
    results = ["--results-dir", str(tmp_path / "results")]
    assert _report(tmp_path, good, *results, "--check-reference") == 0
    out = capsys.readouterr().out
    assert "protocol check: 2 reference row(s) (2 as your runs made them again); every card" in out

    old = _runs(tmp_path / "old", run_factory, run_maker, None)
    assert _report(tmp_path, old, "--update-reference") == 0
    assert "1 run(s) without a protocol card" in caplog.text  # the plain report warns
    caplog.clear()
    assert _report(tmp_path, old, *results) == 0
    assert "protocols): toy/spreading_activation/5a0000000001" in caplog.text
    capsys.readouterr()
    assert _report(tmp_path, old, *results, "--check-reference") == 2
    out = capsys.readouterr().out
    assert "  no protocol card: toy/spreading_activation/5a0000000001 (written before" in out
    # the rerun of a reference written before cards: checked with the cards the runs recorded
    assert _report(tmp_path, good, *results, "--check-reference") == 0


def test_as_rerun_puts_your_runs_in_place_of_their_reference_rows():
    reference = pd.DataFrame([_row("dense", "d", "d", None), _row("old", "o", "d", None)])
    runs = pd.DataFrame([_row("dense", "d", "d", DENSE_CARD), _row("mine", "m", "d", DENSE_CARD)])
    checked = as_rerun(reference, runs)
    assert sorted(checked["retriever"]) == [
        "dense",
        "old",
    ]  # your other runs are not reference rows
    assert lacking_card(checked) == ["toy/old/o"]
