# Two set-up commands (see README): `make run` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-stamp
PYTEST_ARGS ?=
# One test process per core, at most four (each builds the Verilator models its tests need;
# one simulation per core beats Verilator's own threads on small machines).
PARALLEL := -n auto --maxprocesses 4

BOARD_STAMP := $(VENV)/.board-stamp

.PHONY: run test test-all test-board test-board-ci bench docs clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gravfm demo

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not board" $(PARALLEL) $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest $(PARALLEL) $(PYTEST_ARGS)

# The board extra and the Debian headers LiteX's simulator links against (root: apt-get); the
# bitstream builds' BIOS also needs the cross compiler.
BOARD_SIM_DEBS := libevent-dev libjson-c-dev
BOARD_DEBS := $(BOARD_SIM_DEBS) gcc-riscv64-unknown-elf
BOARD_SIM_STAMP := $(VENV)/.board-sim-stamp

define install_debs
	@dpkg -s $(1) >/dev/null 2>&1 || \
		(apt-get update -qq && apt-get install -y -qq $(1) >/dev/null) || \
		{ echo "the board tests need the Debian packages $(1) (apt-get, as root)"; exit 2; }
endef

$(BOARD_SIM_STAMP): $(STAMP)
	$(call install_debs,$(BOARD_SIM_DEBS))
	$(BIN)/python -m pip install --quiet -e '.[dev,board]'
	touch $(BOARD_SIM_STAMP)

$(BOARD_STAMP): $(BOARD_SIM_STAMP)
	$(call install_debs,$(BOARD_DEBS))
	touch $(BOARD_STAMP)

# Whole-SoC simulations (docs/boards.md): LiteX + LiteDRAM + Verilator, one build per design.
test-board: $(BOARD_STAMP)
	$(BIN)/python -m pytest -m "board and not slow" $(PARALLEL) $(PYTEST_ARGS)

# The few whole-SoC simulations CI runs (one board on chip and in DDR, a pair of boards, the
# generated Xilinx project): the board path checked on every commit within CI's time.
test-board-ci: $(BOARD_SIM_STAMP)
	$(BIN)/python -m pytest -m "board_ci" $(PARALLEL) $(PYTEST_ARGS)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $(DOCS_STAMP)

# The documentation site in build/docs (open build/docs/index.html); any warning fails the build.
docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs build/docs

# The build cache lives in the user's cache folder (shared by every checkout): `make clean-cache`
# empties it; `clean` removes this checkout's files (and a ./.gravfm-cache of older versions).
clean:
	rm -rf $(VENV) build .gravfm-cache

clean-cache:
	rm -rf "$${GRAVFM_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/gravfm}"
