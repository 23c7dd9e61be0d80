"""`hopbench show RUN QUESTION_ID` on a hand-made run with a spreading-activation trace."""

import shutil

import pytest

from hopbench.cli import main
from hopbench.commands.show import main as cli
from hopbench.core.errors import HopbenchError
from hopbench.report.show import _Namer, find_run, render_value


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_show_prints_question_trace_retrieved_answer_scores(toy_runs, capsys):
    run = toy_runs / "musique_toy" / "spreading_activation" / "5a0000000001"
    assert cli([str(run), "q1", "--no-corpus"]) == 0
    out = _lines(capsys)
    expected = [
        f"run        {run}",
        "question   q1  (hops=2)",
        "  Where was the author of Book A born?",
        "gold answers  Paris",
        "gold passages (2):",
        "  pA  Book A",
        "  pB  Author of Book A",
        "trace:",
        "  seeds (top 2 of 2):",
        "    0.91  author of book a",
        "    0.42  paris",
        "  activations (top 4 of 4):",
        "        1  author of book a",
        "      0.5  paris",
        "     0.25  france",
        "    0.125  book a",
        "  paths (2):",
        "    book a -> author of book a -> paris  score=0.5",
        "    book a -> france  score=0.25",
        "  llm_calls (1):",
        "    1. purpose=ner prompt_tokens=250 completion_tokens=50",
        "  depth_reached: 2",
        "retrieved (5; 2/2 gold found):",
        "    1  HIT   pA    1.0000  Book A",
        "    2  HIT   pB    0.5000  Author of Book A",
        "    3  miss  x1    0.3333",
        "    4  miss  x2    0.2500",
        "    5  miss  x3    0.2000",
        "answer     'Paris'",
        "scores     recall@1=0.5 recall@2=1 recall@5=1 recall@10=1 fcr@2=1 fcr@5=1 fcr@10=1 mrr@10=1 "
        "ndcg@10=1 em=1 f1=1 contain_acc=1 jsr@5=1 jsr_contain@5=1",
        "latency    10.00 ms",
    ]
    assert out == expected


def test_show_by_hash_through_the_cli_and_top_limit(toy_runs, capsys, monkeypatch):
    monkeypatch.chdir(toy_runs.parent)  # runs/ is found relative to here
    assert main(["show", "5a00", "q4", "--top", "1", "--no-corpus"]) == 0
    out = _lines(capsys)
    assert "  activations (top 1 of 4):" in out and "      0.5  paris" not in out
    assert "    … 1 more" in out  # the second path is left out
    assert "    5  HIT   pJ    0.2000" in out and "retrieved (5; 3/3 gold found):" in out


def test_show_without_trace_and_with_a_miss(toy_runs, capsys):
    run = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    assert cli([str(run), "q2", "--no-corpus"]) == 0
    out = _lines(capsys)
    assert "  (empty: this retriever records no trace)" in out
    assert "retrieved (5; 1/2 gold found):" in out and "    1  miss  x1    1.0000" in out
    assert "answer     '1991'" in out and any(
        line.startswith("scores     recall@1=0 ") for line in out
    )


def test_show_errors_name_what_is_missing(toy_runs, capsys):
    run = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    assert cli([str(run), "nope", "--no-corpus"]) == 2
    err = capsys.readouterr().err
    assert "no question with id 'nope'" in err and "6 questions" in err and "q1" in err
    assert cli(["ffffff", "q1", "--runs-dir", str(toy_runs)]) == 2
    assert "no run 'ffffff'" in capsys.readouterr().err


def test_generic_shapes_of_trace_values():
    name = _Namer({"p1": "Title One"}, {"p1"})
    # a PPR mass as (name, value) pairs -> a ranking; ids get titles and a gold mark
    lines = render_value("ppr_mass", [["p2", 0.1], ["p1", 0.7]], name, top=5)
    assert lines == ["  ppr_mass (top 2 of 2):", "    0.7  p1 (Title One) [gold]", "    0.1  p2"]
    # flow on edges as records with a name and one number -> a ranking
    lines = render_value(
        "flow", [{"node": "a", "flow": 0.2}, {"node": "b", "flow": 0.9}], name, top=5
    )
    assert lines[1:] == ["    0.9  b", "    0.2  a"]
    # paths as plain lists
    assert render_value("paths", [["a", "p1"]], name, top=5)[1] == "    a -> p1 (Title One) [gold]"
    # nested dict of mixed values, and a plain list
    lines = render_value("stats", {"iterations": 7, "seeds": ["x", "y"]}, name, top=5)
    assert lines == ["  stats:", "    seeds (2): x, y", "    iterations: 7"]


