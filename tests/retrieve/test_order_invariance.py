"""Every CPU retriever that declares no position feature (`Retriever.position_features`) ranks
the same under a shuffled corpus (dataset.corpus_order=shuffled), on a real slice: the first 20
MuSiQue questions over their own paragraphs (~400 passages), end to end through `execute()`.

Exact-tie allowance: a retriever may break an exact tie by corpus position, so two rankings are
the same when, rank by rank, their scores agree within SCORE_TOL and their passages agree
wherever the score at that rank is not tied (within SCORE_TOL) with a neighbouring rank's.
SCORE_TOL is float32 noise, not a tolerance for method differences: the passage vectors of a
shuffled corpus are encoded in other length-sorted batches (the embedding cache is keyed by the
ordered text list), and other batch mates move a float32 cosine by up to ~1e-7 (measured: 6e-8
on dense). A method that reads positions (LinearRAG with its
adjacent-passage edges or its "i:" prefix) declares them and is exempt; the study measures it
(benchmarks/studies/linearrag_protocol.py).
"""

from __future__ import annotations

import json

import pytest

from hopbench.harness.compose import build_retriever, load_config
from hopbench.harness.runner import execute

SCORE_TOL = 1e-6
N_QUESTIONS = 20
SHUFFLE_SEED = 7
# no LLM: no fact filter, as configs/paper.yaml's rows
NO_FILTER = ("retriever.seeding.filter=false",)
CPU_RETRIEVERS = {
    "dense": (),
    "bm25": (),
    "hybrid": (),
    "hipporag": NO_FILTER,
    "hipporag_hb": NO_FILTER,
    "hipporag1": (),
    "spreading_activation": (),
    "spreading_activation_nogate": (),
    "flow_diffusion_code": (),
    "flow_diffusion_joint": (),
    "linearrag": ("retriever.adjacent_edges=false", "retriever.passage_prefix=false"),
}


@pytest.fixture(scope="module")
def musique_slice(data_dir, tmp_path_factory):
    """The first N_QUESTIONS MuSiQue questions; the corpus is their own paragraphs."""
    questions = json.loads((data_dir / "musique/musique_train.json").read_text())[:N_QUESTIONS]
    path = tmp_path_factory.mktemp("slice") / "musique_slice.json"
    path.write_text(json.dumps(questions))
    return path


def _overrides(retriever, extra, slice_path, runs, cache_dir, order):
    return [
        f"retriever={retriever}",
        *extra,
        "dataset=musique",
        f"dataset.questions_path={slice_path}",
        "dataset.corpus_path=null",
        "dataset.name=musique_slice",
        f"+dataset.corpus_order={order}",
        f"+dataset.corpus_seed={SHUFFLE_SEED}",
        "llm=none",
        "reader=none",
        f"paths.runs_dir={runs}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
    ]


