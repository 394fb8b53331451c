"""Compiling the engine's kernels before a first fit, so that the fit times its own work."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from . import _kernels

_WARM = False


def warm_up() -> None:
    """Compile every kernel of a fit, or load it from numba's disk cache; once per process.

    A first fit then times its own work: without this, its first call of
    each kernel also pays the compilation (seconds) or the cache load. The
    pass, the sums and the encoder's kernels run on tiny arrays of the
    layouts they are handed (:func:`craft._kernels.warm_up`); the update
    (:mod:`craft._update`) runs in a tiny fit, which hands it exactly the
    types a fit does.
    """
    global _WARM
    if _WARM:
        return
    _kernels.warm_up()
    from .estimator import CRAFT  # the estimator imports the engine, which this module sits beside

    table = pd.DataFrame({"number": [0.0, 1.0, np.nan, 3.0, 4.0, 5.0], "level": ["a", "b", "a", "b", "a", "b"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CRAFT(m=0.5, k=2, n_init=1, random_state=0).fit(table)
    _WARM = True
