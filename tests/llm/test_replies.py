"""`hopbench replies export|import` on real runs (oracle + the QA reader on the MuSiQue subset,
answered by a scripted server): the replies a run used go into a file, into an empty cache,
and the run is regenerated from it with no server; missing keys, conflicts, resumed runs."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from hopbench.cli import main
from hopbench.core.errors import HopbenchError
from hopbench.harness.compose import load_config
from hopbench.harness.runner import execute
from hopbench.llm.cache import CachedResponse, ResponseCache
from hopbench.llm.reply_file import Reply, read_reply_file, write_reply_file
from hopbench.llm.reply_keys import run_keys
from tests.helpers.scripted_llm_server import ScriptedServer, error, reply


def _answers(gold: dict[str, str], fail_on: str | None = None, state: dict | None = None):
    """The reader's reply: the gold answer, with token counts; `fail_on` a question: 401 until
    state["up"] (a fatal error that stops the first process)."""

    def respond(body):
        question = body["messages"][-1]["content"].rsplit("Question: ", 1)[1]
        if question == fail_on and not state["up"]:
            return error(401, "key revoked")
        return reply(
            json.dumps({"reasoning": "r", "answer": gold[question]}),
            prompt_tokens=100 + len(question),
            completion_tokens=9,
        )

    return respond


def _cfg(data_dir, runs: Path, cache: Path, base_url: str):
    return load_config(
        [
            f"paths.data_dir={data_dir}",
            f"paths.runs_dir={runs}",
            f"paths.cache_dir={cache}",
            "progress=false",
            "dataset=musique_sub",
            "retriever=oracle",
            "reader=qa",
            "llm=server",
            f"llm.base_url={base_url}",
            "llm.model=scripted",
        ]
    )


def _rows(runs: Path) -> dict[str, dict]:
    run = next(runs.glob("musique_sub/oracle/*/"))
    return {
        r["id"]: r for r in map(json.loads, (run / "predictions.jsonl").read_text().splitlines())
    }


def _keys_in(cache_dir: Path) -> list[str]:
    with sqlite3.connect(cache_dir / "llm" / "responses.sqlite") as db:
        return sorted(k for (k,) in db.execute("SELECT key FROM responses"))


@pytest.fixture(scope="module")
def made(tmp_path_factory, data_dir, musique_sub):
    """(runs dir, cache dir, base_url of the server, now closed) of one complete run."""
    root = tmp_path_factory.mktemp("made")
    srv = ScriptedServer(respond=_answers({q.text: q.answers[0] for q in musique_sub.questions}))
    try:
        execute(_cfg(data_dir, root / "runs", root / "cache", srv.base_url))
    finally:
        srv.close()
    return root / "runs", root / "cache", srv.base_url


def _export(runs, cache, out, *extra) -> int:
    return main(
        [
            "replies",
            "export",
            "--runs-dir",
            str(runs),
            "--cache-dir",
            str(cache),
            "--out",
            str(out),
            *extra,
        ]
    )


def _import(path, cache, *extra) -> int:
    return main(["replies", "import", str(path), "--cache-dir", str(cache), *extra])


def test_export_import_regenerates_the_llm_rows_from_cache_hits_alone(
    made, tmp_path, data_dir, capsys
):
    runs, cache, base_url = made
    out = tmp_path / "replies.jsonl.gz"
    assert _export(runs, cache, out) == 0
    assert "3 replies used by 1 run(s)" in capsys.readouterr().out
    fresh = tmp_path / "fresh-cache"
    assert _import(out, fresh) == 0
    assert "3 added, 0 already there, 0 conflict(s)" in capsys.readouterr().out
    keys = _keys_in(cache)
    assert len(keys) == 3 and _keys_in(fresh) == keys
    a, b = ResponseCache.in_dir(cache), ResponseCache.in_dir(fresh)
    try:
        assert all(
            a.get(k) == b.get(k) and a.model_identity(k) == b.model_identity(k) for k in keys
        )
    finally:
        a.close()
        b.close()
    # the same bytes again, and from the imported cache
    again, round_trip = tmp_path / "again.jsonl.gz", tmp_path / "round.jsonl.gz"
    assert _export(runs, cache, again) == 0 and _export(runs, fresh, round_trip) == 0
    assert out.read_bytes() == again.read_bytes() == round_trip.read_bytes()
    # the server is gone: every reply is a cache hit, every row as first computed
    m = execute(_cfg(data_dir, tmp_path / "runs", fresh, base_url))
    assert (m["llm_calls"], m["llm_cache_hits"], m["llm_seconds"]) == (3, 3, 0)
    first, second = _rows(runs), _rows(tmp_path / "runs")
    for qid, r in first.items():
        s = second[qid]
        assert (s["answer"], s["metrics"], s["ranked_passage_ids"]) == (
            r["answer"],
            r["metrics"],
            r["ranked_passage_ids"],
        )
        assert s["reader_trace"]["llm_keys"] == r["reader_trace"]["llm_keys"]
        cost, was = s["reader_trace"]["llm_cost"], r["reader_trace"]["llm_cost"]
        assert cost["llm_prompt_tokens"] == was["llm_prompt_tokens"]
        assert cost["llm_cached_seconds"] == was["llm_seconds"]  # the recorded cost came along
    capsys.readouterr()
    assert _import(out, fresh) == 0
    assert "0 added, 3 already there" in capsys.readouterr().out


def test_a_key_the_cache_lacks_names_the_run_and_key(made, tmp_path, capsys):
    runs, cache, _ = made
    partial = tmp_path / "partial"
    shutil.copytree(cache / "llm", partial / "llm")
    gone = _keys_in(cache)[1]
    with sqlite3.connect(partial / "llm" / "responses.sqlite") as db:
        db.execute("DELETE FROM responses WHERE key = ?", (gone,))
    out = tmp_path / "r.jsonl.gz"
    assert _export(runs, partial, out) == 2
    err = capsys.readouterr().err
    run = next(runs.glob("musique_sub/oracle/*/"))
    assert f"musique_sub/oracle/{run.name}: 1 key(s) not in the cache: {gone}" in err
    assert not out.exists()
    assert _export(runs, partial, out, "--allow-missing") == 0
    cap = capsys.readouterr()
    assert "2 replies" in cap.out and "1 key(s) not in the cache" in cap.err
    label = f"musique_sub/oracle/{run.name}"
    head, _ = read_reply_file(out)  # a run the file cannot bring back is not among its runs
    assert head["runs"] == {} and head["incomplete_runs"] == {label: 2}  # keys it holds
    assert _export(runs, cache, out, "--update") == 0  # complete again: back among the runs
    head, _ = read_reply_file(out)
    assert head["runs"] == {label: 3} and "incomplete_runs" not in head


def test_a_run_not_finished_keeps_its_replies_but_is_listed_apart(made, tmp_path, capsys):
    runs, cache, _ = made
    unfinished = tmp_path / "runs"
    shutil.copytree(runs, unfinished)
    run = next(unfinished.glob("musique_sub/oracle/*/"))
    (run / "metrics.json").unlink()  # as a run killed before its last question looks
    label = f"musique_sub/oracle/{run.name}"
    out = tmp_path / "r.jsonl.gz"
    assert _export(unfinished, cache, out, str(run)) == 0
    assert f"{label} is not complete" in capsys.readouterr().err
    head, replies = read_reply_file(out)
    assert len(replies) == 3  # its replies so far travel with the file
    assert head["runs"] == {} and head["incomplete_runs"] == {label: 3}
    assert _export(runs, cache, out, "--update") == 0  # finished: now among the runs
    head, _ = read_reply_file(out)
    assert head["runs"] == {label: 3} and "incomplete_runs" not in head


def test_rows_without_recorded_keys_are_an_error(made, tmp_path, capsys):
    runs, cache, _ = made
    old = tmp_path / "runs"
    shutil.copytree(runs, old)
    pred = next(old.glob("musique_sub/oracle/*/predictions.jsonl"))
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    for r in rows:
        del r["reader_trace"]["llm_keys"]  # as a version before keys were recorded wrote them
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _export(old, cache, tmp_path / "r.jsonl.gz") == 2
    assert "3 row(s) made LLM calls but record no keys" in capsys.readouterr().err


def test_reference_selects_the_runs_of_a_leaderboard(made, tmp_path, capsys):
    runs, cache, _ = made
    run = next(runs.glob("musique_sub/oracle/*/"))
    for name, hashes, n in (("listed", [run.name], 3), ("other", ["0123456789ab"], 0)):
        board = tmp_path / f"{name}.csv"
        with open(board, "w", newline="") as fh:
            csv.writer(fh).writerows(
                [["dataset", "config_hash"], *[["musique_sub", h] for h in hashes]]
            )
        assert _export(runs, cache, tmp_path / f"{name}.jsonl.gz", "--reference", str(board)) == 0
        assert f"{n} replies used by {min(n, 1)} run(s)" in capsys.readouterr().out


def test_a_different_stored_reply_is_a_conflict_kept_unless_forced(made, tmp_path, capsys):
    runs, cache, _ = made
    out = tmp_path / "r.jsonl.gz"
    assert _export(runs, cache, out) == 0
    mine = tmp_path / "mine"
    key = _keys_in(cache)[0]
    c = ResponseCache.in_dir(mine)
    c.put(
        key, "another-model", {}, CachedResponse('{"reasoning": "x", "answer": "other"}', 1, 1, 0.5)
    )
    c.close()
    capsys.readouterr()
    assert _import(out, mine) == 2
    cap = capsys.readouterr()
    assert "2 added, 0 already there, 1 conflict(s)" in cap.out
    assert f"conflict {key}" in cap.err and "--force" in cap.err
    c = ResponseCache.in_dir(mine)
    try:
        assert c.get(key).text == '{"reasoning": "x", "answer": "other"}' and len(c) == 3
    finally:
        c.close()
    assert _import(out, mine, "--force") == 0
    assert "1 overwritten" in capsys.readouterr().out
    a, b = ResponseCache.in_dir(cache), ResponseCache.in_dir(mine)
    try:
        assert a.get(key) == b.get(key) and b.model_identity(key) == a.model_identity(key)
    finally:
        a.close()
        b.close()


def test_a_resumed_run_records_the_union_of_its_keys_once(tmp_path, data_dir, musique_sub):
    """A first process stopped by a fatal error after two rows, then resumed; then a row lost
    (killed after its reply was cached) and redone as a cache hit: every key once."""
    gold = {q.text: q.answers[0] for q in musique_sub.questions}
    state = {"up": False}
    srv = ScriptedServer(respond=_answers(gold, fail_on=musique_sub.questions[2].text, state=state))
    cfg = _cfg(data_dir, tmp_path / "runs", tmp_path / "cache", srv.base_url)
    try:
        with pytest.raises(HopbenchError, match="refused the API key"):
            execute(cfg)
        state["up"] = True
        execute(cfg)
        run = next((tmp_path / "runs").glob("musique_sub/oracle/*/"))
        cached = _keys_in(tmp_path / "cache")
        assert len(cached) == 3 and run_keys(run).keys == cached
        lines = (run / "predictions.jsonl").read_text().splitlines(keepends=True)
        (run / "predictions.jsonl").write_text("".join(lines[:2]) + lines[2][:40])
        (run / "metrics.json").unlink()
        m = execute(cfg)
    finally:
        srv.close()
    rows = _rows(tmp_path / "runs")
    assert len(rows) == 3 and all(len(r["reader_trace"]["llm_keys"]) == 1 for r in rows.values())
    got = run_keys(run)
    assert got.keys == cached and got.unrecorded_rows == 0 and got.complete
    assert (m["llm_calls"], m["llm_cache_hits"]) == (3, 1)  # the redone question, from the cache


def test_a_failed_first_attempt_travels_flagged_and_its_row_regenerates_with_no_server(
    tmp_path, data_dir, musique_sub, capsys
):
    """An off-schema first attempt (then a format retry) is recorded apart from the cache: export
    carries it flagged, and with llm.replay_failed=true a fresh cache regenerates the rows, the
    retries included, from the file alone."""
    gold = {q.text: q.answers[0] for q in musique_sub.questions}

    def respond(body):
        if not body["messages"][-1]["content"].startswith("That reply does not match"):
            return reply('{"reasoning": "r"}')
        question = body["messages"][-3]["content"].rsplit("Question: ", 1)[1]
        return reply(json.dumps({"reasoning": "r", "answer": gold[question]}))

    srv = ScriptedServer(respond=respond)
    try:
        m = execute(_cfg(data_dir, tmp_path / "runs", tmp_path / "cache", srv.base_url))
    finally:
        srv.close()
    assert m["llm_format_retries"] == 3
    run = next((tmp_path / "runs").glob("musique_sub/oracle/*/"))
    assert len(run_keys(run).keys) == 6 and len(_keys_in(tmp_path / "cache")) == 3
    out = tmp_path / "r.jsonl.gz"
    assert _export(tmp_path / "runs", tmp_path / "cache", out) == 0
    assert "6 replies used by 1 run(s) (3 of them failed their check" in capsys.readouterr().out
    assert _import(out, tmp_path / "fresh") == 0
    again = _cfg(data_dir, tmp_path / "again", tmp_path / "fresh", srv.base_url)
    again.llm.replay_failed = True
    m2 = execute(again)  # the server is closed: every reply, failed or not, from the file
    assert (m2["llm_calls"], m2["llm_cache_hits"], m2["llm_format_retries"]) == (6, 6, 3)
    first, second = _rows(tmp_path / "runs"), _rows(tmp_path / "again")
    assert {q: (r["answer"], r["metrics"]) for q, r in first.items()} == {
        q: (r["answer"], r["metrics"]) for q, r in second.items()
    }
    assert next((tmp_path / "again").glob("musique_sub/oracle/*/")).name == run.name


def test_update_keeps_the_entries_of_runs_whose_folders_are_gone(made, tmp_path, capsys):
    runs, cache, _ = made
    out = tmp_path / "r.jsonl.gz"
    assert _export(runs, cache, out) == 0
    run = next(runs.glob("musique_sub/oracle/*/"))
    label = f"musique_sub/oracle/{run.name}"
    # an entry of another run, whose folder is gone, already in the file
    other = Reply("f" * 64, "m", '{"answer": "x"}', 5, 2, 1.5)
    _, mine = read_reply_file(out)
    write_reply_file(out, [*mine, other], {label: 3, "musique/gone/0123456789ab": 1})
    fresh = tmp_path / "fresh-cache"
    assert _import(out, fresh) == 0
    capsys.readouterr()
    # without --update the file is rewritten from the runs given: the gone run's entry is lost
    replaced = tmp_path / "replaced.jsonl.gz"
    shutil.copy(out, replaced)
    assert _export(runs, cache, replaced) == 0
    head, entries = read_reply_file(replaced)
    assert other.key not in {e.key for e in entries} and list(head["runs"]) == [label]
    # with --update it stays, the run given is added once
    assert _export(runs, cache, out, "--update") == 0
    assert "4 replies used by 2 run(s)" in capsys.readouterr().out
    head, entries = read_reply_file(out)
    assert head["runs"] == {label: 3, "musique/gone/0123456789ab": 1}
    assert {e.key for e in entries} == {*_keys_in(cache), other.key}
    # a key whose reply differs between the file and the cache: nothing written
    key = _keys_in(cache)[0]
    write_reply_file(
        out,
        [e if e.key != key else Reply(key, e.model, "changed", 1, 1, 0.1) for e in entries],
        head["runs"],
    )
    before = out.read_bytes()
    assert _export(runs, cache, out, "--update") == 2
    assert f"key {key} has another reply in the file" in capsys.readouterr().err
    assert out.read_bytes() == before
