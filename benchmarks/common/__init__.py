"""Plumbing the benchmark scripts share: paths, flags, the authors' virtual environments, their
workers, timing. Standard library only at import, so a worker in an authors' venv can use it."""
