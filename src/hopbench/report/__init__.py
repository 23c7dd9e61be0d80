"""Collect complete runs into results tables with uncertainty; figures; traces.

run_reader.py   read run folders (which folders are runs: hopbench.core.run_folders;
                metrics.json marks a run complete and records the method's graph, family and
                settings that differ from its defaults; per-question scores from predictions.jsonl)
run_check.py    a run's rows against its metrics.json and recorded question set (else refused)
table_params.py the settings columns of a table: reading them, sorting rows by them
stats.py        percentile bootstrap CIs, paired bootstrap and exact McNemar p-values, Holm
leaderboard.py  one row per dataset x method x config, CIs, paired tests against a baseline
                (differences, Holm-corrected p-values), and the long (tidy) table
breakdown.py    the same per hop count / question type
markdown.py     readable markdown views (value ±half-width, signed differences, corrected p)
paper_tables.py per dataset, methods x headline metrics with intervals and the difference to dense
sweeps.py       which runs form a sweep of one parameter (sensitivity.csv and its figures)
plots.py        recall@k curves, quality vs latency, sensitivity of sweeps (PNG + PDF, one column)
published.py    the papers' numbers (published.csv) next to ours
collect.py      what `hopbench report` writes (its command line: hopbench/commands/report.py)
show.py         one question of a run as `hopbench show` prints it (hopbench/commands/show.py)
"""
