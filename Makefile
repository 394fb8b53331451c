# Every target sets up its own virtual environment on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8501

.PHONY: run test bench bench-quick clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dask,test,bench]'
	touch $(STAMP)

## Start the app on a bundled example (http://localhost:$(PORT)); its code is loaded before the server opens.
run: $(STAMP)
	$(BIN)/python -m explorer.serve --server.port $(PORT) --browser.gatherUsageStats false

## The whole test suite: library, app (AppTest), real browser, CLI, Dask, benchmark smoke run.
test: $(STAMP)
	$(BIN)/python -m pytest

## The full benchmark suite (about 15-30 minutes); results go to docs/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

bench-quick: $(STAMP)
	$(BIN)/python -m benchmarks.run_all --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
