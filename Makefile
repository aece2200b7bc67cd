# shmem developer tasks. `make run` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHMEM := $(VENV)/bin/shmem
# setuptools warns on every editable install of a flat (not src/) layout that a folder named
# like the package could shadow it; here that folder is the package itself, so it is noise
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install -q

.PHONY: run shell test test-slow lint bench fuzz dev clean

$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP_INSTALL) -e '.[cuda]'
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PIP_INSTALL) -e '.[dev]'
	touch $@

## run: analyze the bundled example specs, then say how to put shmem on PATH
run: $(VENV)/.runtime
	$(SHMEM) analyze access_specs/
	@echo
	@echo "shmem is installed in $(VENV)/bin. To type 'shmem ...' as the docs do, run"
	@echo "  . $(VENV)/bin/activate     (or: make shell, a shell with shmem on PATH)"

## shell: a new shell with .venv/bin (and so shmem) first on PATH; exit to leave it
shell: $(VENV)/.runtime
	@echo "shmem is on PATH in this shell; type exit to leave it"
	@VIRTUAL_ENV="$(CURDIR)/$(VENV)" PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $${SHELL:-/bin/sh} -i

## test: the whole test suite, in two worker processes (pytest-xdist; one: -n 0)
test: $(VENV)/.dev
	$(PY) -m pytest -q -n 2

## test-slow: the tests marked slow, which `make test` leaves out (CI runs both)
test-slow: $(VENV)/.dev
	$(PY) -m pytest -q -m slow

## dev: install shmem with its development tools into .venv
dev: $(VENV)/.dev

## lint: ruff check, ruff format --check and mypy --strict
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check shmem_cli tests bench docs/tools measured
	$(VENV)/bin/ruff format --check shmem_cli tests bench docs/tools measured
	$(VENV)/bin/mypy

## bench: performance figures (see docs/performance.md)
bench: $(VENV)/.dev
	$(PY) bench/run.py

## fuzz: bounded fuzzing of the spec loader, the expression parser and the kernel-input readers
fuzz: $(VENV)/.dev
	$(PY) -m pytest -q tests/fuzz --fuzz-seconds=$${FUZZ_SECONDS:-60}

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
