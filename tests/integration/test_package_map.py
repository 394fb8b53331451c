"""The plan is the code (issue 33): one job a module, each on the package map of ``docs/architecture.md``, none over
about 800 lines unless the map says why, no private name borrowed across modules, no import circle in the app.

Read from the source files of ``craft/``, ``explorer/`` and the pages (nothing is imported but the package of
services), so these run in a blink.
"""

import ast
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = ROOT / "explorer"
#: The most lines a module may have (issue 33: "about 800"), unless its row on the map says why it is left whole.
MOST_LINES = 800


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(EXPLORER.rglob("*.py"))}
#: Every module of the library and the app, for the checks that hold for both.
TREE = {_module_name(path): path for top in ("craft", "explorer") for path in sorted((ROOT / top).rglob("*.py"))}
#: The scripts that import explorer's modules: the pages and the entry point.
SCRIPTS = {f"pages.{path.stem}": path for path in sorted((ROOT / "pages").glob("*.py"))} | {"app": ROOT / "app.py"}


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(name: str, path: Path):
    """``(source module, imported name or None, bound name, line)`` for every import of ``path``, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, alias.asname or alias.name.partition(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(name, path).split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                yield source, alias.name, alias.asname or alias.name, node.lineno


def _graph() -> dict[str, set[str]]:
    """Which explorer module imports which (function-level imports included: a deferred import is still an edge)."""
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for source, imported, _, _ in _imports(name, path):
            for target in (source, f"{source}.{imported}" if imported else None):
                if target in MODULES and target != name:
                    edges[name].add(target)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_circle():
    """The check below can fail: a made-up pair that import each other is a circle."""
    assert _circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_explorer_has_no_import_circle():
    """``context`` ↔ ``frame`` was one (the pages now ask ``frame.current()``); deferred imports count too."""
    assert _circles(_graph()) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _allowed(importer: str, source: str) -> bool:
    """A package's own ``_`` module (``explorer/services/_common.py``) serves the modules of its package."""
    package, _, last = source.rpartition(".")
    return _private(last) and (importer == package or importer.startswith(package + "."))


@pytest.mark.parametrize("name", sorted(TREE) + sorted(SCRIPTS))
def test_no_module_borrows_a_private_name_of_another(name):
    """No ``from x import _name`` and no ``x._name`` on a module of the tree but from a package's own ``_`` module
    (What-if's ``_swept``, ``state._history_navigation``, ``estimator._as_table`` and ``limits._available_memory``
    were borrowed so; all are public now)."""
    path = TREE.get(name) or SCRIPTS[name]
    borrowed = []
    modules_bound = {}
    for source, imported, bound, line in _imports(name, path):
        full = f"{source}.{imported}" if imported else source
        if full in TREE:
            modules_bound[bound] = full
        elif source in TREE and imported and _private(imported) and not _allowed(name, source):
            borrowed.append(f"line {line}: {imported} from {source}")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules_bound
                and _private(node.attr) and not _allowed(name, modules_bound[node.value.id])):
            borrowed.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    assert borrowed == []


def _map_rows() -> dict[str, str]:
    """Every row of the package maps in ``docs/architecture.md``: module -> its job."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `((?:craft|explorer)(?:\.\w+)*)` \| (\S.*) \|$", text, flags=re.M))


@pytest.mark.parametrize("name", sorted(TREE))
def test_every_module_is_under_the_line_limit(name):
    """``explorer/services.py`` had 1,354 lines, ``craft/io.py`` 1,856, ``craft/_engine.py`` 1,476: their jobs are
    modules of their own now. A module left whole says why on its row of the map ("left whole")."""
    lines = len(TREE[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MOST_LINES or "left whole" in _map_rows().get(name, ""), f"{name} has {lines} lines"


def test_every_module_is_on_the_package_map():
    """``docs/architecture.md``'s package maps have a row for every module of craft/ and explorer/, naming its job."""
    rows = set(_map_rows())
    assert sorted(set(TREE) - rows) == []
    assert sorted(rows - set(TREE)) == []  # no row for a module that is gone


def test_every_package_of_the_tree_ships_in_the_wheel():
    """A folder of modules left out of ``[tool.setuptools] packages`` would be missing from the installed app."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    packages = {_module_name(path) for top in ("craft", "explorer") for path in (ROOT / top).rglob("__init__.py")}
    wheel_names = {f"craft_app.{name}" if name.split(".")[0] == "explorer" else name for name in packages}
    assert sorted(wheel_names - listed) == []


#: What ``from explorer.services import ...`` gave before the package was split (its ``__all__`` then); the
#: CLI (``craft app``), notebooks and tests import these from there.
PUBLIC_BEFORE = (
    "FitParams", "FitOutcome", "LoadedData", "EXAMPLES", "PRESETS", "EXAMPLE_ROWS", "suggested_k", "k_advice",
    "truth_agreement", "METHODS", "SWEEPABLE", "example_names", "load_example", "load_upload", "read_upload",
    "cells_as_written", "load_saved_model", "model_file", "Scoring", "score_rows", "scored_cells", "fit_schema",
    "column_report", "rho_from_share", "ESTIMATOR_DEFAULTS", "fit_craft", "labels_for_evaluation",
    "compare_methods", "sweep", "sweep_values", "distance_table",
)


def test_the_services_public_names_still_import_from_explorer_services():
    import explorer.services as services

    assert [name for name in PUBLIC_BEFORE if not hasattr(services, name)] == []
    assert set(PUBLIC_BEFORE) <= set(services.__all__)
    # Each is the one object of its new home, not a copy.
    for name in services.__all__:
        value = getattr(services, name)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith("explorer.services."):
            assert getattr(sys.modules[home], name) is value
