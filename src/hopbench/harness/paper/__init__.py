"""`hopbench paper`: the comparison grid of configs/paper.yaml, planned and run within a budget.
grid (the declaration to rows), plan (rows to runs, their order, the printed plan), costs (LLM
hours per run and the budget), reference (reference rows the grid does not make), execute (the
runs, one process each) and command (the command line, `hopbench paper`)."""
