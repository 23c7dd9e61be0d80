"""NeuroPath's hop limit in the reference handling (issue #55): a hop-2 reply that says
`continue: 1` must still end the loop at the default max_hop (2, the authors' script default),
so the limit binds. The fixtures' hop-2 replies all say `continue: 0`, where it never does."""

from __future__ import annotations

from tests.retrieve.neuropath.test_neuropath_reference import NER, Q, _prepared, _reply


def test_a_continuing_hop2_reply_stops_at_the_default_two_hops(
    musique_kg, services, musique_sub, scripted_llm
):
    q = musique_sub.questions[Q]
    spare = _reply(valid=[0], chain="never", req="never")
    llm = scripted_llm(
        NER,
        _reply(valid=[0], expand=[0], cont=1, chain="c1", req="r1"),
        _reply(valid=[0], expand=[-1], cont=1, chain="c2", req="r2"),
        spare,  # a third tracker call would take it
    )
    r = _prepared(musique_kg, services, llm)  # max_hop: the class default
    assert r.max_hop == 2
    res = r.retrieve(q, 10)
    assert len(res.trace["hops"]) == 2
    assert res.trace["hop_stats"]["tracker_calls"] == 2
    assert len(llm.prompts) == 3  # NER + two tracker calls
    assert llm.replies == [spare]
    assert res.trace["hops"][-1]["new_after_pruning"] > 0  # a third hop would have paths to grow