def test_titles_come_from_the_corpus_named_in_config(data_dir, tmp_path, capsys):
    """A run on real MuSiQue files: show resolves gold and retrieved titles from the corpus."""
    import json

    import yaml

    from hopbench.data import load_dataset

    q_path, c_path = (
        data_dir / "musique" / "musique_train.json",
        data_dir / "musique" / "musique_train_corpus.json",
    )
    ds = load_dataset("musique", "musique", str(q_path), str(c_path), limit=1)
    q = ds.questions[0]
    other = next(p for p in ds.corpus if p.id not in q.gold_passage_ids)
    run = tmp_path / "runs" / "musique" / "dense" / "abc"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "dataset": {
                    "name": "musique",
                    "format": "musique",
                    "questions_path": str(q_path),
                    "corpus_path": str(c_path),
                    "limit": 1,
                }
            }
        )
    )
    row = {
        "id": q.id,
        "question": q.text,
        "gold_answers": q.answers,
        "gold_passage_ids": q.gold_passage_ids,
        "kind": "qa",
        "meta": q.meta,
        "ranked_passage_ids": [other.id, q.gold_passage_ids[0]],
        "scores": [0.9, 0.8],
        "answer": None,
        "metrics": {},
        "latency_ms": 1.0,
        "trace": {},
    }
    (run / "predictions.jsonl").write_text(json.dumps(row) + "\n")
    assert cli([str(run), q.id]) == 0
    out = capsys.readouterr().out.splitlines()
    gold0 = ds.passage(q.gold_passage_ids[0])
    assert f"  {gold0.id}  {gold0.title}" in out
    assert f"    1  miss  {other.id}    0.9000  {other.title}" in out
    assert f"    2  HIT   {gold0.id}    0.8000  {gold0.title}" in out
    assert "answer     (no reader)" in out and "scores     (none apply)" in out


def test_llm_call_records_keep_long_reasoning_on_its_own_line():
    name = _Namer({}, set())
    calls = [
        {
            "schema": "qa_answer",
            "attempt": 0,
            "prompt_tokens": 1061,
            "reasoning": "The journal is published by the APA, whose first president was G. Stanley Hall.",
        }
    ]
    assert render_value("calls", calls, name, top=5) == [
        "  calls (1):",
        "    1. schema=qa_answer attempt=0 prompt_tokens=1061",
        "       reasoning: The journal is published by the APA, whose first president was G. Stanley Hall.",
    ]


def test_show_prints_the_fallbacks_of_retrieval_and_reader_above_the_trace(toy_runs, capsys):
    import json

    run = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    pred = run / "predictions.jsonl"
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    rows[0]["trace"] = {
        "fallback": [
            {
                "step": "fact_filter",
                "reason": "LLM answer for 'fact_filter' did "
                "not match its JSON schema after 3 attempt(s); no fact kept",
            },
            {"step": "dense_fallback", "reason": "no fact survived the filter"},
        ],
        "facts": [],
    }
    rows[0]["reader_trace"] = {
        "reader": "qa",
        "fallback": [{"step": "qa_answer", "reason": "never matched"}],
    }
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli([str(run), "q1", "--no-corpus"]) == 0
    out = _lines(capsys)
    i = out.index("fallback (3):")
    assert out[i + 1 : i + 5] == [
        "  retrieval  fact_filter: LLM answer for 'fact_filter' did not match its JSON schema after 3 "
        "attempt(s); no fact kept",
        "  retrieval  dense_fallback: no fact survived the filter",
        "  reader     qa_answer: never matched",
        "trace:",
    ]
    assert not any(
        line.lstrip().startswith("fallback (") for line in out[i + 1 :]
    )  # not again in the traces
    assert cli([str(run), "q2", "--no-corpus"]) == 0
    assert not any(line.startswith("fallback") for line in _lines(capsys))


def test_show_by_hash_takes_the_run_not_its_backup_copy(toy_runs):
    """`<hash>.bak` is a copy of the run, not a second match of its hash (as the report)."""
    run = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    shutil.copytree(run, run.with_name("d0000000000a.bak"))
    assert find_run("d0000000000a", toy_runs) == run
    assert find_run("d00000", toy_runs) == run


def test_show_by_hash_does_not_follow_a_link_out_of_the_runs_folder(toy_runs, tmp_path):
    """A run folder that is a link to elsewhere is not a run of this runs folder (as the report)."""
    run = toy_runs / "musique_toy" / "dense" / "d0000000000a"
    outside = tmp_path / "elsewhere" / "d0000000000a"
    outside.parent.mkdir()
    shutil.move(str(run), outside)
    run.symlink_to(outside, target_is_directory=True)
    with pytest.raises(HopbenchError, match="no run 'd0000000000a'"):
        find_run("d0000000000a", toy_runs)