def _rows(runs, retriever) -> dict[str, dict]:
    (run,) = [
        p for p in (runs / "musique_slice" / retriever).iterdir() if not p.name.startswith(".")
    ]
    lines = (run / "predictions.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def same_up_to_exact_ties(a_ids, a_scores, b_ids, b_scores, tol=SCORE_TOL) -> str | None:
    """None when the rankings agree (module docstring), else where they first differ."""
    if len(a_ids) != len(b_ids):
        return f"lengths {len(a_ids)} and {len(b_ids)}"
    for i, (sa, sb) in enumerate(zip(a_scores, b_scores)):
        if abs(sa - sb) > tol:
            return f"rank {i + 1}: score {sa!r} against {sb!r}"
    for i, (x, y) in enumerate(zip(a_ids, b_ids)):
        tied = any(
            0 <= j < len(a_scores) and abs(a_scores[j] - a_scores[i]) <= tol for j in (i - 1, i + 1)
        )
        if x != y and not tied:
            return f"rank {i + 1}: {x} against {y}, score {a_scores[i]!r} not tied"
    return None


def test_tie_allowance_accepts_a_swap_inside_a_tie_only():
    assert same_up_to_exact_ties(["a", "b", "c"], [3, 2, 2], ["a", "c", "b"], [3, 2, 2]) is None
    assert same_up_to_exact_ties(["a", "b"], [3, 2], ["b", "a"], [3, 2]) is not None
    assert same_up_to_exact_ties(["a", "b"], [3, 2], ["a", "b"], [3, 2.5]) is not None


def test_the_code_push_loop_declares_its_push_order():
    assert build_retriever(load_config(["retriever=flow_diffusion_code"])).position_features == (
        "push_order",
    )


def test_linearrag_with_its_position_features_declares_them():
    assert build_retriever(load_config(["retriever=linearrag"])).position_features == (
        "adjacent_edges",
        "passage_prefix",
    )


# Measured to move (#56). The cause, read from the code: the graph's entity descriptions read
# the corpus order (kg/descriptions.py: an entity's facts in corpus order up to `max_facts`,
# then the sentence of the first passage that mentions it, cut to `max_chars`), so a shuffled
# corpus gives some entities other description texts and vectors. flow_diffusion_joint's node
# vectors are those description vectors (`node_embedding: description`); its scores differ by
# up to ~1e4 on every question of the slice. Ranking equal excesses at the push budget's cut by
# node name instead of index did not remove the move (tried, 2026-12-07). Fixed: hybrid fused
# BM25 ranks whose exact ties were broken by corpus position; ties now go by passage id.
# flow_diffusion_code moved too (rank-1 scores by up to 2x): its push loop's seeded random.choice
# over node indices, the authors' computation, which it declares (`position_features`).
MOVES_UNDECLARED = {
    "flow_diffusion_joint": "descriptions read corpus order (kg/descriptions.py): its node vectors",
}
# Seen to move in a fresh-clone run (2026-12-07): the gate compares the question with the same
# order-dependent description vectors (above); whether a ranking moves depends on a gate value
# crossing its threshold, so not on every machine's float noise. Not strict: an XPASS shows.
MOVES_UNDIAGNOSED = {
    "spreading_activation": "the gate reads descriptions, which read corpus order",
    "spreading_activation_nogate": "its seeds are nearest descriptions, which read corpus order",
}


def _case(name: str):
    if name in MOVES_UNDIAGNOSED:
        return pytest.param(
            name, marks=pytest.mark.xfail(strict=False, reason=MOVES_UNDIAGNOSED[name])
        )
    if name in MOVES_UNDECLARED:
        return pytest.param(
            name, marks=pytest.mark.xfail(strict=True, reason=MOVES_UNDECLARED[name])
        )
    return name


@pytest.mark.slow
@pytest.mark.parametrize("retriever", [_case(r) for r in sorted(CPU_RETRIEVERS)])
def test_ranking_does_not_move_under_a_shuffled_corpus(
    retriever, musique_slice, tmp_path, cache_dir
):
    extra = CPU_RETRIEVERS[retriever]
    rows = {}
    for order in ("given", "shuffled"):
        runs = tmp_path / order
        cfg = load_config(_overrides(retriever, extra, musique_slice, runs, cache_dir, order))
        if features := build_retriever(cfg).position_features:
            pytest.skip(f"{retriever} declares position features {features}: exempt")
        execute(cfg)
        rows[order] = _rows(runs, cfg.retriever.name)
    given, shuffled = rows["given"], rows["shuffled"]
    assert len(given) == N_QUESTIONS and given.keys() == shuffled.keys()
    problems = {
        qid: diff
        for qid in given
        if (
            diff := same_up_to_exact_ties(
                given[qid]["ranked_passage_ids"],
                given[qid]["scores"],
                shuffled[qid]["ranked_passage_ids"],
                shuffled[qid]["scores"],
            )
        )
    }
    assert not problems, f"{retriever} moved under a shuffle: {problems}"
