# Two set-up commands work on a fresh machine: `make demo` and `make test`.
# The test environment runs on Python 3.12 where the machine has it (the current peers,
# zarr-python 3.4, hdmf-zarr 0.14, anndata 0.13, need it): on PATH, or among pyenv's
# versions; otherwise python3, with a notice. PY311 (python3.11 where there is one) runs
# the smoke suite that keeps `requires-python >= 3.11` honest.
find_python = $(firstword $(foreach p,$(1) $(wildcard $(HOME)/.pyenv/versions/$(2)*/bin/python$(2)),\
  $(shell $(p) -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma),$(2))))' \
  2>/dev/null && echo $(p))))
comma := ,
PYTHON ?= $(or $(call find_python,python3.12,3.12),python3)
PY311 ?= $(call find_python,python3.11 python3,3.11)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean browser bench bench-quick bench-locks fuzz soak mutate hdmf-venv smoke-311

$(STAMP): pyproject.toml native/Cargo.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# The native engine (native/, Rust): built by the install above (maturin), and again here
# when its sources change, without reinstalling everything.
ENGINE := src/zarrkit/_engine.abi3.so
$(ENGINE): native/Cargo.toml native/Cargo.lock $(wildcard native/src/*.rs) | $(STAMP)
	cd native && CARGO_BUILD_JOBS=2 cargo build --release --locked
	cp native/target/release/lib_engine.so $(ENGINE)

demo: $(STAMP) $(ENGINE)
	$(PY) examples/tour.py example.zarr

# The peer check with hdmf-zarr 0.13 (tests/test_hdmf_peer.py; its v2 layout is in files
# people still have) needs hdmf-zarr and pynwb pinned to zarr-python 2: they get their own
# venv (on Python 3.11, where the pins were made), built once (its stamp) and again only when
# their pins (tests/hdmf_peer/requirements.txt) change.
HDMF_VENV := .venv-hdmf
HDMF_STAMP := $(HDMF_VENV)/.installed
HDMF_PINS := tests/hdmf_peer/requirements.txt
$(HDMF_STAMP): $(HDMF_PINS)
	rm -rf $(HDMF_VENV)
	$(or $(PY311),$(PYTHON)) -m venv $(HDMF_VENV)
	$(HDMF_VENV)/bin/python -m pip install -q --upgrade pip
	$(HDMF_VENV)/bin/python -m pip install -q -r $(HDMF_PINS)
	touch $(HDMF_STAMP)

hdmf-venv: $(HDMF_STAMP)

# The smoke run on Python 3.11 (`requires-python >= 3.11` kept honest): zarrkit's own
# dependencies and the test runner, zarrkit itself from src/ with the engine built above
# (abi3, so one build serves both). No peers: the tests that compare with one skip here
# (they run on 3.12 against the current releases).
VENV311 := .venv-311
STAMP311 := $(VENV311)/.installed
SMOKE_TESTS := tests/test_array.py tests/test_group.py tests/test_storage.py \
  tests/test_indexing.py tests/test_read_engine.py tests/test_write_engine.py \
  tests/test_fixtures.py
$(STAMP311): pyproject.toml
	rm -rf $(VENV311)
	$(PY311) -m venv $(VENV311)
	$(VENV311)/bin/python -m pip install -q --upgrade pip
	$(VENV311)/bin/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' > $(VENV311)/requirements.txt
	$(VENV311)/bin/python -m pip install -q -r $(VENV311)/requirements.txt pytest pytest-xdist hypothesis
	touch $(STAMP311)

smoke-311: $(ENGINE)
	@if [ -z "$(PY311)" ]; then echo "NOTICE: no Python 3.11 on this machine: the 3.11 smoke run is skipped"; \
	else $(MAKE) --no-print-directory $(STAMP311) && \
	  PYTHONPATH=src $(VENV311)/bin/python -c 'import sys, zarrkit; assert sys.version_info[:2] == (3, 11); print("zarrkit imports on Python", sys.version.split()[0])' && \
	  PYTHONPATH=src $(VENV311)/bin/python examples/tour.py $$(mktemp -d)/tour.zarr >/dev/null && \
	  PYTHONPATH=src $(VENV311)/bin/python -m pytest -q -n 2 -p no:cacheprovider $(SMOKE_TESTS); fi

# The viewer's browser test (tests/test_viewer_browser.py) drives Debian's chromium through
# its chromedriver; installed from Debian's packages when missing (root, or sudo without a
# password).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver \
	    >/dev/null; }

# The suite runs with the native engine where it covers a chain; the read and write tests
# (and the peers' data) run again on the Python path, the reference.
test: $(STAMP) $(ENGINE) $(HDMF_STAMP) browser
	@$(PY) -c 'import sys; sys.version_info[:2] >= (3, 12) or print("NOTICE: no Python 3.12 on this machine: the suite runs on", sys.version.split()[0], "with the peers that install there, not their current releases")'
	$(PY) -m pytest -q -n 2 --doctest-modules src/zarrkit tests
	# The whole suite again on the pure-Python engine, the reference the native one matches.
	ZARRKIT_ENGINE=python $(PY) -m pytest -q -n 2 --doctest-modules src/zarrkit tests
	# Python 3.11, the oldest Python zarrkit supports: import, the tour, the core tests.
	$(MAKE) --no-print-directory smoke-311

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

# Benchmarks (bench/, spec in BENCHMARKS.md); never part of `make test`.
# Full mode (~20 min) rewrites docs/benchmarks.md; quick mode (sizes / 16, < 2 min) prints only.
# They need the `bench` extra too (pydantic-zarr, S13's peer), installed once by its own stamp.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) bench/run.py --out docs/benchmarks.md

bench-quick: $(BENCH_STAMP)
	$(PY) bench/run.py --quick

# The cost of write locks (file_locks off and on) against the peers (~3 min).
bench-locks: $(STAMP)
	$(PY) bench/locks.py --out docs/benchmarks-locks.md

# Coverage-guided fuzzing of every parser and decoder (atheris), FUZZ_SECONDS each;
# findings are saved as fuzz-findings/<target>/crash-* (replay: atheris_fuzz.py TARGET FILE).
FUZZ_SECONDS ?= 120
fuzz: $(STAMP)
	@for t in $$($(PY) tests/fuzz/atheris_fuzz.py --list); do \
	  mkdir -p fuzz-findings/$$t; echo "== $$t"; \
	  $(PY) tests/fuzz/atheris_fuzz.py $$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -artifact_prefix=fuzz-findings/$$t/ 2>&1 | grep -E "^#[0-9]+ +DONE|^Done|ERROR|Exception" ; \
	done

# Crash soak (~9 min): the tests/crash trials of `make test`, 30 per scenario, 100 per ZIP
# scenario, 20 per SQLite/LMDB scenario.
soak: $(STAMP)
	ZARRKIT_CRASH_TRIALS=30 ZARRKIT_CRASH_ZIP_TRIALS=100 $(PY) -m pytest -q -n 2 tests/crash

# Mutation testing (mutmut, tools/mutate/run.py; ~5-60 min a module): the score per module,
# written to .mutmut-cache/report.md. MODULE=storage/directory.py (or a directory under
# src/zarrkit/, several separated by spaces) runs those only; INCREMENTAL=1 keeps earlier
# verdicts and re-tests new mutants and survivors. Never part of `make test`.
MUTMUT_VERSION := 3.8.1
mutate: $(STAMP)
	@$(PY) -c 'import importlib.metadata as m; assert m.version("mutmut") == "$(MUTMUT_VERSION)"' \
	  2>/dev/null || $(PY) -m pip install -q 'mutmut==$(MUTMUT_VERSION)'
	$(PY) tools/mutate/run.py $(if $(INCREMENTAL),--incremental) $(MODULE)

clean:
	rm -rf $(VENV) $(VENV311) example.zarr
