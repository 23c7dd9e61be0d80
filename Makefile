# hopbench: `make install`, `make test`, `make run-experiment`. `make help` lists the rest.
PYTHON   ?= python3
DATA_DIR ?= ../shared/datasets
SWEEP    ?= dataset=musique,hotpotqa,2wikimultihopqa retriever=dense
RUN       = $(PYTHON) -m hopbench.run paths.data_dir=$(DATA_DIR)

.PHONY: help install test test-fast run-experiment sweep report lint bench

help:            ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

install:         ## install hopbench and everything it needs (PyPI only)
	$(PYTHON) -m pip install --upgrade-strategy only-if-needed -e ".[dev]"

test:            ## the whole test suite (real data, real models)
	$(PYTHON) -m pytest

test-fast:       ## skip the slow, LLM and Neo4j tests
	$(PYTHON) -m pytest -m "not slow and not llm and not neo4j"

run-experiment:  ## the default experiment (dense on the MuSiQue subset), then the results table
	$(RUN) experiment=default
	$(PYTHON) -m hopbench.cli report

sweep:           ## Hydra multirun over $(SWEEP)
	$(RUN) -m $(SWEEP)
	$(PYTHON) -m hopbench.cli report

report:          ## collect every complete run into results/leaderboard.{parquet,csv,md}
	$(PYTHON) -m hopbench.cli report

bench:           ## speed measurements (benchmarks/, not tests)
	$(PYTHON) benchmarks/bench_dense.py --data-dir $(DATA_DIR)

lint:            ## ruff
	$(PYTHON) -m ruff check src tests benchmarks
