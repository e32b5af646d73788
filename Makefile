# Two set-up commands work on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean bench bench-quick bench-locks

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/tour.py example.zarr

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --doctest-modules src/zarrkit tests

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

# Benchmarks (bench/, spec in BENCHMARKS.md); never part of `make test`.
# Full mode (~20 min) rewrites docs/benchmarks.md; quick mode (sizes / 16, < 2 min) prints only.
bench: $(STAMP)
	$(PY) bench/run.py --out docs/benchmarks.md

bench-quick: $(STAMP)
	$(PY) bench/run.py --quick

# The cost of write locks (file_locks off and on) against the peers (~3 min).
bench-locks: $(STAMP)
	$(PY) bench/locks.py --out docs/benchmarks-locks.md

clean:
	rm -rf $(VENV) example.zarr
