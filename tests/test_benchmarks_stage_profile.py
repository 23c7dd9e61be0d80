"""benchmarks/speed/stage_profile.py's clock: a call's time goes to its stage exclusive of the
stages it calls, the wrapped functions are put back, and no machine folder reaches the results."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from types import ModuleType

from benchmarks.speed.stage_profile import STAGES, StageClock, instrument, without_paths


def test_nested_stages_are_charged_exclusively():
    clock = StageClock()
    inner = clock.wrap("inner", lambda: time.sleep(0.05))

    def outer_body():
        time.sleep(0.03)
        inner()

    outer = clock.wrap("outer", outer_body)
    start = time.perf_counter()
    outer()
    wall = time.perf_counter() - start
    assert 0.05 <= clock.seconds["inner"] < 0.05 + 0.03
    assert 0.03 <= clock.seconds["outer"] < 0.03 + 0.05
    assert abs(clock.seconds["inner"] + clock.seconds["outer"] - wall) < 0.005
    assert clock.calls == {"inner": 1, "outer": 1}


def test_instrument_wraps_and_restores_and_names_what_it_did_not_find(monkeypatch):
    mod = ModuleType("stage_profile_probe")

    class Thing:
        def work(self):
            return 7

    mod.Thing, mod.helper = Thing, lambda: 3
    monkeypatch.setitem(sys.modules, "stage_profile_probe", mod)
    original_work, original_helper = Thing.__dict__["work"], mod.helper
    clock = StageClock()
    with ExitStack() as stack:
        missing = instrument(
            stack,
            clock,
            {
                "a": ["stage_profile_probe:Thing.work", "stage_profile_probe:helper"],
                "b": ["stage_profile_probe:absent"],
            },
        )
        assert Thing().work() == 7 and mod.helper() == 3
    assert missing == ["stage_profile_probe:absent"]
    assert clock.calls["a"] == 2
    assert Thing.__dict__["work"] is original_work and mod.helper is original_helper


def test_process_lines_lose_their_folders():
    line = "12.0 19 /usr/bin/python3 -m hopbench.run runs_dir=/tmp/x/runs --src /opt/a/B"
    assert without_paths(line) == "12.0 19 python3 -m hopbench.run runs_dir=runs --src B"


def test_every_cpu_retriever_of_the_issue_has_a_stage_map():
    wanted = {"dense", "bm25", "hybrid", "hipporag", "spreading_activation"}
    wanted |= {"flow_diffusion_code", "flow_diffusion_joint", "linearrag"}
    assert wanted <= set(STAGES)
