"""The uniform fallback field, and the older trace keys it reads so old runs are counted too."""

from hopbench.core.fallback_field import DENSE, fallbacks, record_fallback


def test_the_list_form_is_read_as_written():
    trace: dict = {}
    record_fallback(trace, "fact_filter", "bad reply")
    record_fallback(trace, DENSE, "no fact survived the filter")
    assert fallbacks(trace) == [
        {"step": "fact_filter", "reason": "bad reply"},
        {"step": DENSE, "reason": "no fact survived the filter"},
    ]
    assert fallbacks({}) == fallbacks(None) == []


def test_traces_written_before_the_field_are_counted():
    # hipporag: a failed filter and its dense ranking
    old = fallbacks(
        {
            "filter_error": "LLM answer ... did not match",
            "dense_fallback": True,
            "fallback": "no fact survived the filter",
        }
    )
    assert [e["step"] for e in old] == ["fact_filter", DENSE]
    assert fallbacks({"dense_fallback": True})[0]["step"] == DENSE  # flow diffusion
    assert fallbacks({"query_timeout": True, "timeout_s": 30})[0]["step"] == DENSE  # Neo4j
    assert fallbacks({"dense_fallback": False, "ner_error": ""}) == []
    assert [e["step"] for e in fallbacks({"scoring_errors": ["x"]})] == ["neighbour_scores"]
