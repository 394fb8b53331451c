"""Warm starts: a fit that starts from the previous fit's partition, when it was fitted on the same table, and
``warm_refit``, the quick answer to "what if a parameter were different?"."""

from __future__ import annotations

import dataclasses
import warnings
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import clone

from . import _engine
from .encoding import Encoder
from .exceptions import CraftInputError

if TYPE_CHECKING:
    from .estimator import CRAFT


@dataclasses.dataclass
class _WarmStart:
    """What a warm fit starts from: the previous fit's statistics (its partition) and λ.

    ``used`` is set False by :meth:`CRAFT._fit_runs` when the warm search
    finds no λ giving k clusters and the fit runs cold instead.
    """

    statistics: _engine.Statistics
    lam: float
    used: bool = True


def _warm_start_from(model: CRAFT, encoder: Encoder, n_samples: int, columns) -> _WarmStart | None:
    """The previous fit of ``model`` to start from, when ``warm_start`` is on and it was fitted on this table.

    The same table means the same columns, rows and encoding (every
    scale, centre and level equal), so that the previous fit's
    statistics are sums over this table's encoded rows. Anything else
    refits cold, with a warning that says what differs.
    """
    if not model.warm_start or not hasattr(model, "statistics_"):
        return None
    previous: Encoder = model.encoder_
    previous_rows = int(round(float(model.statistics_.counts.sum()))) + int(model.n_noise_)
    differences = []
    if [str(c) for c in model.feature_names_in_] != [str(c) for c in columns]:
        differences.append("its columns")
    if previous_rows != n_samples:
        differences.append(f"its row count ({n_samples:,} rows; the previous fit had {previous_rows:,})")
    if not differences and not _same_encoding(previous, encoder):
        differences.append("its values (the encoding's scales, centres or levels)")
    if differences:
        warnings.warn(
            f"warm_start=True, but the table differs from the previous fit's in {' and '.join(differences)}: "
            "fitted cold, with every restart.",
            UserWarning,
            stacklevel=3,
        )
        return None
    return _WarmStart(statistics=model.statistics_, lam=float(model.lam_))


def _same_encoding(previous: Encoder, encoder: Encoder) -> bool:
    """Whether two fitted encoders encode rows the same way: same columns, settings, centres, scales and levels."""
    if (previous.numeric, previous.categorical, previous.standardize, previous.missing) != (
        encoder.numeric, encoder.categorical, encoder.standardize, encoder.missing
    ):
        return False
    tables = ("center_", "scale_", "impute_", "fitted_eta0_", "fitted_var_")
    return all(np.array_equal(getattr(previous, name), getattr(encoder, name)) for name in tables) and [
        list(levels) for levels in previous.levels_
    ] == [list(levels) for levels in encoder.levels_]


def warm_refit(model: CRAFT, X, **params) -> CRAFT:
    """A new model: ``model``'s parameters with ``params`` set, fitted warm on ``X``; ``model`` is left as it is.

    The quick answer to "what if m were 0.55?": one run from ``model``'s
    partition at the new parameters (``warm_start=True``, see
    :class:`CRAFT`), not the restarts. Deterministic, like every fit.
    Where ``X`` is not the table ``model`` was fitted on, the fit is cold
    and warns (``warm_started_`` is False).

    Parameters
    ----------
    model : CRAFT
        A fitted model (also a :class:`craft.distributed.DaskCRAFT`).
    X : table
        The table ``model`` was fitted on.
    **params
        Parameters to change, by their :meth:`set_params` names.

    Returns
    -------
    CRAFT
        The new fitted model, of ``model``'s class, with ``warm_start=True``.

    Examples
    --------
    >>> import pandas as pd
    >>> from craft import CRAFT, warm_refit
    >>> table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9],
    ...                       "colour": ["red", "red", "red", "blue", "blue", "blue"]})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(table)
    >>> refit = warm_refit(model, table, m=0.6)
    >>> refit.warm_started_, refit.m, model.m
    (True, 0.6, 0.5)
    """
    if not hasattr(model, "statistics_"):
        raise CraftInputError("warm_refit needs a fitted model: fit it first (a warm fit starts from its partition).")
    refit = clone(model).set_params(warm_start=True, **params)
    # The fitted attributes are read, never changed in place (a fit stores new objects), so sharing them is safe.
    refit.__dict__.update({name: value for name, value in vars(model).items() if name.endswith("_") and not name.startswith("_")})
    return refit.fit(X)
