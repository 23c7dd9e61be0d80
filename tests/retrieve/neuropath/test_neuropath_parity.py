"""hopbench's NeuroPath against the authors' code, without their code: a committed sample of the
top-10 lists their `NeuroPath.rank_docs` produced on hopbench's spaCy MuSiQue graph and vectors,
fed the local model's recorded replies (benchmarks/parity/neuropath/compare.py writes it).
Replaying the same replies here must give the same lists."""

from __future__ import annotations

import json
from pathlib import Path

from hopbench.llm.replay import ReplayLLM
from hopbench.retrieve.base import Services
from hopbench.retrieve.neuropath.neuropath import NeuroPathRetriever

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "neuropath_official_top10.json"


def test_the_fixture_is_a_real_sample():
    data = json.loads(FIXTURE.read_text())
    assert len(data["questions"]) >= 5
    assert all(
        len(q["official_top10"]) == 10 and q["status"] == "identical" for q in data["questions"]
    )


def test_replayed_replies_give_the_authors_top10(musique_dataset, musique_graph, encoder):
    data = json.loads(FIXTURE.read_text())
    llm = ReplayLLM()
    services = Services(dataset=musique_dataset, encoder=encoder, llm=llm)
    r = NeuroPathRetriever(llm_name="replay", **data["settings"])
    r.prepare(musique_graph, services)
    by_id = {q.id: q for q in musique_dataset.questions}
    for q in data["questions"]:
        llm.load(q["replies"])
        assert r.retrieve(by_id[q["id"]], 10).passage_ids == q["official_top10"], q["id"]
