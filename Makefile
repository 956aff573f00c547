# pitools developer tasks. Everything runs inside .venv, created on first use.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := examples/sample-session.jsonl

.PHONY: install run test lint fmt generate bench bench-archive bench-dataset golden conformance differential fuzz stress clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e . --group dev
	touch $(STAMP)

install: $(STAMP)

## Install, then replay Pi's context on a bundled sample session.
run: $(STAMP)
	$(BIN)/pitools inspect $(SAMPLE)
	$(BIN)/pitools context $(SAMPLE)

## The whole test suite (what CI runs).
test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy pitools
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_purity.py

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Regenerate every generated file: the session schema + entry pre-check, the model catalogue.
## tests/unit/test_generated.py fails when a committed one is stale.
generate: $(STAMP)
	$(BIN)/python scripts/gen_schema.py
	$(BIN)/python scripts/gen_catalog.py

bench: $(STAMP)
	$(BIN)/python scripts/bench.py
	$(BIN)/python scripts/bench_scan.py --sizes 1,10,100
	$(MAKE) bench-archive
	$(MAKE) bench-dataset

## The archive index on a generated 1,000-session, 1 GB archive (kept in /tmp between runs).
bench-archive: $(STAMP)
	$(BIN)/python scripts/bench_archive.py

## pitools dataset on a generated 1 GB archive: MB/s and peak memory (bench/out/).
bench-dataset: $(STAMP)
	$(BIN)/python scripts/bench_dataset.py

## Re-record Pi 1.6.0's results for every golden session (needs node and the reference, see README).
golden: $(STAMP)
	$(BIN)/python scripts/record_golden.py

## Re-record every golden expectation with another Pi release and print what differs from the
## committed recordings, per case and per field: `make conformance PI=1.7.0` (needs node and npm).
PI ?= 1.6.0
conformance: $(STAMP)
	$(BIN)/python scripts/conformance.py --pi $(PI)

## Compare pitools with Pi on freshly generated sessions (needs node and the reference).
differential: $(STAMP)
	$(BIN)/python scripts/differential.py

## SIGKILL the writers at random moments (1,000 trials each); see scripts/stress_crash.py.
stress: $(STAMP)
	nice -n 19 $(BIN)/python scripts/stress_crash.py --trials 1000 --writer all

fuzz: $(STAMP)
	PITOOLS_FUZZ_EXAMPLES=100000 $(BIN)/python -m pytest -q tests/fuzz -p no:randomly

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
