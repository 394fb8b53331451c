"""Packaging: a core install runs the engine, every optional package is an extra named when missing.

Missing packages are simulated by ``sys.modules[name] = None`` (which makes
``import name`` raise ImportError), in a subprocess where a module is
imported afresh. ``.ci/run`` also installs the built wheel into a clean
venv with the core dependencies only (``.ci/wheel_smoke.py``).
"""

import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from craft import CraftInputError, infer_schema

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
GROUPS = PYPROJECT.get("dependency-groups", {})


def _name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9_.\-]+", requirement)
    assert found is not None, requirement
    return found[0].lower()


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)


def test_core_dependencies_are_the_engine_only():
    assert {_name(r) for r in PYPROJECT["project"]["dependencies"]} == {"numpy", "pandas", "scipy", "scikit-learn", "numba"}


def test_every_extra_named_in_an_error_exists_and_make_installs_them_all():
    named = set()
    for path in (ROOT / "craft").rglob("*.py"):
        named |= set(re.findall(r'extra="([a-z]+)"', path.read_text()))
    assert named and named <= set(EXTRAS), named - set(EXTRAS)

    def closure(extra, seen):
        for requirement in EXTRAS[extra]:
            inner = re.fullmatch(r"craft-explorer\[([a-z,]+)\]", requirement)
            for name in inner[1].split(",") if inner else ():
                if name not in seen:
                    seen.add(name)
                    closure(name, seen)
        return seen

    # make run / make test set up every extra (the suite needs them all, e.g. test_cli's progress bar needs tqdm)
    # and the dev group.
    assert closure("all", {"all"}) == set(EXTRAS)
    assert "-e '.[all]' --group dev" in (ROOT / "Makefile").read_text()


def test_the_tools_of_the_tree_are_dependency_groups_not_published_extras():
    """The tests, benchmarks and linters are PEP 735 groups: a user's ``pip install craft-explorer[...]`` never offers them."""
    assert not set(EXTRAS) & {"test", "bench", "lint", "dev"}
    assert {_name(r) for r in GROUPS["test"]} >= {"pytest", "hypothesis", "playwright", "pytest-timeout"}
    assert {_name(r) for r in GROUPS["lint"]} == {"ruff", "mypy"}
    assert GROUPS["dev"] == [{"include-group": name} for name in ("test", "bench", "lint")]
    # No group names the project itself: `pip install --group test` alone would fetch it from the index.
    assert not any(isinstance(r, str) and _name(r) == "craft-explorer" for group in GROUPS.values() for r in group)


def test_the_license_the_metadata_names_is_in_the_tree():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE", "static/plotly-cartesian.LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "Copyright (c) 2026 The CRAFT Explorer authors" in text
    # The charts' vendored plotly.js is MIT too, so the project's expression stays "MIT"; its licence ships with it.
    vendored = (ROOT / "static" / "plotly-cartesian.LICENSE").read_text()
    assert vendored.startswith("MIT License") and "Plotly" in vendored


def test_importing_and_fitting_pulls_in_no_extra():
    # pyarrow is left out: pandas 3 imports it itself when it is installed.
    result = _python(
        "import sys, craft\n"
        "X, y = craft.datasets.load('zoo')\n"
        "craft.CRAFT(k=7, n_init=1, random_state=0).fit(X)\n"
        "print(sorted(m for m in ('streamlit', 'plotly', 'openpyxl', 'kmodes', 'tqdm', 'dask') if m in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("blocked", "module", "extra"),
    [("plotly", "craft.plots", "plots"), ("plotly", "craft.report", "plots"),
     ("dask", "craft.distributed", "dask")],
)
def test_a_module_without_its_extra_names_the_extra(blocked, module, extra):
    result = _python(f"import sys; sys.modules[{blocked!r}] = None\nimport craft\nimport {module}")
    assert result.returncode != 0
    assert f"MissingExtraError: {module} needs the optional package" in result.stderr
    assert f"pip install 'craft-explorer[{extra}]'" in result.stderr


@pytest.fixture
def without(monkeypatch):
    def block(*names):
        # The package and every submodule already imported (``from a.b import c`` finds a cached ``a.b``).
        for loaded in [key for key in sys.modules if key.split(".")[0] in names] + list(names):
            monkeypatch.setitem(sys.modules, loaded, None)

    return block


