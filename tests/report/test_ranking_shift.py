"""ranking_shift: pairs that change places between R@5 and R@1024t, on the same questions only."""

import pandas as pd

from hopbench.report.ranking_shift import shift_markdown, swaps

NAMES = {"recall@5": "R@5", "recall@1024t": "R@1024t"}


def frame(rows):
    return pd.DataFrame(
        [
            {
                "retriever": name,
                "recall@5": r5,
                "recall@1024t": rt,
                "card.question_set_digest": digest,
                "card.n_retrieval_scored": 100,
            }
            for name, r5, rt, digest in rows
        ]
    )


def label(row):
    return row["retriever"]


def test_a_strict_swap_is_listed_with_both_orders():
    df = frame([("a", 0.60, 0.50, "q1"), ("b", 0.55, 0.52, "q1"), ("c", 0.40, 0.30, "q1")])
    assert swaps(df, "recall@5", "recall@1024t", label) == [("a", "b", 0.60, 0.55, 0.50, 0.52)]
    text = shift_markdown(df, "recall@5", "recall@1024t", NAMES, label)
    assert "1 pair(s)" in text
    assert "a ahead at R@5 (60.0 vs 55.0), b ahead at R@1024t (52.0 vs 50.0)" in text


def test_ties_and_other_questions_are_not_swaps():
    tied = frame([("a", 0.60, 0.50, "q1"), ("b", 0.60, 0.55, "q1")])
    assert swaps(tied, "recall@5", "recall@1024t", label) == []
    other = frame([("a", 0.60, 0.50, "q1"), ("b", 0.55, 0.52, "q2")])
    assert swaps(other, "recall@5", "recall@1024t", label) == []
    assert "no two main rows" in shift_markdown(other, "recall@5", "recall@1024t", NAMES, label)


def test_without_cards_the_question_counts_decide():
    df = pd.DataFrame(
        [
            {
                "retriever": "a",
                "recall@5": 0.6,
                "recall@1024t": 0.5,
                "n_questions": 100,
                "n_retrieval_scored": 90,
            },
            {
                "retriever": "b",
                "recall@5": 0.5,
                "recall@1024t": 0.6,
                "n_questions": 100,
                "n_retrieval_scored": 90,
            },
            {
                "retriever": "c",
                "recall@5": 0.4,
                "recall@1024t": 0.9,
                "n_questions": 1000,
                "n_retrieval_scored": 900,
            },
        ]
    )
    assert [p[:2] for p in swaps(df, "recall@5", "recall@1024t", label)] == [("a", "b")]


def test_missing_values_are_left_out():
    df = frame([("a", 0.60, None, "q1"), ("b", 0.55, 0.52, "q1")])
    assert swaps(df, "recall@5", "recall@1024t", label) == []
