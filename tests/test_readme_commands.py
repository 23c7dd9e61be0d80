"""Every command README.md shows is run here, cheaply but for real, so none of them can rot.

Commands are the lines of README's ```bash blocks (a trailing `# comment` dropped) and the inline
code spans that start like a command (`make ...`, `python -m ...`, `hopbench ...`). Each is
checked by what it is:

    make TARGET [VAR=...]                  `make -n TARGET [VAR=...]`: the target exists and expands
    python -m hopbench.run OVERRIDES       `... OVERRIDES --cfg job`: Hydra composes the config
    python -m hopbench.run --help          run as it is
    hopbench SUBCOMMAND ...                `hopbench SUBCOMMAND --help`: the subcommand parses
    hopbench OVERRIDES                     as python -m hopbench.run OVERRIDES
    python -m hopbench.harness.retriever_table   with --check: the committed table is current

Anything else fails the test, so a new command cannot enter README unchecked. Other fenced
blocks must say what they are: ```text for output (not run).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
FENCE = re.compile(r"^```([\w-]*)\s*\n(.*?)^```\s*$", re.M | re.S)
INLINE = re.compile(r"(?<!`)`((?:make|python -m|python3 -m|hopbench) [^`\n]*)`(?!`)")
TIMEOUT = 300


def readme_commands(text: str) -> list[str]:
    """The commands of a README text: bash block lines, then inline command spans (in order,
    each once). A fenced block that is neither bash nor text raises ValueError."""
    out: list[str] = []
    for lang, body in FENCE.findall(text):
        if lang == "text":
            continue
        if lang not in ("bash", "sh"):
            raise ValueError(f"README has a ```{lang or '(no language)'} block: use bash or text")
        for line in body.splitlines():
            cmd = _strip_comment(line).strip()
            if cmd:
                out.append(cmd)
    prose = FENCE.sub("", text)
    out += [m.strip() for m in INLINE.findall(prose)]
    return list(dict.fromkeys(out))


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (`#` between white space, to the line's end)."""
    return re.sub(r"\s+#(\s.*)?$", "", line)


def check_plan(cmd: str) -> list[str] | None:
    """The argv that checks `cmd`, or None when the test does not know how to check it."""
    argv = shlex.split(cmd)
    py = sys.executable
    if argv[0] == "make" and len(argv) >= 2:
        return ["make", "-n", *argv[1:]]
    if argv[:3] in (["python", "-m", "hopbench.run"], ["python3", "-m", "hopbench.run"]):
        rest = argv[3:]
        return [py, "-m", "hopbench.run", *rest] + ([] if "--help" in rest else ["--cfg", "job"])
    if argv[:3] in (
        ["python", "-m", "hopbench.harness.retriever_table"],
        ["python3", "-m", "hopbench.harness.retriever_table"],
    ):
        return [py, "-m", "hopbench.harness.retriever_table", "--check"]
    if argv[0] == "hopbench":
        from hopbench.cli import SUBCOMMANDS

        rest = argv[1:]
        if rest and rest[0] in SUBCOMMANDS:
            return [py, "-m", "hopbench.cli", rest[0], "--help"]
        if rest and all("=" in a or a == "--help" for a in rest):
            return [py, "-m", "hopbench.cli", *rest] + (
                [] if "--help" in rest else ["--cfg", "job"]
            )
    return None


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def test_readme_shows_commands_and_stays_a_guide():
    assert "make run-experiment" in COMMANDS and "make install" in COMMANDS
    assert len(README.read_text(encoding="utf-8").splitlines()) < 250, (
        "README.md is the front door: move reference material into docs/"
    )


@pytest.mark.parametrize("cmd", COMMANDS)
def test_readme_command_runs(cmd):
    argv = check_plan(cmd)
    assert argv is not None, (
        f"README command {cmd!r}: tests/test_readme_commands.py does not know how to check it; "
        "teach check_plan() or drop the command"
    )
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{cmd!r} -> {argv}: exit {done.returncode}\n{done.stderr[-2000:]}"
    if "--cfg" in argv:
        assert "retriever:" in done.stdout and "dataset:" in done.stdout, done.stdout[-500:]


def test_an_unknown_command_is_refused():
    """What the test cannot check fails it, whether in a bash block or inline."""
    text = "```bash\nmake test\ncurl https://example.org | sh   # fetch\n```\nthen `hopbench frobnicate x`\n"
    cmds = readme_commands(text)
    assert cmds == ["make test", "curl https://example.org | sh", "hopbench frobnicate x"]
    assert check_plan("make test") == ["make", "-n", "test"]
    assert check_plan(cmds[1]) is None
    assert check_plan(cmds[2]) is None
    with pytest.raises(ValueError, match="use bash or text"):
        readme_commands("```\nmake test\n```\n")


def test_a_broken_command_fails_its_check():
    """The checks run something real: a make target or a config option that is not there fails."""
    for cmd in ("make no-such-target", "python -m hopbench.run retriever=no_such_retriever"):
        done = subprocess.run(
            check_plan(cmd), cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT
        )
        assert done.returncode != 0, cmd
