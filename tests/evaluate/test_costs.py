"""How many questions were in flight when each row's LLM calls were made (`concurrency_counts`)."""

from __future__ import annotations

from hopbench.evaluate.costs import concurrency_counts


def test_concurrency_counts_each_row_by_what_it_recorded():
    rows = [
        {"trace": {"llm_cost": {"llm_calls": 3, "concurrency": 1}}},
        {"trace": {"llm_cost": {"llm_calls": 2, "concurrency": 2}}},
        {"trace": {"llm_cost": {"llm_calls": 2, "concurrency": 2}}},
        {"trace": {"llm_cost": {"llm_calls": 4}}},  # written before the value was recorded
        {"trace": {}},  # a row without an LLM
    ]
    assert concurrency_counts(rows) == {"question_concurrency": {"1": 1, "2": 2, "unrecorded": 1}}


def test_a_run_without_an_llm_has_no_concurrency_counts():
    assert concurrency_counts([{"trace": {}}, {"trace": {"facts": []}}]) == {}
