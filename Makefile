# Tidelog's developer commands.  Needs only Python >= 3.11, make and git.
#
#   make run      start tidelog-server on 127.0.0.1:6379, data in ./data (foreground;
#                 PORT=, DATA=, HOST= change those, ARGS="--appendonly yes" adds options)
#   make run-cluster  one tidelog-server per usable core as one Redis Cluster on
#                 ports PORT, PORT+1, ... (bus ports +10000), data in DATA/<port>/
#                 (NODES= how many, REPLICAS= replicas per master; HOST, ARGS as run)
#   make test     ruff, the type checker (mypy), then the whole test suite (the
#                 layer contracts included; installs Debian's redis-server when root),
#                 and at the same time the integration and differential suites
#                 again on the pure-Python twins of the kernels (see below)
#   make bench    the benchmarks (bench/run.py)
#   make lint     ruff, mypy and the import-linter layer contracts only
#   make compat   Redis's own Tcl test suite (Debian's redis 7.0.15 source,
#                 fetched once into .compat/) against tidelog-server, one
#                 fresh server per unit; SERVER=redis runs it against
#                 redis-server, UNITS="unit/type/list ..." picks units,
#                 COMPAT_TIMEOUT= seconds per unit.  Not part of make test.
#   make clean    remove the virtualenv, caches and build products (never ./data)
#
# Every target first makes .venv (python3 -m venv) and installs the pinned
# packages of requirements.lock plus Tidelog itself (editable).  A stamp file
# remembers that, so re-runs skip it until requirements.lock, pyproject.toml
# or setup.py change.
#
# The install compiles the typed kernels (src/tidelog/kernels.py) with Cython
# when a C compiler works, in place beside their .py files, and installs the
# pure-Python twins when not (CC=false make venv simulates that); the line
# "tidelog kernels: ..." says which.  A second stamp depends on the kernels'
# sources, so editing one rebuilds them on the next make.  Even without make,
# a stale extension is never used: each records the SHA-256 of the .py it was
# built from (src/tidelog/kernels-built.json) and the pure twin runs, with a
# warning, when the .py differs.  TIDELOG_PURE=1 forces the pure twins.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.tidelog-installed
KSTAMP := $(VENV)/.tidelog-kernels
KERNEL_SOURCES := src/tidelog/ids.py src/tidelog/types/listpack.py \
                  src/tidelog/resp/parser.py src/tidelog/resp/encoder.py \
                  src/tidelog/callstats.py \
                  $(wildcard src/tidelog/*.pxd src/tidelog/*/*.pxd)

HOST ?= 127.0.0.1
PORT ?= 6379
DATA ?= ./data
ARGS ?=
# make run-cluster: the number of nodes (the cores this process may use) and
# of replicas per master.
NODES ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)')
REPLICAS ?= 0

# Extra arguments: make test PYTEST_ARGS="-k xadd -x", make bench BENCH_ARGS=...
PYTEST_ARGS ?=
BENCH_ARGS  ?=
# What make test runs a second time on the pure-Python twins (empty: nothing).
PURE_PATHS  ?= tests/integration tests/differential

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.DEFAULT_GOAL := help
.PHONY: help venv run run-cluster test test-long redis-server bench lint clean compat

help:
	@echo "make run    start tidelog-server on $(HOST):$(PORT), data in $(DATA)"
	@echo "make run-cluster  one node per core as one Redis Cluster from port $(PORT), data in $(DATA)/<port>/"
	@echo "make test   run the whole test suite (integration and differential on both twins)"
	@echo "make test-long  the long end-to-end runs (cluster resharding under load, failovers ...)"
	@echo "make bench  run the benchmarks"
	@echo "make lint   ruff, mypy and the layer contracts (import-linter)"
	@echo "make compat Redis's own test suite against tidelog-server (SERVER=redis: redis-server)"
	@echo "make clean  remove $(VENV), caches and build products"

venv: $(KSTAMP)

# An editable install leaves the sources uncompiled, and with
# PYTHONDONTWRITEBYTECODE set every start would compile all of them again
# (about 80 ms of tidelog-server's start-up).  So the sources' bytecode is
# written here, and again (only what changed) before run and bench.
BYTECODE = $(BIN)/python -m compileall -q src/tidelog

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { \
	  echo "error: Tidelog needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)." >&2; \
	  echo "       Run make with PYTHON=/path/to/python3.11 (or newer)." >&2; exit 1; }
	@echo "$(PYTHON) -m venv $(VENV)"
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu install the python3-venv package." >&2; \
	  exit 1; }

