# Two set-up commands (see README): `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# One test process per core, at most four (each builds the Verilator models its tests need;
# one simulation per core beats Verilator's own threads on small machines).
PARALLEL := -n auto --maxprocesses 4

.PHONY: run test test-all bench clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gravfm demo

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PARALLEL) $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest $(PARALLEL) $(PYTEST_ARGS)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

# The build cache lives in the user's cache folder (shared by every checkout): `make clean-cache`
# empties it; `clean` removes this checkout's files (and a ./.gravfm-cache of older versions).
clean:
	rm -rf $(VENV) build .gravfm-cache

clean-cache:
	rm -rf "$${GRAVFM_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/gravfm}"
