"""kill -9 of a `hydra/launcher=local_parallel` multirun ends its job processes too (issue #28,
item 12): before, the joblib (loky) workers went on computing their jobs without a parent.
A real multirun, a real SIGKILL, a slow scripted LLM server on 127.0.0.1 to keep the jobs busy."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from tests.helpers.scripted_llm_server import ScriptedServer, reply

psutil = pytest.importorskip("psutil")


def _alive(pids) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.slow
def test_kill_9_of_a_parallel_multirun_ends_its_jobs(tmp_path, data_dir, cache_dir, child_env):
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher")

    def respond(body):
        time.sleep(3.0)  # each question takes 3 s: the jobs outlive the kill by far
        return reply(json.dumps({"reasoning": "r", "answer": "x"}))

    srv = ScriptedServer(respond=respond)
    cmd = [
        sys.executable,
        "-m",
        "hopbench.run",
        "-m",
        "hydra/launcher=local_parallel",
        f"paths.data_dir={data_dir}",
        f"paths.runs_dir={tmp_path / 'runs'}",
        f"paths.cache_dir={cache_dir}",
        "progress=false",
        "dataset=musique",
        "dataset.limit=12",
        "retriever=oracle",
        "reader=qa",
        "llm=server",
        f"llm.base_url={srv.base_url}",
        f"llm.model=lifetime-{uuid.uuid4().hex[:8]}",
        "top_k=3,5",
    ]
    workers: list[int] = []
    proc = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        env=child_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 900
        while len(srv.requests) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None and len(srv.requests) >= 2
        workers = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        assert workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(5)
        left = _alive(workers)
        asked = len(srv.requests)
        time.sleep(3)
        assert left == [], f"job processes still running after the multirun was killed: {left}"
        assert len(srv.requests) - asked <= 2  # nobody is asking the server any more
    finally:
        for pid in _alive(workers) + _alive([proc.pid]):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        srv.close()
