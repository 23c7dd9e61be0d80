"""A 4-job Hydra multirun on the joblib launcher (configs/hydra/launcher/local_parallel.yaml):
every run completes, the knowledge graph is built once for all of them, and the SQLite LLM
cache stays consistent with the requests the server saw."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from tests.helpers.scripted_llm_server import ScriptedServer, reply

# all four on hopbench's graph construction, so they share one graph (retriever=hipporag asks for
# graph.construction=hipporag2, a graph of its own: tests/kg/test_kg_hipporag2.py)
RETRIEVERS = ["spreading_activation", "hipporag_hb", "hipporag1", "flow_diffusion"]


def instance(schema: dict):
    """A minimal value matching a (simple) JSON schema: what a well-behaved server returns."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: instance(v) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema["items"])] * schema.get("minItems", 0) if "items" in schema else []
    if kind == "integer":
        return max(0, schema.get("minimum", 0))
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return False
    return "x"


def test_four_parallel_jobs_share_one_graph_build_and_one_cache(tmp_path, data_dir, child_env):
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")

    def respond(body):
        schema = body.get("response_format", {}).get("json_schema", {}).get("schema")
        return reply(json.dumps(instance(schema)) if schema else "a short summary")

    srv = ScriptedServer(respond=respond)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    cmd = [
        sys.executable,
        "-m",
        "hopbench.run",
        "-m",
        "hydra/launcher=local_parallel",
        f"paths.data_dir={data_dir}",
        f"runs_dir={runs}",
        f"paths.cache_dir={cache}",
        "progress=false",
        "dataset=musique_sub",
        f"retriever={','.join(RETRIEVERS)}",
        "reader=qa",
        "llm=server",
        f"llm.base_url={srv.base_url}",
        "llm.model=scripted",
        "hydra.job_logging.root.level=INFO",
    ]
    try:
        res = subprocess.run(
            cmd, cwd=tmp_path, env=child_env, capture_output=True, text=True, timeout=900
        )
    finally:
        srv.close()
    assert res.returncode == 0, res.stderr[-3000:]
    done = sorted(p.parent.parent.name for p in runs.glob("musique_sub/*/*/metrics.json"))
    assert done == sorted(RETRIEVERS)
    for m in runs.glob("musique_sub/*/*/metrics.json"):
        assert json.loads(m.read_text())["n_questions"] == 3
    logs = "".join(p.read_text() for p in (runs / ".hydra").glob("multirun_*/*/*.log"))
    assert logs.count("building knowledge graph") == 1, logs[-3000:]
    assert logs.count("knowledge graph") >= 4  # the other jobs loaded it
    assert len(list((cache / "kg" / "graphs").glob("*/manifest.json"))) == 1
    db = sqlite3.connect(cache / "llm" / "responses.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    distinct = {json.dumps(r, sort_keys=True) for r in srv.requests}
    assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == len(distinct)
