"""benchmarks/robustness: what an interruption may not change (README.md)."""