$(STAMP): requirements.lock pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install --no-deps -r requirements.lock
	@touch $@

# Tidelog itself, editable; again whenever a kernel source changed since
# (the reinstall runs setup.py's build_ext, which recompiles what changed
# and rewrites kernels-built.json).
$(KSTAMP): $(STAMP) $(KERNEL_SOURCES)
	$(BIN)/python -m pip install --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	$(BYTECODE)
	@$(BIN)/python -c 'import tidelog.kernels as k; print(k.describe())'
	@touch $@

run: $(KSTAMP)
	@$(BYTECODE)
	exec $(BIN)/tidelog-server --bind $(HOST) --port $(PORT) --dir $(DATA) $(ARGS)

# One node per core (NODES), ports PORT.., each node's data in DATA/<port>/;
# the launcher creates the cluster (or finds it in the nodes' nodes.conf),
# restarts nodes that exit, and stops them all on Ctrl-C.
run-cluster: $(KSTAMP)
	@$(BYTECODE)
	exec $(BIN)/tidelog-server --cluster-local $(NODES) --cluster-replicas $(REPLICAS) \
	    --bind $(HOST) --port $(PORT) --dir $(DATA) $(ARGS)

# Debian's redis-server is the reference for the differential tests, and its
# redis-tools (redis-cli, redis-benchmark) are driven by the CLI tests.
redis-server:
	@bash scripts/ensure-redis-server.sh

# ruff first (seconds), then mypy ([tool.mypy] in pyproject.toml says what
# and how strictly; its cache, .mypy_cache, makes a re-run take seconds);
# the layer contracts run inside pytest (tests/unit/test_layers.py).
#
# Then pytest (scripts/test_twins.py): the main pass, on the kernels as
# built (compiled when a compiler worked), runs the whole suite; the pure
# pass runs PURE_PATHS with TIDELOG_PURE=1, which the servers those tests
# start inherit, so the compiled and the pure twins both serve the
# integration and differential suites (but the cluster's end-to-end tests,
# which run no kernel code the others do not).  On two cores the work goes two
# ways at once: the main pass without BACKGROUND_PATHS (tests/spark) in the
# foreground; the pure pass, then the main pass's Spark tests, in the
# background (those suites mostly wait on sockets, processes and the JVM).
# The background passes' output is printed after the foreground's, then a
# line per pass says whether it passed; any failing fails make test, and so
# does pytest collecting no test at all (exit code 5).  PYTEST_ARGS go to
# every pass; test paths in them run in the foreground only, and narrow the
# pure pass to those in PURE_PATHS.  Without compiled kernels the main pass
# runs the pure twins: no pure pass.
RUFF_PATHS := src tests bench examples scripts setup.py
MYPY := $(BIN)/python -m mypy

test: $(KSTAMP) redis-server
	$(BIN)/ruff check $(RUFF_PATHS)
	$(MYPY)
	PURE_PATHS="$(PURE_PATHS)" $(BIN)/python scripts/test_twins.py -m "not long" $(PYTEST_ARGS)

# The tests marked long (pyproject.toml): end-to-end runs of a minute or so
# each (cluster resharding under load, elections across Tidelog and Redis,
# the Spark driver killed mid-batch ...), on the kernels as built; about 10
# minutes.
test-long: $(KSTAMP) redis-server
	$(BIN)/python -m pytest -m long $(PYTEST_ARGS)

bench: $(KSTAMP)
	@$(BYTECODE)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

lint: $(KSTAMP)
	$(BIN)/ruff check $(RUFF_PATHS)
	$(MYPY)
	$(BIN)/lint-imports --no-cache

# Redis's Tcl suite in external mode (scripts/compat.py); needs tclsh and,
# on the first run, apt-get (the source package is fetched into .compat/).
SERVER ?= tidelog
UNITS  ?=
compat: $(KSTAMP)
	@$(BYTECODE)
	$(PYTHON) scripts/compat.py --server $(SERVER) $(UNITS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache build dist src/*.egg-info
	rm -f src/tidelog/kernels-built.json
	find src -name '*.so' -type f -delete
	find src tests bench -name __pycache__ -type d -prune -exec rm -rf {} +
