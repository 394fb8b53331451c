"""The What-if page's computation: one parameter swept over a range of values and seeds, a fit for each."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from craft.exceptions import CraftInputError
from craft.priors import prior_terms
from craft.schema import Schema

from ._common import _scores
from .fitting import fit_craft
from .params import FitParams, rho_from_share
from .roles import fitted_table


#: Parameters a sweep can vary: name -> (display name, field of FitParams).
SWEEPABLE: dict[str, str] = {
    "m": "m (fraction of features per cluster)",
    "k": "k (number of clusters)",
    "lam": "λ (cost of a new cluster)",
    "rho": "ρ / m(1−m) (global ↔ cluster-specific)",
    "eps_c": "ε_c (approximate budget, categorical)",
    "eps_v": "ε_v (approximate budget, numeric)",
}


def sweep_values(param: str, low: float, high: float, steps: int) -> list:
    """Evenly spaced values of ``param`` between ``low`` and ``high`` (valid ones only).

    Integers for ``k``; geometric spacing for ``lam``. ``rho`` is swept as
    the share ``rho / (m(1-m))`` in (0, 1), so that every value is valid for
    every m; values outside a parameter's valid range are dropped.

    Raises
    ------
    CraftInputError
        If no value in the range is valid.
    """
    steps = max(1, int(steps))
    if param not in SWEEPABLE:
        raise CraftInputError(f"Cannot sweep {param!r}; choose one of {', '.join(SWEEPABLE)}.")
    low, high = (float(low), float(high)) if low <= high else (float(high), float(low))
    values: list[int] | list[float]
    if param == "k":
        values = sorted({int(round(v)) for v in np.linspace(max(1, low), max(1, high), steps)})
    elif param == "lam":
        if low <= 0:
            raise CraftInputError(f"λ must be above 0; the range starts at {low:g}.")
        values = [float(v) for v in np.geomspace(low, high, steps)]
    else:
        values = [float(v) for v in np.linspace(low, high, steps)]
    bounds = {"m": (0.0, 1.0), "rho": (0.0, 1.0), "eps_c": (0.0, 1.0), "eps_v": (0.0, math.inf)}
    if param in bounds:
        lo, hi = bounds[param]
        values = [v for v in values if lo < v < hi]
        if not values:
            raise CraftInputError(
                f"No value of {param} in [{low:g}, {high:g}] lies inside its valid range ({lo:g}, {hi:.4g})."
            )
    return values


def swept(params: FitParams, param: str, value) -> FitParams:
    """``params`` with ``param`` set to ``value`` as a sweep sets it (``rho`` as a share of m(1-m); at an ``m``
    where the ρ given is invalid, the paper's default ρ)."""
    if param == "k":
        return params.replace(size_by="k", k=int(value))
    if param == "lam":
        return params.replace(size_by="lambda", lam=float(value))
    if param in ("eps_c", "eps_v"):
        return params.replace(budget="approximate", **{param: float(value)})
    if param == "rho":
        return params.replace(rho=rho_from_share(params.m, value))
    if param == "m" and params.rho is not None and not _rho_is_valid(float(value), params.rho):
        return params.replace(m=float(value), rho=None)
    return params.replace(**{param: float(value)})


def _rho_is_valid(m: float, rho: float) -> bool:
    """Whether ``rho`` is a valid prior variance at ``m``, by the one check of its range."""
    try:
        prior_terms(m, rho)
    except CraftInputError:
        return False
    return True


def sweep(
    table: pd.DataFrame,
    schema: Schema,
    params: FitParams,
    param: str,
    values: Sequence,
    *,
    seeds: Sequence[int] = (0,),
    y=None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Fit once per (value, seed) and collect K, objective, λ and scores.

    Returns
    -------
    DataFrame
        Columns ``value, seed, K, objective, lam, purity, nmi, ari, seconds,
        note``. With ``param="m"`` and a ρ that becomes invalid, the paper's
        default ρ is used for that m (said in ``note``).
    """
    X, used = fitted_table(table, schema)
    rows = []
    total = max(1, len(values) * len(seeds))
    done = 0
    for value in values:
        for seed in seeds:
            if progress is not None:
                progress(done / total, f"{param} = {value:g}, seed {seed}")
            done += 1
            current = swept(params, param, value).replace(seed=int(seed))
            note = "paper's default ρ for this m" if param == "m" and current.rho is None and params.rho is not None else ""
            outcome = fit_craft(X, used, current)
            if outcome.model is None:
                rows.append(dict(value=value, seed=seed, K=np.nan, objective=np.nan, lam=np.nan, purity=np.nan,
                                 nmi=np.nan, ari=np.nan, seconds=outcome.seconds, note=outcome.error))
                continue
            model = outcome.model
            row = dict(value=value, seed=seed, K=model.n_clusters_, objective=model.objective_, lam=model.lam_,
                       seconds=outcome.seconds, note=note)
            row.update(_scores(y, model.labels_))
            rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return pd.DataFrame(rows, columns=["value", "seed", "K", "objective", "lam", "purity", "nmi", "ari", "seconds", "note"])
