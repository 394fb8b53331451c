"""Every docstring example of the library and of the app's helpers runs, and says what it returns."""

import doctest
import importlib
import pkgutil

import pytest

import craft
import explorer

MODULES = sorted(f"{package.__name__}.{info.name}" for package in (craft, explorer)
                 for info in pkgutil.iter_modules(package.__path__))
# Modules whose docstrings hold examples: a module that loses all of them fails here.
WITH_EXAMPLES = {"craft", "craft.baselines", "craft.datasets", "craft.estimator", "craft.export", "craft.io",
                 "craft.metrics", "craft.plots", "craft.priors", "craft.profiles", "craft.schema", "craft.synthetic",
                 "explorer.services"}


@pytest.mark.parametrize("name", ["craft", *MODULES])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0
