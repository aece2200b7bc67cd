# shmem developer tasks. `make run` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SHMEM := $(VENV)/bin/shmem

.PHONY: run test lint bench fuzz dev clean

$(VENV)/.runtime: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

## run: analyze the bundled example specs
run: $(VENV)/.runtime
	$(SHMEM) analyze access_specs/

## test: the whole test suite
test: $(VENV)/.dev
	$(PY) -m pytest -q

## dev: install shmem with its development tools into .venv
dev: $(VENV)/.dev

## lint: ruff and mypy
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check shmem_cli tests bench
	$(VENV)/bin/mypy

## bench: performance figures (see docs/performance.md)
bench: $(VENV)/.dev
	$(PY) bench/run.py

## fuzz: bounded fuzzing of the spec loader and expression parser
fuzz: $(VENV)/.dev
	$(PY) -m pytest -q tests/fuzz --fuzz-seconds=$${FUZZ_SECONDS:-60}

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
