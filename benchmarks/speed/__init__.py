"""Speed measurements (README.md); `python -m benchmarks.speed` runs the suite."""
