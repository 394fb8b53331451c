"""A card's rows: the cluster's paragons (lowest CRAFT cost to it) and border rows (another cluster nearest)."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ..exceptions import CraftInputError
from ._evidence import _feature_order


#: Why a model without its training labels (a Dask fit's, or one loaded from the file it wrote) cannot be carded.
_NO_LABELS = ("This model holds no labels of the rows it was fitted on (labels_ is None: a DaskCRAFT fit keeps them "
              "on its workers, and a model file it wrote does not hold them); {what} needs them to tell which rows "
              "are the cluster's. Fit the model in memory (craft.CRAFT) to have them.")


def _row_count(n, name: str) -> int:
    """How many rows a card shows: an integer >= 0 (a negative one would slice off rows from the end)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise CraftInputError(f"{name}={n!r} must be an integer >= 0: the number of rows to show.")
    return int(n)


def _check(model, X: pd.DataFrame, cluster: int) -> np.ndarray:
    """The fitted labels, after checking that ``X`` is the fitted table and ``cluster`` exists."""
    labels = getattr(model, "labels_", None)
    if getattr(model, "clusters_", None) is None:
        raise CraftInputError("The model is not fitted: fit it before asking for a cluster card.")
    if labels is None:
        raise CraftInputError(_NO_LABELS.format(what="a cluster card"))
    labels = np.asarray(labels)
    if not isinstance(X, pd.DataFrame):
        raise CraftInputError(f"X must be the table the model was fitted on, as a DataFrame; got {type(X).__name__}.")
    if len(X) != labels.shape[0]:
        raise CraftInputError(f"X has {len(X):,} rows; the fit had {labels.shape[0]:,}: pass the fitted table.")
    absent = [name for name in model.engine_features_ if name not in X.columns]
    if absent:
        raise CraftInputError(f"X lacks the fitted column(s) {absent[:5]}: pass the fitted table.")
    if not (isinstance(cluster, (int, np.integer)) and 0 <= int(cluster) < model.n_clusters_):
        raise CraftInputError(f"cluster={cluster!r} does not exist: the fit has clusters 0..{model.n_clusters_ - 1}.")
    return labels


def _cells(model, X: pd.DataFrame, cluster: int, rows: np.ndarray) -> pd.DataFrame:
    """The rows' original cells of the fitted features, the cluster's selected features first."""
    order = [*_feature_order(model, cluster, "numeric"), *_feature_order(model, cluster, "categorical")]
    selected = model.selection_.selected[cluster]
    names = [model.engine_features_[j] for j in order if selected[j]] + [model.engine_features_[j] for j in order
                                                                         if not selected[j]]
    cells = X.iloc[rows][names]
    cells.index.name = "row"
    return cells


def _beside(measures: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """``measures`` as the first columns of ``cells``; a measure named like a column of the table gets a suffix."""
    named = {}
    for name, values in measures.items():
        while name in cells.columns:
            name = f"{name} (card)"
        named[name] = values
    return pd.concat([pd.DataFrame(named, index=cells.index), cells], axis=1)


def paragons(model, X: pd.DataFrame, cluster: int, costs: np.ndarray, *, n: int = 5) -> pd.DataFrame:
    """The ``n`` members with the lowest CRAFT cost to the cluster, with their cells.

    Parameters
    ----------
    costs : ndarray of shape (n_rows, n_clusters)
        ``model.cost_terms(X).total``.

    Returns
    -------
    DataFrame
        Indexed by the rows' labels in ``X`` ("row"); ``cost`` (d_nk to the
        cluster), then the fitted features' cells (selected first). Ties go
        to the earlier row.
    """
    n = _row_count(n, "n")
    members = np.flatnonzero(np.asarray(model.labels_) == cluster)
    own = costs[members, cluster]
    order = np.lexsort((members, own))[:n]
    return _beside({"cost": own[order]}, _cells(model, X, cluster, members[order]))


def border_rows(model, X: pd.DataFrame, cluster: int, costs: np.ndarray, *, n: int = 5) -> pd.DataFrame:
    """The ``n`` members nearest to leaving: the smallest margin between another cluster's cost and theirs.

    Returns
    -------
    DataFrame
        Indexed by row label; ``cost`` (to this cluster), ``next_cluster``
        (the cheapest other cluster), ``next_cost`` and ``margin``
        (``next_cost - cost``), then the cells. Empty with one cluster.
    """
    n = _row_count(n, "n")
    members = np.flatnonzero(np.asarray(model.labels_) == cluster)
    if costs.shape[1] < 2:
        members = members[:0]
    own = costs[members, cluster]
    others = costs[members].copy()
    others[:, cluster] = np.inf
    nearest = others.argmin(axis=1) if members.size else np.zeros(0, dtype=np.int64)
    there = others[np.arange(members.size), nearest]
    order = np.lexsort((members, there - own))[:n]
    return _beside({"cost": own[order], "next_cluster": nearest[order].astype(np.int64), "next_cost": there[order],
                    "margin": (there - own)[order]}, _cells(model, X, cluster, members[order]))
