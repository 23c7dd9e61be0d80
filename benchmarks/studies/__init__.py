"""Studies: paired comparisons of runs, rules and graphs (README.md)."""
