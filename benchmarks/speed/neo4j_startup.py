"""How long the Neo4j launcher takes to become ready and to stop, on a fresh and a reused store.

    python -m benchmarks.speed.neo4j_startup [--repeats 2] [--port 17699]

Wall time depends on how busy the machine is, so the script also reports the launcher's own CPU
seconds up to "ready" (from /proc, Linux only) and the load average at the start: CPU seconds
divided by wall seconds shows how much of the wait was the JVM working rather than queueing.
Needs neo4j/target/hopbench-neo4j.jar (make neo4j-build).
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from benchmarks.common.paths import REPO

JAR = REPO / "neo4j" / "target" / "hopbench-neo4j.jar"


def cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a process, its children included (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def start_and_stop(data_dir: Path, port: int, java_opts: list[str], extra: list[str]) -> dict:
    log_path = data_dir.parent / f"launcher-{port}.log"
    password = data_dir.parent / "password"
    if not password.exists():  # auth is always on; the first start sets it with Bolt off
        password.write_text(secrets.token_urlsafe(24) + "\n")
        password.chmod(0o600)
    extra = ["--password-file", str(password), *extra]
    with log_path.open("w") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [
                "java",
                "-Xms256m",
                "-Xmx1g",
                *java_opts,
                "-jar",
                str(JAR),
                "--data-dir",
                str(data_dir),
                "--port",
                str(port),
                "--page-cache",
                "256m",
                *extra,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while "hopbench-neo4j ready" not in log_path.read_text():
                if proc.poll() is not None or time.perf_counter() - t0 > 300:
                    raise SystemExit(f"launcher failed:\n{log_path.read_text()}")
                time.sleep(0.1)
            ready_s = time.perf_counter() - t0
            cpu_s = cpu_seconds(proc.pid)
        finally:
            t1 = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
            stop_s = time.perf_counter() - t1
    line = next(
        x for x in log_path.read_text().splitlines() if x.startswith("hopbench-neo4j ready")
    )
    startup_ms = int(line.rsplit("startup_ms=", 1)[1])
    return {
        "ready_s": ready_s,
        "jvm_startup_s": startup_ms / 1000,
        "cpu_s": cpu_s,
        "stop_s": stop_s,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2, help="starts on the reused store")
    ap.add_argument("--port", type=int, default=17699)
    ap.add_argument("--java-opts", default="", help="extra JVM options to try, space-separated")
    ap.add_argument(
        "--setting",
        action="append",
        default=[],
        help="extra launcher --setting name=value to try (repeatable)",
    )
    args = ap.parse_args()
    if not JAR.exists():
        raise SystemExit(f"{JAR} is missing: run `make neo4j-build`")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="neo4j-startup-") as tmp:
        data = Path(tmp) / "home"
        opts = args.java_opts.split()
        extra = [a for kv in args.setting for a in ("--setting", kv)]
        runs = [("fresh store", start_and_stop(data, args.port, opts, extra))]
        runs += [
            (f"reused store #{i + 1}", start_and_stop(data, args.port, opts, extra))
            for i in range(args.repeats)
        ]
    print(
        f"{'run':<18} {'ready (s)':>9} {'in JVM (s)':>10} {'CPU (s)':>8} {'CPU/wall':>8} {'stop (s)':>8}"
    )
    for name, r in runs:
        print(
            f"{name:<18} {r['ready_s']:>9.1f} {r['jvm_startup_s']:>10.1f} {r['cpu_s']:>8.1f} "
            f"{r['cpu_s'] / r['ready_s']:>8.2f} {r['stop_s']:>8.1f}"
        )


if __name__ == "__main__":
    main()
