"""Every docstring example of the library and of the app's helpers runs, and says what it returns."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import craft
import explorer

# Every module, those inside craft's subpackages (craft.io._read, ...) included.
MODULES = sorted(info.name for package in (craft, explorer)
                 for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."))
# Modules whose docstrings hold examples: a module that loses all of them fails here.
WITH_EXAMPLES = {"craft", "craft.baselines", "craft.datasets", "craft.estimator", "craft.export", "craft.io",
                 "craft.metrics", "craft.persist", "craft.plots._style", "craft.plots.compare", "craft.plots.fit",
                 "craft.plots.heatmap", "craft.plots.masks", "craft.priors", "craft.profiles", "craft.schema", "craft.synthetic",
                 "explorer.services.loading", "explorer.services.params", "explorer.services.roles",
                 "explorer.services.scoring"}


@pytest.mark.parametrize("name", ["craft", *MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0


def test_readme_examples(tmp_path, monkeypatch):
    """The README's notebook walk-through runs (it saves a model file, here in a temporary folder)."""
    monkeypatch.chdir(tmp_path)
    readme = Path(__file__).resolve().parents[2] / "README.md"
    result = doctest.testfile(str(readme), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} README examples failed (see above)"
    assert result.attempted > 0
