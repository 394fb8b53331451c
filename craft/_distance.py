"""The paper's distance d_nk between rows and clusters: term by term (:func:`cost_terms`), as the compiled
pass's smallest distance and its cluster (:func:`nearest_cluster`), the runner-up, and feature by feature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels
from ._engine_types import Clusters
from .encoding import EncodedData
from .priors import PriorTerms


@dataclass(frozen=True)
class CostTerms:
    """The paper's distance d_nk split into its terms, each of shape (N, K).

    Attributes
    ----------
    numeric : ndarray
        ``sum_{d in Num} v_kd (x_nd - zeta_kd)^2 / (2 sigma_kd^2)``.
    categorical_selected : ndarray
        ``sum_{d in Cat} v_kd (-log eta_kd(x_nd))``: features the cluster selects.
    categorical_global : ndarray
        ``sum_{d in Cat} (1 - v_kd) (-log eta_0d(x_nd))``: the others, coded globally.
    feature_control : ndarray
        ``|v_k| F_Delta``, the same for every row of a cluster.
    """

    numeric: np.ndarray
    categorical_selected: np.ndarray
    categorical_global: np.ndarray
    feature_control: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """d_nk: the sum of the terms (what the pass takes the argmin of)."""
        return self.numeric + self.categorical_selected + self.categorical_global + self.feature_control


def cost_terms(data: EncodedData, clusters: Clusters, terms: PriorTerms) -> CostTerms:
    """The paper's distance d_nk for every point and cluster, term by term.

    Numeric part by the expanded weighted square (matrix products, no N x K x
    P temporary); categorical parts as one-hot codes times the per-cluster
    tables of ``-log eta`` (selected) and ``-log eta_0`` (not selected). The
    compiled pass (:func:`nearest_cluster`) computes the same total.
    """
    shape = (data.n_samples, clusters.n_clusters)
    numeric = np.zeros(shape)
    if data.n_numeric:
        w = half_precision(clusters, data.n_numeric)
        wz = w * clusters.means
        if data.observed is None:
            numeric += data.numeric_sq @ w.T
            numeric -= 2.0 * (data.numeric @ wz.T)
            numeric += (wz * clusters.means).sum(axis=1)
        else:
            # Each row sums its observed cells only: the mask zeroes the rest of every product.
            observed = data.observed.astype(np.float64)
            numeric += (data.numeric_sq * observed) @ w.T
            numeric -= 2.0 * ((data.numeric * observed) @ wz.T)
            numeric += observed @ (wz * clusters.means).T
    selected, global_ = np.zeros(shape), np.zeros(shape)
    if data.n_categorical:
        onehot = data.onehot()
        own, pooled = categorical_tables(data, clusters)
        selected += onehot @ own.T
        global_ += onehot @ pooled.T
    control = np.broadcast_to(clusters.weights.sum(axis=1) * terms.f_delta, shape)
    return CostTerms(numeric, selected, global_, control)


def cost_matrix(data: EncodedData, clusters: Clusters, terms: PriorTerms) -> np.ndarray:
    """The paper's distance d_nk for every point and cluster, shape (N, K)."""
    return cost_terms(data, clusters, terms).total


def categorical_tables(data: EncodedData, clusters: Clusters) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster cost of each level, (K, T) each: through the cluster's own
    distribution where the feature is selected, through the global one where not."""
    level_weight = np.repeat(clusters.weights[:, data.n_numeric :], data.n_levels, axis=1)
    return level_weight * (-clusters.log_eta), (1.0 - level_weight) * (-data.log_eta0)


def categorical_table(data: EncodedData, clusters: Clusters) -> np.ndarray:
    """Per-cluster cost of each level, shape (K, T): the sum of :func:`categorical_tables`."""
    own, pooled = categorical_tables(data, clusters)
    return own + pooled


def nearest_cluster(
    data: EncodedData,
    clusters: Clusters,
    terms: PriorTerms,
    *,
    rows: np.ndarray | None = None,
    start_row: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Smallest distance d_nk over the clusters, and its k, for every row.

    The same distance as :func:`cost_matrix`, computed by the compiled
    kernel without an (N, K) matrix. ``start_row[k]`` restricts cluster k to
    the rows after it (clusters opened during a pass).
    """
    if start_row is None:
        start_row = np.full(clusters.n_clusters, -1, dtype=np.int64)
    return _kernels.nearest(
        *data.columns,
        data.offsets,
        rows,
        clusters.means,
        half_precision(clusters, data.n_numeric),
        categorical_table(data, clusters),
        clusters.weights.sum(axis=1) * terms.f_delta,
        start_row,
    )


def runner_up(data: EncodedData, clusters: Clusters, terms: PriorTerms, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row's distance to its next-nearest cluster, and that cluster, given its nearest (``labels``).

    The compiled pass (:func:`nearest_cluster`) over the other clusters, run
    once per cluster on the rows it took: K passes over N/K rows on average,
    one pass's work, with no rows x clusters matrix. A row's distance to a
    cluster does not depend on which other clusters are present, so it is
    never below the nearest one. With one cluster there is no runner-up: the
    distance is the nearest one's again and the cluster -1.
    """
    second = np.empty(data.n_samples)
    second_label = np.full(data.n_samples, -1, dtype=np.int64)
    if clusters.n_clusters < 2:
        second[:] = nearest_cluster(data, clusters, terms)[0] if clusters.n_clusters else np.inf
        return second, second_label
    for k in range(clusters.n_clusters):
        rows = np.flatnonzero(labels == k)
        others = np.flatnonzero(np.arange(clusters.n_clusters) != k)
        rest = Clusters(clusters.means[others], clusters.variances[others], clusters.log_eta[others], clusters.weights[others])
        cost, arg = nearest_cluster(data, rest, terms, rows=rows)
        second[rows] = cost
        second_label[rows] = others[arg]
    return second, second_label


def feature_costs(data: EncodedData, clusters: Clusters, terms: PriorTerms, labels: np.ndarray) -> np.ndarray:
    """Each row's distance to cluster ``labels[n]``, feature by feature: (N, D), engine order; rows sum to d_nk.

    d_nk is a sum over features once the feature-control term ``|v_k|
    F_Delta`` is spread over the features it counts, ``F_Delta`` to each
    selected one: a numeric feature adds ``v_kd ((x_nd - zeta_kd)^2 / (2
    sigma_kd^2) + F_Delta)``, a categorical one ``v_kd (-log eta_kd(x_nd) +
    F_Delta) + (1 - v_kd)(-log eta_0d(x_nd))``; a missing (or unseen)
    cell adds only its ``v_kd F_Delta``. So the split is exact, no
    approximation: the same terms as :func:`cost_terms`, per feature.
    """
    weights = clusters.weights[labels]
    out = weights * terms.f_delta
    n_numeric = data.n_numeric
    if n_numeric:
        deviation = data.numeric - clusters.means[labels]
        squared = deviation * deviation * half_precision(clusters, n_numeric)[labels]
        if data.observed is not None:
            squared = np.where(data.observed, squared, 0.0)
        out[:, :n_numeric] += squared
    if data.n_categorical:
        table = categorical_table(data, clusters)
        seen = data.codes >= 0
        columns = data.offsets[None, :] + np.where(seen, data.codes, 0)
        out[:, n_numeric:] += np.where(seen, table[labels[:, None], columns], 0.0)
    return out


def half_precision(clusters: Clusters, n_numeric: int) -> np.ndarray:
    """``v_kd / (2 sigma_kd^2)``: the weight of a squared numeric deviation."""
    return clusters.weights[:, :n_numeric] * (1.0 / (2.0 * clusters.variances))
