"""Collect complete runs into results tables with uncertainty; figures; traces.

runs.py         read run folders (metrics.json marks a run complete; per-question scores from
                predictions.jsonl)
stats.py        percentile bootstrap CIs, paired bootstrap and exact McNemar p-values
leaderboard.py  one row per dataset x method x config, CIs, paired tests against a baseline
breakdown.py    the same per hop count / question type
markdown.py     readable markdown views (value ±half-width, p-values)
plots.py        recall@k curves, quality vs latency, depth/decay sensitivity (PNG)
published.py    the papers' numbers (published.csv) next to ours
collect.py      `hopbench report`
show.py         `hopbench show RUN QUESTION_ID`
"""
