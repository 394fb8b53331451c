"""Which k? :func:`k_evidence`: the cost, the stability and a silhouette on CRAFT's own distance
(:func:`cost_silhouette`) over a range of k, as evidence for the user's choice."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .._tables import as_table
from ..estimator import CRAFT
from ..exceptions import CraftInputError
from ._bootstrap import bootstrap_stability
from ._refits import _check_has_labels, _checked_count, _reporter, MAX_KS, Progress, ROWS_PER_K


def cost_silhouette(model: CRAFT, X) -> np.ndarray:
    """Every row's silhouette on CRAFT's own distance to clusters.

    ``a`` is the row's data cost to its own cluster, ``b`` its smallest data
    cost to another cluster, and ``s = (b - a) / max(a, b)`` (0 where both
    are 0), as Rousseeuw's silhouette with the distance to a cluster in
    place of the mean distance to its rows. The data cost is the distance
    d_nk of :meth:`craft.CRAFT.cost_terms` without its feature-control term
    ``|v_k| F_Delta``: that term is a constant of the cluster, negative for
    m > 0.5, and would make the "distance" negative; the other three terms
    are ≥ 0. A fit with one cluster has no other cluster: 0 for every row;
    a noise row (label -1, ``noise=True``) has no cluster of its own: 0.

    Returns
    -------
    ndarray of float, shape (n_samples,)
    """
    _check_has_labels(model, "cost_silhouette")
    terms = model.cost_terms(X)
    cost = terms.numeric + terms.categorical_selected + terms.categorical_global
    rows = np.arange(cost.shape[0])
    own = np.asarray(model.labels_)
    if own.shape[0] != cost.shape[0]:
        raise CraftInputError(f"X has {cost.shape[0]:,} rows but the model was fitted on {own.shape[0]:,}: pass the "
                              "table it was fitted on (a row's silhouette compares it with its own cluster).")
    if cost.shape[1] < 2:
        return np.zeros(cost.shape[0])
    clustered = own >= 0
    own = np.where(clustered, own, 0)
    a = cost[rows, own]
    other = cost.copy()
    other[rows, own] = np.inf
    b = other.min(axis=1)
    scale = np.maximum(a, b)
    return np.divide(b - a, scale, out=np.zeros_like(a), where=(scale > 0) & clustered)


def _checked_ks(ks) -> list[int]:
    """The distinct values of k, sorted: integers >= 1, at most :data:`MAX_KS` of them."""
    if hasattr(ks, "__len__") and not isinstance(ks, (str, bytes)) and len(ks) > 10 * MAX_KS:
        raise CraftInputError(_too_many_ks(len(ks)))  # a huge range is refused before it is read
    try:
        values = list(ks)
    except TypeError:
        raise CraftInputError(f"ks={ks!r} must be a sequence of integers (the values of k).") from None
    if not values or any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1
                         for k in values):
        raise CraftInputError(f"ks={values[:10]!r} must hold at least one k, each an integer at least 1.")
    distinct = sorted({int(k) for k in values})
    if len(distinct) > MAX_KS:
        raise CraftInputError(_too_many_ks(len(distinct)))
    return distinct


def _too_many_ks(n: int) -> str:
    return (f"ks holds {n:,} values of k; k_evidence takes at most {MAX_KS} (as a path's values): each k is a whole "
            "fit and n_resamples refits. Choose the values worth weighing, e.g. range(1, 21).")


def _shown_ks(ks: list[int]) -> str:
    return ", ".join(map(str, ks[:5])) + (f" and {len(ks) - 5} more" if len(ks) > 5 else "")


def k_evidence(model_params: dict, X, ks: Sequence[int], *, n_resamples: int = 10, random_state=None,
               callback: Progress | None = None) -> pd.DataFrame:
    """For each k, a fit with ``k`` and what speaks for or against it.

    Parameters
    ----------
    model_params : dict
        Parameters of :class:`craft.CRAFT` (``get_params()``); ``k`` is set
        to each value and ``lam`` dropped.
    X : DataFrame
    ks : sequence of int
        The values of k (each at least 1).
    n_resamples : int, default=10
        Bootstrap refits per k for the stability.
    random_state : int or None
        Seeds the fits and the resamples (the same for every k).
    callback : callable or None
        As in :func:`bootstrap_stability`.

    Returns
    -------
    DataFrame
        One row per k: ``k``, ``K`` (the fit's; the search may not reach k),
        ``lam``, ``data_cost`` (``objective_`` without the cost of the
        clusters ``(λ + D F0) K``, which differs with λ, so comparable across
        k; it falls as k grows, look for where it stops falling much),
        ``data_cost_per_row``, ``mean_jaccard`` and ``min_jaccard`` (over
        the clusters, :func:`bootstrap_stability`), ``unstable`` (clusters)
        and ``silhouette`` (the mean of :func:`cost_silhouette`).
    """
    ks = _checked_ks(ks)
    n_resamples = _checked_count(n_resamples, "n_resamples")
    table = as_table(X).reset_index(drop=True)
    too_many = [k for k in ks if k > 1 and len(table) < ROWS_PER_K * k]
    if too_many:
        largest = len(table) // ROWS_PER_K
        raise CraftInputError(
            f"Your table has {len(table):,} rows, too few to weigh k = {_shown_ks(too_many)}: each k is checked by "
            f"refitting it on bootstrap resamples of the rows, which repeat rows, and a resample needs at least k "
            f"different rows; that takes {ROWS_PER_K} rows per cluster. "
            + (f"Keep k <= {largest}." if largest >= 1 else "k_evidence needs a larger table.")
        )
    params = {**model_params, "lam": None, "history_labels": False}
    rows = []
    for position, k in enumerate(ks):
        share = position / len(ks)
        report = _reporter(callback, share, f"k = {k}: fitting")
        report()
        model = CRAFT(**{**params, "k": k, "random_state": random_state}).fit(table, callback=lambda record, report=report: report())

        def step(done: float, text: str, k=k, share=share):
            return None if callback is None else callback(share + done / len(ks), f"k = {k}: {text}")

        stability = bootstrap_stability(model, table, n_resamples=n_resamples, random_state=random_state, callback=step)
        terms = model.objective_terms_
        data_cost = float(model.objective_ - terms.regularization)
        rows.append(dict(k=k, K=int(model.n_clusters_), lam=float(model.lam_), data_cost=data_cost,
                         data_cost_per_row=data_cost / len(table), mean_jaccard=float(stability.mean_jaccard.mean()),
                         min_jaccard=float(stability.mean_jaccard.min()), unstable=int(stability.unstable.sum()),
                         silhouette=float(cost_silhouette(model, table).mean())))
    _reporter(callback, 1.0, "done")()
    return pd.DataFrame(rows)
