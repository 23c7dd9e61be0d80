"""The leaderboard's protocol-card columns: `card.*` from metrics.json, the card id, and a pair
across protocols flagged with the fields that differ (issue #57)."""

from __future__ import annotations

from hopbench.report.collect import collect
from tests.helpers.protocol_cards import nested_card


def _rows(runs):
    df = collect(runs, n_resamples=200)
    return {r["retriever"]: r for _, r in df.iterrows()}


def _two_runs(tmp_path, run_maker, run_factory, spread_card):
    make_run, dense_table = run_factory
    _, spread_table = run_maker
    runs = tmp_path / "runs"
    dense_card = nested_card(
        llm={"name": "qwen", "digest": "sha256:" + "f" * 64, "roles": ["reader"]}, graph=None
    )
    make_run(runs, "toy", "dense", "d0000000000a", dense_table, llm={"protocol": dense_card})
    extra = {} if spread_card is None else {"protocol": spread_card}
    make_run(runs, "toy", "spreading_activation", "5a0000000001", spread_table, llm=extra)
    return runs


def test_rows_on_one_protocol_share_a_card_id_and_are_not_flagged(tmp_path, run_maker, run_factory):
    rows = _rows(_two_runs(tmp_path, run_maker, run_factory, nested_card()))
    dense, spread = rows["dense"], rows["spreading_activation"]
    assert dense["card_id"] == spread["card_id"]
    assert spread["card_differs"] is False and spread["card_differences"] is None
    assert dense["card_differs"] is False  # its own baseline
    assert spread["card.graph_entities"] == 10 and spread["card.llm_roles"] == "retrieval+reader"
    assert "protocol" not in rows["dense"].index  # the nested record is not a column


def test_a_pair_across_protocols_is_flagged_with_the_fields(tmp_path, run_maker, run_factory):
    other = nested_card(
        embedder={"name": "minilm", "digest": "sha256:" + "0" * 64}, reader_context="1024 tokens"
    )
    spread = _rows(_two_runs(tmp_path, run_maker, run_factory, other))["spreading_activation"]
    assert spread["card_differs"] is True
    assert spread["card_differences"] == "embedder_digest, reader_context"


def test_a_run_without_a_card_leaves_the_pair_unknown(tmp_path, run_maker, run_factory):
    rows = _rows(_two_runs(tmp_path, run_maker, run_factory, None))
    spread = rows["spreading_activation"]
    assert spread["card_id"] is None and spread["card_differs"] is None
    assert rows["dense"]["card_id"] is not None
