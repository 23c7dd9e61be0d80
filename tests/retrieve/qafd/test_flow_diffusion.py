"""flow_diffusion = QAFD's answering pipeline on the MuSiQue sub-corpus graph (issue #32)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from hopbench.core.errors import HopbenchError
from hopbench.core.fallback_field import DENSE, fallbacks
from hopbench.retrieve.qafd.flow_diffusion import KEYWORD_FALLBACK, FlowDiffusionRetriever
from hopbench.retrieve.qafd.prompts import qafd_clusters, qafd_keywords
from hopbench.retrieve.qafd.text_units import seed_text_units
from hopbench.retrieve.question import question_phrases


@dataclass
class Result:
    text: str


class FakeLLM:
    """Keywords from `reply`, cluster summaries 'Cluster i: summary i' (tests only)."""

    def __init__(self, reply=None, summaries=True):
        self.reply, self.summaries = reply, summaries
        self.requests: list = []

    def chat_json(
        self, messages, schema, *, schema_name="response", max_tokens=None, retries=2, trace=None
    ):
        self.requests.append((schema_name, messages))
        return self.reply

    def chat(self, messages, **kw):
        self.requests.append(("chat", messages))
        n = messages[-1]["content"].count("Source entity:")
        text = "\n".join(
            f"Cluster {i}: summary {i}" for i in range(1, n + 1 if self.summaries else 1)
        )
        return Result(text)


def _prepared(kg, services, llm=None, **kw):
    services.llm = llm
    r = FlowDiffusionRetriever(**kw)
    r.prepare(kg, services)
    return r


def test_ranking_is_the_seed_units_then_dense(musique_kg, services, musique_sub, encoder):
    kg = musique_kg
    r = _prepared(kg, services, keywords=False, clusters=False)
    for q in musique_sub.questions:
        got = r.retrieve(q, kg.n_passages)
        assert "fallback" not in got.trace  # keywords=false: phrases on purpose
        text = ", ".join(question_phrases(q.text))
        score = kg.description_embeddings.astype(np.float64) @ encoder.encode([text])[0].astype(
            np.float64
        )
        seeds = np.lexsort((np.arange(len(score)), -score))[:40]
        units = [u.passage for u in seed_text_units(seeds, kg.passages_of_entity, r._neighbours)]
        dense = services.passage_embeddings @ services.query_embedding(q)
        rest = sorted(set(range(kg.n_passages)) - set(units), key=lambda i: (-dense[i], i))
        assert got.passage_ids == [kg.passage_ids[i] for i in units + rest]
        assert got.trace["n_units"] == len(units) and [
            lv["level"] for lv in got.trace["levels"]
        ] == ["low"]
        assert got.scores[: len(units)] == [float(len(units) - i) for i in range(len(units))]


def test_no_llm_means_phrases_recorded_as_a_fallback(musique_kg, services, musique_sub):
    r = _prepared(musique_kg, services, clusters=False)  # keywords: auto, no llm=
    got = r.retrieve(musique_sub.questions[0], 5)
    assert [f["step"] for f in fallbacks(got.trace)] == [KEYWORD_FALLBACK]
    assert len(got.passage_ids) == 5


def test_llm_keywords_low_level_first_then_high_level(musique_kg, services, musique_sub):
    llm = FakeLLM(
        {"high_level_keywords": ["Founder", " founder "], "low_level_keywords": ["Reagan"]}
    )
    r = _prepared(musique_kg, services, llm, llm_name="server", n_seeds=3, clusters=False)
    got = r.retrieve(musique_sub.questions[0], 10)
    assert "fallback" not in got.trace
    assert got.trace["keywords"] == {"high_level": ["Founder", "founder"], "low_level": ["Reagan"]}
    levels = got.trace["levels"]
    assert [(lv["level"], lv["query"]) for lv in levels] == [
        ("low", "Reagan"),
        ("high", "Founder, founder"),
    ]
    assert all(len(lv["seeds"]) == 3 for lv in levels)
    units = list(dict.fromkeys(u[0] for lv in levels for u in lv["units"]))
    assert got.passage_ids[: min(10, len(units))] == units[:10]
    assert llm.requests[0][0] == qafd_keywords.SCHEMA_NAME
    for mode, want in (("local", ["low"]), ("global", ["high"])):
        r = _prepared(
            musique_kg, services, llm, llm_name="server", n_seeds=3, clusters=False, mode=mode
        )
        assert [
            lv["level"] for lv in r.retrieve(musique_sub.questions[0], 10).trace["levels"]
        ] == want


def test_a_reply_without_keywords_falls_back_to_phrases(musique_kg, services, musique_sub):
    llm = FakeLLM({"high_level_keywords": [], "low_level_keywords": ["  "]})
    r = _prepared(musique_kg, services, llm, llm_name="server", clusters=False)
    got = r.retrieve(musique_sub.questions[0], 5)
    assert [f["step"] for f in fallbacks(got.trace)] == [qafd_keywords.SCHEMA_NAME]
    assert got.trace["keywords"]["low_level"] == question_phrases(musique_sub.questions[0].text)


def test_no_entity_seed_falls_back_to_dense(musique_kg, services, musique_sub):
    r = _prepared(
        musique_kg, services, keywords=False, clusters=False, mode="global"
    )  # phrases are low-level
    got = r.retrieve(musique_sub.questions[0], 5)
    assert [f["step"] for f in fallbacks(got.trace)] == [DENSE] and got.trace["n_units"] == 0


def test_per_seed_clusters_in_the_trace_and_their_summaries(musique_kg, services, musique_sub):
    llm = FakeLLM({"high_level_keywords": ["Organisation"], "low_level_keywords": ["Reagan"]})
    r = _prepared(
        musique_kg, services, llm, llm_name="server", n_seeds=4, alpha=0.5, summary_batch=3
    )
    got = r.retrieve(musique_sub.questions[0], 5)
    for lv in got.trace["levels"]:
        assert [c["seed"] for c in lv["clusters"]] == [s for s, _ in lv["seeds"]]
        for c in lv["clusters"]:
            flows = [f for _, f in c["nodes"]]
            assert flows == sorted(flows, reverse=True) and c["nodes"][0][0] == c["seed"]
            assert c["kept"] == (len(flows) > 1 and max(flows) >= 0.1)
    kept = sum(c["kept"] for lv in got.trace["levels"] for c in lv["clusters"])
    notes = r.reader_context(musique_sub.questions[0], got, llm)
    assert len(notes) == kept and got.trace["cluster_summaries"] == notes
    assert len([q for q in llm.requests if q[0] == "chat"]) == -(-kept // 3)
    assert notes[:3] == ["summary 1", "summary 2", "summary 3"][: min(3, kept)]
    llm.summaries = False  # replies name no cluster: the code's placeholder, counted
    notes = r.reader_context(musique_sub.questions[0], got, llm)
    assert (
        notes == [qafd_clusters.MISSING] * kept and got.trace["cluster_summaries_missing"] == kept
    )


def test_settings_are_checked():
    with pytest.raises(HopbenchError, match="mode"):
        FlowDiffusionRetriever(mode="both")
    with pytest.raises(HopbenchError, match="official_src"):
        FlowDiffusionRetriever(prompts="official", keywords=False)
    with pytest.raises(HopbenchError, match="needs an LLM"):
        FlowDiffusionRetriever(keywords=True)


def test_official_prompt_is_sent_from_the_checkout(tmp_path, musique_kg, services, musique_sub):
    (tmp_path / "src" / "prompts").mkdir(parents=True)
    (tmp_path / "src" / "prompts" / "prompts_qa.py").write_text(
        'P = {}\nP["keywords_extraction"] = "ROLE {examples} | Q={query} | L={language}"\n'
        'P["keywords_extraction_examples"] = ["EX1", "EX2 {{x}}"]\n'
    )
    llm = FakeLLM({"high_level_keywords": [], "low_level_keywords": ["Reagan"]})
    r = _prepared(
        musique_kg,
        services,
        llm,
        llm_name="server",
        prompts="official",
        official_src=str(tmp_path),
        clusters=False,
    )
    q = musique_sub.questions[0]
    r.retrieve(q, 5)
    assert llm.requests[0][1] == [
        {"role": "user", "content": f"ROLE EX1\nEX2 {{{{x}}}} | Q={q.text} | L=English"}
    ]