def test_kprototypes_without_kmodes_is_an_import_error_naming_baselines(without):
    from explorer import services

    without("kmodes", "kmodes.kmodes", "kmodes.kprototypes")
    table = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "c": list("xxyy")})
    schema = infer_schema(table)
    with pytest.raises(ImportError, match=r"k-prototypes needs the optional package kmodes: pip install 'craft-explorer\[baselines\]'") as caught:
        services.compare._kprototypes(table, schema, 2, 0)
    assert not isinstance(caught.value, CraftInputError)


def test_progress_without_tqdm_names_the_cli_extra(without, capsys):
    from craft import cli

    without("tqdm")
    assert cli.main(["fit", "zoo", "--k", "7", "--n-init", "1", "--progress"]) == 1
    assert "craft fit --progress needs the optional package tqdm: pip install 'craft-explorer[cli]'" in capsys.readouterr().err
    # Without --progress the bar is a nicety: the fit runs.
    assert cli.main(["fit", "zoo", "--k", "7", "--n-init", "1", "--quiet"]) == 0


def test_readers_without_their_engines_name_the_readers_extra(without):
    from craft.io import read_table

    table = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    parquet, excel = io.BytesIO(), io.BytesIO()
    table.to_parquet(parquet)
    table.to_excel(excel, index=False)
    without("pyarrow", "openpyxl")
    with pytest.raises(ImportError, match=r"reading Parquet files needs the optional package pyarrow: pip install 'craft-explorer\[readers\]'"):
        read_table(parquet.getvalue(), name="t.parquet")
    with pytest.raises(ImportError, match=r"\.xlsx\) files needs the optional package openpyxl: pip install 'craft-explorer\[readers\]'"):
        read_table(excel.getvalue(), name="t.xlsx")


def test_datasets_load_through_importlib_resources(monkeypatch):
    """No path arithmetic outside the package: the loader asks importlib.resources for craft/data."""
    from importlib import resources

    from craft import datasets

    asked = []
    original = resources.files

    def files(package):
        asked.append(package)
        return original(package)

    monkeypatch.setattr(resources, "files", files)
    datasets._read.cache_clear()
    X, y = datasets.load("wine")
    assert asked == ["craft"] and X.shape == (178, 13) and np.isfinite(X.to_numpy()).all()


def test_the_version_is_written_once_in_a_module_that_imports_nothing():
    """pyproject.toml reads craft/_version.py; persist and export import it, not the package's __init__ (issue 33)."""
    import ast

    import craft
    from craft import _version

    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "craft._version.__version__"}
    tree = ast.parse((ROOT / "craft" / "_version.py").read_text())
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert craft.__version__ == _version.__version__
    for name in ("persist", "export"):
        source = ast.parse((ROOT / "craft" / f"{name}.py").read_text())
        from_package = [node for node in ast.walk(source) if isinstance(node, ast.ImportFrom)
                        and node.level == 1 and node.module is None and any(a.name == "__version__" for a in node.names)]
        assert not from_package, f"craft/{name}.py imports __version__ from craft/__init__"


def test_the_fast_tier_holds_library_tests_only_and_make_test_still_runs_every_module():
    """``make test-fast`` (issue 33) is pytest on tests/library, whose every module (tests and helpers, imports
    inside functions included) imports neither the app (``explorer``, its services included) nor Streamlit nor
    the app tests' helpers; ``make test`` stays pytest over the whole of tests/."""
    import ast

    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r'(?m)^test-fast: \$\(STAMP\)\n\t\$\(BIN\)/python -m pytest -m "not slow" -q tests/library\n', makefile)
    modules = sorted((ROOT / "tests" / "library").rglob("*.py"))
    assert len(modules) >= 30
    for path in modules:
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
        assert not imported & {"explorer", "streamlit", "app_helpers", "test_app", "playwright"}, (path.name, imported)
    assert re.search(r"(?m)^test: \$\(STAMP\)\n\t\$\(BIN\)/python -m pytest\n", makefile)
    assert "make test-fast" in (ROOT / "README.md").read_text()
