"""Optional dependencies: one message for every missing extra.

The core install (numpy, pandas, scipy, scikit-learn, numba) runs the engine.
Figures, file readers, the Dask backend, the command line's progress bar and
the comparison baselines need extras; a missing one is an installation
problem, not bad input, so it raises :class:`ImportError` (never
``CraftInputError``) naming the extra that brings it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

PACKAGE = "craft-explorer"


class MissingExtraError(ImportError):
    """An optional package is not installed; the message names the extra that brings it."""


def missing(package: str, *, extra: str, needed_for: str) -> MissingExtraError:
    """The error to raise when ``package`` is not installed.

    Parameters
    ----------
    package : str
        The distribution that is missing, as ``pip`` names it.
    extra : str
        The extra of craft-explorer that installs it.
    needed_for : str
        What needs it, e.g. ``"craft.plots"`` or ``"craft fit --progress"``.

    Examples
    --------
    >>> str(missing("plotly", extra="plots", needed_for="craft.plots"))
    "craft.plots needs the optional package plotly: pip install 'craft-explorer[plots]'"
    """
    return MissingExtraError(f"{needed_for} needs the optional package {package}: pip install '{PACKAGE}[{extra}]'")


def require(module: str, *, package: str | None = None, extra: str, needed_for: str) -> ModuleType:
    """Import ``module``, or raise :func:`missing`'s ImportError.

    Examples
    --------
    >>> require("plotly.graph_objects", package="plotly", extra="plots", needed_for="craft.plots").__name__
    'plotly.graph_objects'
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise missing(package or module.split(".")[0], extra=extra, needed_for=needed_for) from error
