"""One way to turn a ``random_state`` into a NumPy generator."""

from __future__ import annotations

import numpy as np

from .exceptions import CraftInputError


def as_generator(random_state) -> np.random.Generator:
    """``numpy.random.default_rng(random_state)`` with the library's error type.

    A legacy ``RandomState`` is accepted too: it seeds a new generator, so
    scikit-learn style callers keep working.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as error:
        raise CraftInputError(
            f"random_state={random_state!r} must be None, a non-negative int or a "
            f"numpy.random.Generator: {error}"
        ) from error
