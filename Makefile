# pitools developer tasks. Everything runs inside .venv, created on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := examples/sample-session.jsonl
## Test processes (pytest-xdist): one per core by default; JOBS=0 runs in this process.
JOBS ?= auto
## Idle workers steal queued tests (--dist worksteal): a long test near the end no longer leaves a core idle.
## Bytecode caches on for the tests even where the environment turns them off: every test
## that starts `python -m pitools` would otherwise compile pitools again (~0.1 s each).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal

.PHONY: install dev run test check test-all lint fmt generate dist check-dist bench bench-floor floor-guard bench-compare bench-archive bench-dataset golden golden-index conformance differential fuzz stress clean

DEV_STAMP := $(VENV)/.dev-installed

# Users: pitools and its runtime dependencies only (no test or lint tools).
$(STAMP): pyproject.toml pitools/__init__.py
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

# Developers: the same plus the dev dependency group (pytest, ruff, mypy, build, ...).
$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e . --group dev
	touch $(DEV_STAMP)

install: $(STAMP)

dev: $(DEV_STAMP)

## Install, then replay Pi's context on a bundled sample session.
run: $(STAMP)
	$(BIN)/pitools inspect $(SAMPLE)
	$(BIN)/pitools context $(SAMPLE)

## The fast inner loop: every test except those marked slow, on every core.
test: $(DEV_STAMP)
	$(PYTEST) -m "not slow"

## What CI runs (.ci/run): lint, then every test, the slow ones included, then the floor guard.
check: lint test-all floor-guard

## Issue 39's regression guard, alone on the machine after the tests: each command's CPU time over
## the parse floor per session shape may not grow 20 % past bench/floor-ratios.json, and a human
## view may cost at most 1.3x its JSON (measured again up to 3 times before failing).
floor-guard: $(DEV_STAMP)
	$(BIN)/python scripts/floor_guard.py --check bench/floor-ratios.json --attempts 3

## Every test, the slow ones included.
test-all: $(DEV_STAMP)
	$(PYTEST)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pitools
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_purity.py

fmt: $(DEV_STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Regenerate every generated file: the session schema + entry pre-check, the model catalogue.
## tests/unit/test_generated.py fails when a committed one is stale.
generate: $(DEV_STAMP)
	$(BIN)/python scripts/gen_schema.py
	$(BIN)/python scripts/gen_catalog.py

## The sdist and the wheel, in dist/ (what pipx / uv tool install take; see README "Install").
dist: $(DEV_STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

## Install the built wheel into a clean venv (no dev tools, not editable) and run it on the sample.
check-dist: dist
	scripts/check_dist.sh dist $(SAMPLE)

bench: $(DEV_STAMP)
	$(BIN)/python scripts/bench.py
	$(BIN)/python scripts/floor_guard.py --check bench/floor-ratios.json
	$(BIN)/python scripts/bench_scan.py --sizes 1,10,100
	$(BIN)/python scripts/bench_viewer.py
	$(MAKE) bench-archive
	$(MAKE) bench-dataset

## This tree against an earlier revision in the same run (BASE=commit, tag or branch).
BASE ?= v0.2.0
## How far each command on each session shape is from the parse floor (read + split lines), as
## ratios of CPU time; --record re-records the baseline make check's guard compares against.
bench-floor: $(DEV_STAMP)
	$(BIN)/python scripts/floor_guard.py --check bench/floor-ratios.json

bench-compare: $(DEV_STAMP)
	$(BIN)/python scripts/bench_compare.py --base $(BASE)

## The archive index on a generated 1,000-session, 1 GB archive (kept in /tmp between runs).
bench-archive: $(DEV_STAMP)
	$(BIN)/python scripts/bench_archive.py

## pitools dataset on a generated 1 GB archive: MB/s and peak memory (bench/out/).
bench-dataset: $(DEV_STAMP)
	$(BIN)/python scripts/bench_dataset.py

## Re-record Pi 1.6.0's results for every golden session (needs node and the reference, see README).
golden: $(DEV_STAMP)
	$(BIN)/python scripts/record_golden.py
	$(BIN)/python tests/golden/request_cases.py
	$(BIN)/python -m tests.golden.append_cases
	node scripts/record_requests.mjs
	node scripts/record_requests.mjs --settings
	node scripts/record_requests.mjs --check-wedges
	node scripts/record_requests.mjs --heal
	node scripts/record_requests.mjs --summaries
	$(MAKE) golden-index

## Rewrite golden/collection-index.json, what collecting the tests reads of Pi's recordings (a new or
## re-recorded one is parsed at every collection until then; tests/golden/test_collection_index.py fails).
golden-index: $(DEV_STAMP)
	$(BIN)/python -m tests.support

## Re-record every golden expectation with another Pi release and print what differs from the
## committed recordings, per case and per field: `make conformance PI=1.7.0` (needs node and npm).
PI ?= 1.6.0
conformance: $(STAMP)
	$(BIN)/python scripts/conformance.py --pi $(PI)

## Compare pitools with Pi on freshly generated sessions (needs node and the reference).
differential: $(DEV_STAMP)
	$(BIN)/python scripts/differential.py

## SIGKILL the writers at random moments (1,000 trials each); see scripts/stress_crash.py.
stress: $(DEV_STAMP)
	nice -n 19 $(BIN)/python scripts/stress_crash.py --trials 1000 --writer all
	nice -n 19 $(BIN)/python scripts/stress_concurrent.py --trials 1000 --writer all
	nice -n 19 $(BIN)/python scripts/stress_concurrent.py --trials 200 --writer compact --full-disk

fuzz: $(DEV_STAMP)
	PITOOLS_FUZZ_EXAMPLES=100000 $(BIN)/python -m pytest -q tests/fuzz -p no:randomly

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
