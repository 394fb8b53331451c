# Every target sets up its own virtual environment on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8501

.PHONY: run test lint bench bench-quick clean

# The "dev" extra: the library with every extra (app, readers, Dask, CLI,
# baselines), the tests, the benchmarks and the linters (pyproject.toml).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## Start the app on a bundled example (http://localhost:$(PORT)); its code is loaded before the server opens.
run: $(STAMP)
	$(BIN)/python -m explorer.serve --server.port $(PORT) --browser.gatherUsageStats false

## The whole test suite: library, doctests, app (AppTest), real browser, CLI, Dask, benchmark smoke run.
test: $(STAMP)
	$(BIN)/python -m pytest

## Lint (ruff) and type checks (mypy) of the library; .ci/run runs this before the suite.
lint: $(STAMP)
	$(BIN)/ruff check craft
	$(BIN)/mypy craft

## The full benchmark suite (about 15-30 minutes); results go to docs/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

bench-quick: $(STAMP)
	$(BIN)/python -m benchmarks.run_all --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
