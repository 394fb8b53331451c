"""New rows against a fitted model's clusters: where each goes, how sure that is, which of its cells were never
seen in fit (``assignment_frame``, both backends), and each feature's part of its cost and margin
(``Explanation``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from . import _engine
from .encoding import EncodedData


@dataclasses.dataclass(frozen=True)
class Explanation:
    """:meth:`CRAFT.explain`'s answer: each feature's part of every row's cost and margin.

    Attributes
    ----------
    cluster : ndarray of int64, shape (n_rows,)
        The row's nearest cluster.
    runner_up : ndarray of int64, shape (n_rows,)
        Its next-nearest cluster (-1 when the model has one cluster).
    cost : DataFrame, shape (n_rows, n_used_features)
        Each feature's part of the row's distance to ``cluster``; a row sums
        to ``assign``'s ``cost``.
    margin : DataFrame, shape (n_rows, n_used_features)
        Each feature's part of (distance to ``runner_up``) - (distance to
        ``cluster``); a row sums to ``assign``'s ``margin``.
    """

    cluster: np.ndarray
    runner_up: np.ndarray
    cost: pd.DataFrame
    margin: pd.DataFrame


def assignment_frame(data: EncodedData, clusters: _engine.Clusters, options: _engine.Options, index,
                     categorical=()) -> pd.DataFrame:
    """``CRAFT.assign``'s table for encoded rows: cluster, cost, margin, fits_no_cluster and the unknown cells.

    Both backends call it (``DaskCRAFT`` once per partition). The cluster and
    its cost are the compiled pass's (:func:`_engine.nearest_cluster`, what
    ``predict`` returns), the opening test is the pass's own
    (:func:`_engine.opening_candidates` at ``options.threshold``). The
    next-nearest distance is the same kernel's over the other clusters, run
    once per cluster on the rows it took (:func:`_engine.runner_up`). A
    row's distance to a cluster does not depend on which other clusters are
    present, so the margin is never negative. A model fitted with ``noise=True`` labels the
    rows that fit no cluster -1, as ``predict`` does; their cost and margin
    are still those of their nearest cluster. A row with no cell the clusters
    can judge (``nothing_known``: every cell missing or a level never seen in
    fit, :meth:`EncodedData.known_cells`) costs the same in every cluster:
    its margin is NaN and it fits no cluster, whatever its cost; its
    ``cluster`` stays ``predict``'s. ``categorical`` names the columns of
    ``data.codes`` for ``unseen_columns``.
    """
    best, labels = _engine.nearest_cluster(data, clusters, options.terms)
    unseen_frame = unseen_columns(data, categorical)
    nothing_known = data.known_cells() == 0
    opening = np.zeros(data.n_samples, dtype=bool)
    opening[_engine.opening_candidates(data, best, options.threshold(data.n_features))] = True
    second, _ = _engine.runner_up(data, clusters, options.terms, labels)
    margin = second - best
    cluster = np.where(opening, -1, labels) if options.noise else labels
    # A row with no cell the clusters can judge costs the same in every cluster: no margin, and it fits none.
    margin[nothing_known] = np.nan
    return pd.DataFrame(
        {"cluster": cluster.astype(np.int64), "cost": best, "margin": margin,
         "fits_no_cluster": opening | nothing_known, "nothing_known": nothing_known, **unseen_frame}, index=index
    )


def unseen_columns(data: EncodedData, categorical) -> dict:
    """Per row, the cells holding values never seen in fit: their number and their columns (comma-separated).

    ``categorical`` names the encoder's categorical columns, in code order.
    """
    unseen = data.unseen if data.unseen is not None else np.zeros(data.codes.shape, dtype=bool)
    names = np.asarray([str(c) for c in categorical], dtype=object)
    listed = np.full(data.n_samples, "", dtype=object)
    for row in np.flatnonzero(unseen.any(axis=1)):
        listed[row] = ", ".join(names[unseen[row]])
    return {"unseen_cells": unseen.sum(axis=1).astype(np.int64), "unseen_columns": listed}


def _explanation(data: EncodedData, clusters: _engine.Clusters, terms, engine_features: list, feature_names,
                 index) -> Explanation:
    """:meth:`CRAFT.explain`'s answer for encoded rows: ``engine_features`` are the clusters' features, in the
    engine's order; the frames' columns are those of ``feature_names`` (the table's order) that are used."""
    _, labels = _engine.nearest_cluster(data, clusters, terms)
    _, second = _engine.runner_up(data, clusters, terms, labels)
    cost = _engine.feature_costs(data, clusters, terms, labels)
    if clusters.n_clusters > 1:
        margin = _engine.feature_costs(data, clusters, terms, second) - cost
    else:
        margin = np.zeros_like(cost)
    # As in assign: a row with no cell the clusters can judge has no margin.
    margin[data.known_cells() == 0] = np.nan
    used = set(engine_features)
    columns = [str(name) for name in feature_names if str(name) in used]
    order = [engine_features.index(name) for name in columns]
    return Explanation(
        cluster=labels.astype(np.int64),
        runner_up=second,
        cost=pd.DataFrame(cost[:, order], index=index, columns=columns),
        margin=pd.DataFrame(margin[:, order], index=index, columns=columns),
    )
