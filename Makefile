# The two set-up commands of the README: `make run` and `make test`. Nothing else is needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test
DATA   ?= $(firstword $(wildcard ../shared/datasets))

.PHONY: run test test-all install install-test bench clean help

help:
	@echo "make run   - install into $(VENV) and run configs/quickstart.yaml"
	@echo "make test  - install the test extras and run the test suite"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(TSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,peers]"
	@touch $(STAMP) $@

install: $(STAMP)
install-test: $(TSTAMP)

run: $(STAMP)
	$(BIN)/treebench run configs/quickstart.yaml --out results/quickstart

test: $(TSTAMP)
	TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)} $(BIN)/python -m pytest -q -n 2 $(PYTEST_ARGS)

test-all: $(TSTAMP)
	TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)} $(BIN)/python -m pytest -q -n 2 -m "" $(PYTEST_ARGS)

bench: $(TSTAMP)
	$(BIN)/python benchmarks/cells_per_second.py

clean:
	rm -rf $(VENV) results/quickstart .pytest_cache
