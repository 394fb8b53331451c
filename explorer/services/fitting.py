"""One CRAFT fit of the app, with the problems a user can act on turned into messages (:class:`FitOutcome`),
and what the app reads from a fit: its columns, and one row's distance to every cluster, term by term (Teach).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from craft import profiles, warm_up
from craft.estimator import CRAFT, NOISE_WARN_SHARE, noise_share_note
from craft.exceptions import CraftInputError
from craft.schema import Schema

from ._common import _sentence
from .params import FitParams
from .roles import fitted_table

#: Most rows for which the app's fit keeps every iteration's labels (``history_labels``), so that Teach can show
#: each iteration's assignments and distances: 4 bytes a row an iteration, in every fit the app caches.
TEACH_ROWS = 200_000


@dataclass
class FitOutcome:
    """Result of :func:`fit_craft`: a fitted model or a message.

    Attributes
    ----------
    model : CRAFT or None
        The fitted estimator; its ``history_`` keeps every iteration's
        labels up to :data:`TEACH_ROWS` rows (what Teach shows).
    error : str or None
        What went wrong and what to do, when there is no model.
    notes : list of str
        Things the user should know (k not reachable, not converged...).
    seconds : float
        Wall time of the fit.
    """

    model: CRAFT | None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def fit_craft(table: pd.DataFrame, schema: Schema, params: FitParams, callback: Callable | None = None) -> FitOutcome:
    """Fit CRAFT on the used columns of ``table``.

    Invalid parameters and data come back as :attr:`FitOutcome.error`
    (a :class:`CraftInputError`'s message); nothing else is caught.

    Parameters
    ----------
    table : DataFrame
    schema : Schema
        Roles of the columns (from :func:`fit_schema`).
    params : FitParams
    callback : callable or None
        Passed to :meth:`craft.CRAFT.fit` (progress); the model does not keep it.

    Returns
    -------
    FitOutcome
    """
    X, used_schema = fitted_table(table, schema)
    if params.size_by == "k" and params.k > len(X):
        return FitOutcome(
            None, error=f"k = {params.k} clusters cannot be found in {len(X)} rows: choose k ≤ {len(X)}."
        )
    model = CRAFT(categorical=used_schema, history_labels=len(X) <= TEACH_ROWS, **params.estimator_kwargs())
    # Compilation (or loading compiled code) is not the fit's time: do it first, once per process.
    warm_up()
    start = time.perf_counter()
    try:
        model.fit(X, callback=callback)
    except CraftInputError as error:
        return FitOutcome(None, error=_sentence(str(error)))
    seconds = time.perf_counter() - start
    notes = []
    if params.size_by == "k" and model.n_clusters_ != params.k:
        notes.append(
            f"k = {params.k} clusters were not reached ({'exact-k search' if params.k_method == 'search' else 'farthest-first'}): "
            f"the fit has K = {model.n_clusters_} with λ = {model.lam_:.4g}."
            + (" Try the exact-k search." if params.k_method == "farthest_first" else " Try another seed or m.")
        )
    if not model.converged_:
        notes.append(f"The fit did not converge in max_iter = {params.max_iter} passes; raise max iterations.")
    if model.n_imputed_:
        total = sum(model.n_imputed_.values())
        notes.append(f"{total} missing numeric cell(s) were filled with their column mean.")
    if model.n_marginalised_:
        total = sum(model.n_marginalised_.values())
        notes.append(f"{total:,} missing cell(s) in {len(model.n_marginalised_)} column(s) were left out of the fit "
                     "(marginalised: no cost to their row, no part in their cluster's statistics).")
    featureless = profiles.featureless_note(model)
    if featureless:
        notes.append(featureless)
    n_rows = len(model.labels_)
    if model.n_noise_ > NOISE_WARN_SHARE * n_rows:  # the library's own note, also its warning
        notes.append(noise_share_note(model.n_noise_, n_rows, int(model.cluster_sizes_.min())))
    return FitOutcome(model, notes=notes, seconds=seconds)


def fitted_X(model: CRAFT, table: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``table`` that ``model`` was fitted on, in its order."""
    return table[[str(c) for c in model.feature_names_in_]]


# ---------------------------------------------------------------------------
# Teach: the fit's own inspection surface, as tables


def distance_table(model: CRAFT, data, state, row: int) -> pd.DataFrame:
    """The distance d_nk of one row to every cluster of ``state``, term by term.

    Parameters
    ----------
    model : CRAFT
    data : EncodedData
        ``model.encoder_.transform`` of the fitted columns (encoded once by the caller).
    state : craft.Inspection
        From ``model.inspect_iteration`` (the clusters after one iteration).
    row : int

    Returns
    -------
    DataFrame
        One row per cluster: the terms of :meth:`craft.CRAFT.cost_terms`
        (``numeric``, ``categorical_selected``, ``categorical_global``,
        ``feature_control``), their sum ``total`` and ``n_selected``.

    Raises
    ------
    CraftInputError
        For a row outside the table.
    """
    if not 0 <= row < data.n_samples:
        raise CraftInputError(f"row={row} must lie in 0..{data.n_samples - 1}.")
    terms = model.cost_terms(data.take(np.array([row])), state=state)
    return pd.DataFrame(dict(
        cluster=np.arange(state.clusters.n_clusters), numeric=terms.numeric[0],
        categorical_selected=terms.categorical_selected[0], categorical_global=terms.categorical_global[0],
        feature_control=terms.feature_control[0], total=terms.total[0],
        n_selected=state.selection.selected.sum(axis=1).astype(int),
    ))
