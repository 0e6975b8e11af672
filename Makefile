# Tidelog's developer commands.  Needs only Python >= 3.11, make and git.
#
#   make run      start tidelog-server on 127.0.0.1:6379, data in ./data (foreground;
#                 PORT=, DATA=, HOST= change those, ARGS="--appendonly yes" adds options)
#   make test     ruff, then the whole test suite (the layer contracts included;
#                 installs Debian's redis-server when root)
#   make bench    the benchmarks (bench/run.py)
#   make lint     ruff and the import-linter layer contracts only
#   make clean    remove the virtualenv and caches (never ./data)
#
# Every target first makes .venv (python3 -m venv) and installs the pinned
# packages of requirements.lock plus Tidelog itself (editable).  A stamp file
# remembers that, so re-runs skip it until requirements.lock or
# pyproject.toml change.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.tidelog-installed

HOST ?= 127.0.0.1
PORT ?= 6379
DATA ?= ./data
ARGS ?=

# Extra arguments: make test PYTEST_ARGS="-k xadd -x", make bench BENCH_ARGS=...
PYTEST_ARGS ?=
BENCH_ARGS  ?=

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.DEFAULT_GOAL := help
.PHONY: help venv run test redis-server bench lint clean

help:
	@echo "make run    start tidelog-server on $(HOST):$(PORT), data in $(DATA)"
	@echo "make test   run the whole test suite"
	@echo "make bench  run the benchmarks"
	@echo "make lint   ruff and the layer contracts (import-linter)"
	@echo "make clean  remove $(VENV) and caches"

venv: $(STAMP)

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { \
	  echo "error: Tidelog needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)." >&2; \
	  echo "       Run make with PYTHON=/path/to/python3.11 (or newer)." >&2; exit 1; }
	@echo "$(PYTHON) -m venv $(VENV)"
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu install the python3-venv package." >&2; \
	  exit 1; }

$(STAMP): requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --no-deps -r requirements.lock
	$(BIN)/python -m pip install --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	@touch $@

run: $(STAMP)
	exec $(BIN)/tidelog-server --bind $(HOST) --port $(PORT) --dir $(DATA) $(ARGS)

# Debian's redis-server is the reference for the differential tests, and its
# redis-tools (redis-cli, redis-benchmark) are driven by the CLI tests.
redis-server:
	@bash scripts/ensure-redis-server.sh

# ruff first (seconds); the layer contracts run inside pytest
# (tests/unit/test_layers.py).  pytest's exit code 5 means it collected no
# test at all: that fails too.
RUFF_PATHS := src tests bench examples scripts

test: $(STAMP) redis-server
	$(BIN)/ruff check $(RUFF_PATHS)
	@status=0; $(BIN)/python -m pytest $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: pytest collected no tests" >&2; fi; \
	exit $$status

bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check $(RUFF_PATHS)
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build dist src/*.egg-info
	find src tests bench -name __pycache__ -type d -prune -exec rm -rf {} +
