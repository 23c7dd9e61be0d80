"""hopbench's benchmarks: parity with the authors' code, speed, studies, robustness (README.md).

A package so that every script runs as `python -m benchmarks.<room>.<script>` from the
repository root and shares `benchmarks.common` without editing sys.path.
"""
