# Every target sets up its own virtual environment on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8501

.PHONY: run test test-fast lint bench bench-quick clean

# The library with every extra (app, readers, Dask, CLI, baselines) and the
# "dev" dependency group: the tests, the benchmarks and the linters
# (pyproject.toml). --group needs pip >= 25.1, hence the upgrade first.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]' --group dev
	touch $(STAMP)

## Start the app on a bundled example (http://localhost:$(PORT)); its code is loaded before the server opens.
run: $(STAMP)
	$(BIN)/python -m explorer.serve --server.port $(PORT) --browser.gatherUsageStats false

## The whole test suite: library, doctests, app (AppTest), real browser, CLI, Dask, benchmark smoke run
## (about 15 minutes; `make test-fast` is the library's tier).
test: $(STAMP)
	$(BIN)/python -m pytest

## The library's fast tier: tests/library (craft/ alone: no app, browser, CLI process or Dask), slow checks left out.
# pytest imports only that folder (the app's modules import Streamlit, seconds of collection alone);
# tests/integration/test_packaging.py checks that no module there imports explorer or Streamlit.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -q tests/library

## Lint (ruff) and type checks (mypy) of every Python file: craft/, explorer/, pages/, app.py,
## benchmarks/, tests/, .ci/; .ci/run runs this before the suite.
# The test folders are type-checked in runs of their own: pytest puts each folder
# on sys.path (its modules import each other by file name), and tests/, tests/app
# and tests/browser each hold a conftest module (one run may hold one); the app's
# tests also import tests/library's helpers (pytest's pythonpath, MYPYPATH here).
# Tests use optional values as present (a fitted model, a fit's message,
# read_info): --no-strict-optional lets None pass for them, since a None fails
# the test where it is used; every other check stays on. The library
# they import is checked strictly by the first run, where its ignores for None are
# needed; here they would count as unused.
TEST_MYPY := $(BIN)/mypy --no-strict-optional --no-warn-unused-ignores
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(TEST_MYPY) tests/conftest.py tests/library tests/integration
	MYPYPATH=tests/library $(TEST_MYPY) tests/app
	$(TEST_MYPY) tests/browser

## The full benchmark suite (about 15-30 minutes); results go to docs/RESULTS.md.
bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all

bench-quick: $(STAMP)
	$(BIN)/python -m benchmarks.run_all --quick

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
