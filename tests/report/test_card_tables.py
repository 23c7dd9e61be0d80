"""Under each paper table: the protocol cards and graph builds of its rows, a pair across
protocols marked ‡, and the fallback share beside R@5 (issue #57)."""

from __future__ import annotations

from hopbench.report.collect import collect
from hopbench.report.paper_tables import FALLBACK, columns, paper_tables_markdown
from tests.helpers.protocol_cards import nested_card

DENSE_CARD = nested_card(
    llm={"name": "qwen", "digest": "sha256:" + "f" * 64, "roles": ["reader"]}, graph=None
)


def _fell_back(qid):
    """Half of the six toy questions: an LLM step that fell back."""
    return {"fallback": [{"step": "fact_filter", "reason": "bad reply"}]} if qid in "q1q2q3" else {}


def _markdown(tmp_path, run_maker, run_factory, spread_card):
    make_run, dense_table = run_factory
    _, spread_table = run_maker
    runs = tmp_path / "runs"
    make_run(runs, "toy", "dense", "d0000000000a", dense_table, llm={"protocol": DENSE_CARD})
    extra = {} if spread_card is None else {"protocol": spread_card}
    make_run(
        runs,
        "toy",
        "spreading_activation",
        "5a0000000001",
        spread_table,
        llm=extra,
        trace=_fell_back,
    )
    return paper_tables_markdown(collect(runs, n_resamples=200))


def _line(md, start):
    return next(line for line in md.splitlines() if line.startswith(start))


def _cells(line):
    return [c.strip() for c in line.strip("|").split("|")]


def test_the_fallback_share_sits_after_r_at_5_and_is_marked_above_the_warning_rate(
    tmp_path, run_maker, run_factory
):
    cols = columns()
    assert cols[cols.index(FALLBACK) - 1] in ("Δ R@5", "Δ R@1024t")  # R@5's group, then it
    md = _markdown(tmp_path, run_maker, run_factory, nested_card())
    header = _cells(_line(md, "| method"))
    spread = dict(zip(header, _cells(_line(md, "| spreading_activation"))))
    dense = dict(zip(header, _cells(_line(md, "| dense"))))
    assert spread[FALLBACK] == "50.0% ⚠" and dense[FALLBACK] == "0.0%"
    assert header.index(FALLBACK) > header.index("Δ R@5")


def test_rows_name_their_card_and_the_card_table_says_what_it_holds(
    tmp_path, run_maker, run_factory
):
    md = _markdown(tmp_path, run_maker, run_factory, nested_card())
    header = _cells(_line(md, "| method"))
    spread = dict(zip(header, _cells(_line(md, "| spreading_activation"))))
    assert spread["method"] == "spreading_activation"  # same protocol: no mark
    card = _cells(_line(md, f"| {spread['card']}"))
    assert "passage" in card and "863/1000" in card and "sha256:cccccccccccc" in card
    assert "qwen (sha256:ffffffffffff); reader, retrieval" in card
    assert "Recall, every card: recall@k: share of gold passages in the top k." in md
    graph = _cells(_line(md, "| spacy"))
    assert graph == ["spacy", "10", "5", "4", "3", "2", "7"]
    assert "‡ paired with" not in md


def test_a_pair_across_protocols_is_marked_and_named_under_the_table(
    tmp_path, run_maker, run_factory
):
    other = nested_card(chunking="tokens: 1000 (overlap 100, by tok)")
    md = _markdown(tmp_path, run_maker, run_factory, other)
    assert _line(md, "| spreading_activation ‡")
    assert "‡ paired with a baseline on another protocol (the card fields that differ): " in md
    assert "spreading_activation 5a0000000001 (chunking)" in md


def test_rows_without_a_card_are_named_not_given_one(tmp_path, run_maker, run_factory):
    md = _markdown(tmp_path, run_maker, run_factory, None)
    assert "Without a protocol card (written before runs recorded one; rerun to add it): " in md
    assert "spreading_activation 5a0000000001." in md
    spread = _cells(_line(md, "| spreading_activation"))
    assert "–" in spread and not _line(md, "| spreading_activation").count("‡")
