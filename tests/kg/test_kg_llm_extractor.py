"""The LLM extractor and LLM descriptions, driven by a scripted client on real MuSiQue passages."""

from __future__ import annotations

import json

import pytest

from hopbench.kg import load_or_build
from hopbench.kg.llm_extractor import LLMExtractor, parse_triples
from hopbench.llm.errors import LLMTimeoutError, LLMUnavailableError
from tests.kg.kg_helpers import ScriptedLLM

TENNESSEE_NER = json.dumps(
    {"named_entities": ["Tennessee", "Kentucky", "Virginia", "Nashville", "Memphis"]}
)
TENNESSEE_TRIPLES = json.dumps(
    {
        "triples": [
            ["Tennessee", "is bordered by", "Kentucky"],
            ["Tennessee", "is bordered by", "Virginia"],
            ["Nashville", "is the capital of", "Tennessee"],
            ["Memphis", "is the largest city of", "Tennessee"],
            ["Tennessee", "has"],  # malformed: dropped
            ["", "is", "Tennessee"],  # empty field: dropped
            ["Tennessee", "is bordered by", "Kentucky"],  # duplicate: dropped
        ]
    }
)


def _answers(broken_title: str):
    def answers(schema_name: str, user: str) -> list[str]:
        title = user.split("\n", 1)[0].removeprefix("Title: ")
        if title == broken_title:
            return ["Sure! Here are the entities: [", '{"named_entities": ["x"', "not json either"]
        if title == "Tennessee":
            if schema_name == "named_entities":
                return ["```json oops", TENNESSEE_NER]  # first attempt invalid, retry succeeds
            return [TENNESSEE_TRIPLES]
        if schema_name == "named_entities":
            return [json.dumps({"named_entities": [title]})]
        if schema_name == "entity_description":
            entity = user.split("\n", 1)[0].removeprefix("Entity: ")
            if entity == "Kentucky":
                return ["{broken"]
            return [json.dumps({"description": f"{entity} is described by the scripted model."})]
        return [json.dumps({"triples": []})]

    return answers


def test_parse_triples_keeps_only_well_formed():
    out = parse_triples(json.loads(TENNESSEE_TRIPLES))
    assert out == [
        ["Tennessee", "is bordered by", "Kentucky"],
        ["Tennessee", "is bordered by", "Virginia"],
        ["Nashville", "is the capital of", "Tennessee"],
        ["Memphis", "is the largest city of", "Tennessee"],
    ]
    with pytest.raises(TypeError):
        parse_triples({"facts": []})


def test_llm_build_counts_failures_and_keeps_the_passage(musique_sub, encoder, tmp_path):
    broken = musique_sub.corpus[1].title
    llm = ScriptedLLM(_answers(broken))
    kg = load_or_build(
        musique_sub, {"extractor": "llm"}, encoder=encoder, llm=llm, cache_dir=tmp_path
    )
    assert kg.manifest["counts"]["failed_passages"] == 1
    assert kg.failed_passages == [musique_sub.corpus[1].id]
    e = kg.title_entity(1)
    assert e is not None and kg.context[1, e] == 1  # failed, still a node with its title
    triples = {kg.fact_triple(f) for f in range(kg.n_facts)}
    assert triples == {
        ("tennessee", "is bordered by", "kentucky"),
        ("tennessee", "is bordered by", "virginia"),
        ("nashville", "is the capital of", "tennessee"),
        ("memphis", "is the largest city of", "tennessee"),
    }
    tn = kg.entity_index("tennessee")
    assert kg.relation[tn, kg.entity_index("kentucky")] == 1
    # the failure is recorded in the extraction log, and a rebuild does not ask again
    log = next((tmp_path / "kg" / "extractions").glob("*.jsonl")).read_text().splitlines()
    failed = [json.loads(x) for x in log if json.loads(x)["status"] == "failed"]
    assert len(failed) == 1 and "no valid JSON" in failed[0]["error"]
    n_calls = len(llm.calls)
    again = load_or_build(
        musique_sub, {"extractor": "llm"}, encoder=encoder, llm=llm, cache_dir=tmp_path
    )
    assert again.manifest["cache_hit"] and len(llm.calls) == n_calls


