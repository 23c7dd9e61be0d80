"""Child processes that Ctrl-C reaches. A shell that starts a job in the background (`make test &`,
`nohup ... &`) makes it ignore SIGINT, every child inherits that, and Python turns no ignored
SIGINT into KeyboardInterrupt: a Ctrl-C test then sees a child that runs to the end."""

from __future__ import annotations

import signal


def sigint_as_default() -> None:
    """`preexec_fn` of a subprocess: SIGINT back to its default disposition in the child."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
