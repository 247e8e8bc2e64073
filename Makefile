# The two set-up commands of the README: `make run` and `make test`. Nothing else is needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TSTAMP := $(VENV)/.installed-test
DSTAMP := $(VENV)/.installed-docs
DATA   ?= $(firstword $(wildcard ../shared/datasets))

# paper configs: every config with `profiles:` (their `ci` profile is the scaled-down check)
PAPER_CONFIGS ?= $(shell grep -l '^profiles:' configs/*.yaml)
REPRO_OUT     ?= results/reproduce

.PHONY: run precompile test test-slurm test-nojit test-all install install-test install-docs docs bench clean help reproduce reproduce-full

help:
	@echo "make run   - install into $(VENV) and run configs/quickstart.yaml"
	@echo "make test  - install the test extras and run the test suite"
	@echo "make precompile - compile the numba kernels into numba's cache (make run and make test do it)"
	@echo "make test-nojit - run the numba kernel tests without compilation (CI runs it too)"
	@echo "make test-slurm - run the SLURM tests alone (make test runs them too)"
	@echo "make reproduce      - run every paper config's ci profile and verify its expectations"
	@echo "make reproduce-full - the same with the full configs (hours)"
	@echo "make docs  - install the docs extra and build the site into site/ (warnings are errors)"

# pip installs without byte-compiling every module of every package (about 40 s of one core for
# treebench's dependencies alone); Python compiles the modules a process imports on first use and
# keeps them. Where bytecode is not written (PYTHONDONTWRITEBYTECODE), pip compiles them all as
# usual: every process would otherwise compile its imports from source again.
PIP_INSTALL := $(BIN)/python -m pip install --quiet $(if $(PYTHONDONTWRITEBYTECODE),,--no-compile)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e .
	@touch $@

$(TSTAMP): pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e ".[test,peers]"
	@touch $(STAMP) $@

$(DSTAMP): pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e ".[docs]"
	@touch $(STAMP) $@

install: $(STAMP)
install-test: $(TSTAMP)
install-docs: $(DSTAMP)

# precompile: the learners' numba kernels into numba's cache, two processes at once (a fresh
# machine's first compilation in about 4.5 minutes instead of 6.5; about 9 s when cached)
run: precompile
	$(BIN)/treebench run configs/quickstart.yaml --out results/quickstart

precompile: $(STAMP)
	$(BIN)/python -m treebench.execute.precompile

# The SLURM tests (one local cluster on the machine at a time, mostly waiting on its jobs) run
# in a pytest process of their own beside the rest of the suite on $(TEST_WORKERS) workers; their output
# follows the suite's. Exit 5 (no SLURM test selected) counts as success. The workers steal
# tests from each other's queues (--dist worksteal): with the default handing-out, the last
# minutes ran the queue of one worker while the other sat idle. Three workers on two cores: the
# suite waits on the processes its tests start (clusters, killed runs, subprocess CLIs) about a
# fifth of its time, and a third worker runs tests in those gaps (952 s against 1,086 s on two).
# A fourth did not help: 1,043 s against 1,035 s on three, though the SLURM tests no longer ran
# beside it and `make reproduce` was lighter.
# The SLURM process collects only the files that mark tests `slurm` (collecting the whole suite
# to select them took about 25 s of CPU).
TEST_WORKERS ?= 3
SLURM_TEST_FILES = $(shell grep -rl --include='test_*.py' 'mark.slurm' tests | sort)
# PRECOMPILE is the command that fills numba's cache before the suite; CI sets it to `true`
# when its own background compilation succeeded (checking the full cache again took two
# interpreters about 12 s of CPU).
PRECOMPILE ?= $(BIN)/python -m treebench.execute.precompile
SLURM_PYTEST = $(BIN)/python -m pytest -q -m "slurm and not slow" $(SLURM_TEST_FILES) $(PYTEST_ARGS)
# SLURM_SEPARATE: set when the caller runs `make test-slurm` itself (CI starts it earlier, beside
# the kernels' compilation: the SLURM tests need no compiled kernel); `make test` leaves them out
SLURM_SEPARATE ?=
SLURM_IN_TEST = $(if $(SLURM_SEPARATE),true,$(SLURM_PYTEST))
test: $(TSTAMP)
	-$(PRECOMPILE)
	@export TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)}; log=$$(mktemp); \
	$(SLURM_IN_TEST) > $$log 2>&1 & slurm=$$!; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not slurm and not slow" $(PYTEST_ARGS); status=$$?; \
	wait $$slurm; s=$$?; if [ -s $$log ]; then echo "== the SLURM tests"; cat $$log; fi; rm -f $$log; \
	[ $$status -eq 0 ] && { [ $$s -eq 0 ] || [ $$s -eq 5 ]; }

# The SLURM tests alone (exit 5, no SLURM test selected, counts as success).
test-slurm: $(TSTAMP)
	@export TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)}; \
	$(SLURM_PYTEST); s=$$?; [ $$s -eq 0 ] || [ $$s -eq 5 ]

# The kernel tests once more as plain Python (NUMBA_DISABLE_JIT=1), so coverage sees compiled
# code; wall-clock tests (time limits, deadlines, searches that time out) and data/peer/slow
# tests are left to `make test`. Only the files that mark tests `kernels` are collected
# (collecting the whole suite took 11 s of CPU a process, these files 5 s).
KERNEL_TEST_FILES = $(shell grep -rl --include='test_*.py' 'mark.kernels' tests | sort)
test-nojit: $(TSTAMP)
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m pytest -q -n 2 -m "kernels and not data and not slow and not peers" $(KERNEL_TEST_FILES) \
		-k "not time_limit and not timed_out and not deadline" -W "ignore:overflow encountered:RuntimeWarning" $(PYTEST_ARGS)

test-all: $(TSTAMP)
	TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)} $(BIN)/python -m pytest -q -n 2 --dist worksteal -m "" $(PYTEST_ARGS)

# `treebench reproduce`: each paper config's ci profile runs into $(REPRO_OUT)/<config>, one
# after the other in one process (a process per config paid the imports fourteen times, about
# 4 CPU s each), then every experiment there is verified (exit 5 when an expectation fails, 2
# when a config could not run). Failed cells do not stop it: the verification reports them
# against the expectations they touch.
reproduce: $(STAMP)
	@rm -rf $(REPRO_OUT)
	TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)} $(BIN)/treebench reproduce $(PAPER_CONFIGS) \
	  --profile ci --out $(REPRO_OUT)

reproduce-full: $(STAMP)
	TREEBENCH_DATA_DIR=$${TREEBENCH_DATA_DIR:-$(DATA)} $(BIN)/treebench reproduce $(PAPER_CONFIGS) \
	  --out $(REPRO_OUT)-full

# The documentation site (mkdocs.yml, docs/): generated pages read the code and, when
# `make reproduce` ran before, its results in $(REPRO_OUT). Any warning fails the build.
docs: $(DSTAMP)
	REPRO_OUT=$(REPRO_OUT) NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

bench: $(TSTAMP)
	$(BIN)/python benchmarks/cells_per_second.py

clean:
	rm -rf $(VENV) results/quickstart .pytest_cache site
