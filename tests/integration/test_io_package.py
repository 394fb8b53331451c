"""The packages craft.io, craft.cli, craft.cards and craft.stability, split into modules of one job each (issue 33):
the names users import still import from where they did, the console script still resolves, and no module
reaches into another module's private names (tests/integration/test_doctests.py runs the new modules' examples)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("craft.io", "craft.cli", "craft.cards", "craft.stability")
SUBMODULES = sorted(f"{name}.{info.name}" for name in PACKAGES
                    for info in pkgutil.iter_modules(importlib.import_module(name).__path__))

# The public names of each module before the split (their __all__, or every public name they defined).
PUBLIC = {
    "craft.io": ["DEFAULT_MISSING_TOKENS", "PATH_COLUMN", "ReadInfo", "read_info", "read_table", "table_fingerprint",
                 "typed_part"],
    "craft.cards": ["ClusterCard", "ClusterRule", "CardWords", "cluster_card", "numeric_evidence", "level_evidence",
                    "paragons", "border_rows", "cluster_rule", "RULE_DEPTH", "RULE_ROWS", "RULE_LEVELS", "MULTIPLICITY",
                    "LEVEL_P_CONVENTION", "LEVEL_P_WORDS", "NUMERIC_COLUMNS", "LEVEL_COLUMNS"],
    "craft.stability": ["UNSTABLE_JACCARD", "DISSOLVED_JACCARD", "MATCHED_JACCARD", "MAX_RESAMPLES", "ROWS_PER_K", "MAX_KS",
                        "UNSTABLE_MEANING", "Progress", "Stopped", "best_match_jaccard", "refit_params", "sizing",
                        "Stability", "bootstrap_stability", "PermutationNull", "REFERENCE_WORDS", "shuffled_columns",
                        "one_cluster_reference", "permutation_null", "cost_silhouette", "k_evidence"],
    "craft.cli": ["main"],
}
# Private names still imported from public modules that this split does not own (estimator, limits: persist and the
# tests reach the same names), left for their owners to make public.
KNOWN: set[tuple[str, str]] = set()


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_name_imports_from_where_it_did(package):
    module = importlib.import_module(package)
    missing = [name for name in PUBLIC[package] if not hasattr(module, name)]
    assert not missing, f"{package} lost {missing}"
    assert set(getattr(module, "__all__", PUBLIC[package])) <= set(dir(module))


def test_the_console_script_resolves_to_the_cli_main(capsys):
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["craft"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name)(["--version"]) == 0
    assert capsys.readouterr().out.startswith("craft ")


@pytest.mark.parametrize("name", [*PACKAGES, *SUBMODULES, "craft.dask_io"])
def test_no_private_name_is_imported_from_a_module_that_is_not_private(name):
    """A module imports ``_name`` only from a ``_``-prefixed module (a package's own), never from a public one."""
    module = importlib.import_module(name)
    package = name if Path(module.__file__).name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    reached = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
        source = ".".join([*base, *(node.module.split(".") if node.module else [])])
        for alias in node.names:
            if importlib.util.find_spec(f"{source}.{alias.name}") if source.startswith("craft") and \
                    hasattr(importlib.import_module(source), "__path__") else False:
                continue  # a module (``from .. import _engine``): a package's own ``_`` module, or a public one
            if alias.name.startswith("_") and not source.rpartition(".")[2].startswith("_") \
                    and (source, alias.name) not in KNOWN and not alias.name.startswith("__"):
                reached.append(f"{alias.name} from {source}")
    assert not reached, f"{name} imports private names of public modules: {reached}"


def test_every_package_of_craft_is_in_the_wheel():
    """setuptools installs the packages pyproject.toml names, no others: a package missing there is missing after
    ``pip install``, though every test run from the clone passes."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "craft").rglob("__init__.py")}
    assert packages - listed == set(), f"packages left out of the wheel: {sorted(packages - listed)}"