def test_llm_needed_and_identity_in_key(musique_sub, encoder, tmp_path):
    from hopbench.core.errors import HopbenchError

    with pytest.raises(HopbenchError, match="needs an LLM"):
        load_or_build(
            musique_sub, {"extractor": "llm"}, encoder=encoder, llm=None, cache_dir=tmp_path
        )
    a = LLMExtractor(ScriptedLLM(_answers("")), llm_identity="model-a").identity()
    b = LLMExtractor(ScriptedLLM(_answers("")), llm_identity="model-b").identity()
    assert a != b


def test_llm_descriptions_with_fallback(musique_sub, musique_kg, encoder, tmp_path):
    llm = ScriptedLLM(_answers("no such title"))
    cfg = {"extractor": "llm", "description": {"source": "llm", "llm_min_facts": 1}}
    kg = load_or_build(musique_sub, cfg, encoder=encoder, llm=llm, cache_dir=tmp_path)
    tn, ky = kg.entity_index("tennessee"), kg.entity_index("kentucky")
    assert kg.entity_descriptions[tn] == "Tennessee: Tennessee is described by the scripted model."
    assert kg.entity_descriptions[ky].startswith(
        "Kentucky: Tennessee is bordered by Kentucky"
    )  # fallback
    assert kg.manifest["counts"]["llm_description_failures"] == 1
    assert (
        kg.manifest["counts"]["llm_descriptions"] == 4
    )  # entities with >= 1 fact, minus the failure


@pytest.mark.parametrize(
    "error",
    [LLMUnavailableError("connection refused"), LLMTimeoutError("did not answer within 600 s")],
)
def test_unreachable_server_stops_the_build_without_marking_failures(
    musique_sub, encoder, tmp_path, error
):
    """A server that is gone or too slow is not a bad passage: the build stops and resumes later."""
    answers = _answers("no such title")
    served = []

    def flaky(schema_name, user):
        if len(served) >= 6:  # 3 passages (2 calls each), then the server goes away
            raise error
        served.append(schema_name)
        return answers(schema_name, user)

    with pytest.raises(type(error)):
        load_or_build(
            musique_sub,
            {"extractor": "llm"},
            encoder=encoder,
            llm=ScriptedLLM(flaky),
            cache_dir=tmp_path,
        )
    log = next((tmp_path / "kg" / "extractions").glob("*.jsonl")).read_text().splitlines()
    assert len(log) == 3 and all(json.loads(x)["status"] == "ok" for x in log)
    kg = load_or_build(
        musique_sub,
        {"extractor": "llm"},
        encoder=encoder,
        llm=ScriptedLLM(answers),
        cache_dir=tmp_path,
    )
    assert kg.failed_passages == [] and kg.n_passages == len(musique_sub.corpus)


def test_concurrent_extraction_gives_the_same_graph(musique_sub, encoder, tmp_path, in_flight):
    """Passages sent 4 at a time (a server with a fixed latency): the same records, failures
    included; the log is keyed by passage id, so arrival order does not matter."""
    broken = musique_sub.corpus[1].title
    slow = in_flight.wrap(_answers(broken), delay=0.05)

    graphs = {}
    for n in (1, 4):
        graphs[n] = load_or_build(
            musique_sub,
            {"extractor": "llm"},
            encoder=encoder,
            llm=ScriptedLLM(slow),
            cache_dir=tmp_path / f"c{n}",
            concurrency=n,
        )
        logs = (tmp_path / f"c{n}" / "kg" / "extractions").glob("*.jsonl")
        graphs[n].records = sorted(
            json.loads(x)["passage_id"] + x for x in next(logs).read_text().splitlines()
        )
    assert graphs[1].records != [] and sorted(graphs[1].records) == sorted(graphs[4].records)
    assert graphs[1].manifest["graph_key"] == graphs[4].manifest["graph_key"]  # runtime only
    assert {graphs[n].fact_triple(f) for n in (1, 4) for f in range(graphs[n].n_facts)} == {
        graphs[1].fact_triple(f) for f in range(graphs[1].n_facts)
    }
    assert graphs[4].failed_passages == graphs[1].failed_passages == [musique_sub.corpus[1].id]
    assert in_flight.peak == 4
