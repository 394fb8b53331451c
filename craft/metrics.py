"""External clustering criteria used in the paper: purity, NMI, and ARI.

The paper ("Evaluation Criteria For Real Datasets") scores a clustering
against known classes with *purity* (each cluster is assigned its most
frequent class; purity is the share of points whose class is that of their
cluster) and *normalised mutual information*, the mutual information divided
by the square root of the product of the two entropies (the *geometric*
normalisation, not scikit-learn's default arithmetic mean). The adjusted Rand
index is added because it is chance-corrected.

Class labels and cluster labels may be any hashable values (ints, strings,
...). Missing class labels are refused, never silently dropped.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score

from .exceptions import CraftInputError

__all__ = ["purity", "nmi", "ari", "contingency", "evaluate", "evaluate_counts", "align_clusters", "planted_agreement"]


def _as_series(values, name: str) -> pd.Series:
    """One labeling as a Series; refuses 2-D input."""
    if isinstance(values, pd.DataFrame) or (
        isinstance(values, np.ndarray) and values.ndim != 1
    ):
        raise CraftInputError(
            f"{name} must be one-dimensional; got an array of shape {np.shape(values)}."
        )
    if isinstance(values, (pd.Series, pd.Index, pd.Categorical, np.ndarray)):
        return pd.Series(values)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise CraftInputError(f"{name} must be a sequence of labels, not {type(values).__name__}.")
    return pd.Series(list(values), dtype=object)


def _codes(series: pd.Series, name: str) -> tuple[np.ndarray, pd.Index]:
    """Integer codes and the distinct values (sorted when they are sortable)."""
    n_missing = int(series.isna().sum())
    if n_missing:
        raise CraftInputError(
            f"{name} has {n_missing} missing value{'s' if n_missing != 1 else ''} "
            f"out of {len(series)}; drop or fill them before scoring."
        )
    try:
        try:
            codes, uniques = pd.factorize(series, sort=True)
        except TypeError:  # values of mutually unorderable types
            codes, uniques = pd.factorize(series, sort=False)
    except TypeError as error:  # unhashable values
        raise CraftInputError(f"{name} must hold hashable labels: {error}") from error
    return np.asarray(codes, dtype=np.intp), pd.Index(uniques)


def _prepare(y_true, labels) -> tuple[np.ndarray, np.ndarray, pd.Index, pd.Index]:
    """Validate the two labelings and return (class codes, cluster codes, uniques)."""
    true_series = _as_series(y_true, "y_true")
    label_series = _as_series(labels, "labels")
    n_true, n_labels = len(true_series), len(label_series)
    if n_true != n_labels:
        raise CraftInputError(
            f"y_true has {n_true} values but labels has {n_labels}; they must have the same length."
        )
    if n_true == 0:
        raise CraftInputError("y_true and labels are empty; at least one point is needed.")
    # A named Series is a table's label column: messages name it.
    name = getattr(y_true, "name", None)
    true_name = f"y_true (the label column {name!r})" if isinstance(name, str) and name else "y_true"
    class_codes, classes = _codes(true_series, true_name)
    cluster_codes, clusters = _codes(label_series, "labels")
    return class_codes, cluster_codes, classes, clusters


def _count_matrix(class_codes: np.ndarray, cluster_codes: np.ndarray,
                  n_classes: int, n_clusters: int) -> np.ndarray:
    """Clusters x classes count matrix (int64)."""
    flat = cluster_codes * n_classes + class_codes
    return np.bincount(flat, minlength=n_clusters * n_classes).reshape(n_clusters, n_classes)


def _entropy(counts: np.ndarray) -> float:
    """Shannon entropy (natural log) of the distribution given by ``counts``."""
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def contingency(y_true, labels) -> pd.DataFrame:
    """Counts of each class inside each cluster (a confusion matrix).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Known classes, any hashable values, no missing values.
    labels : array-like of shape (n_samples,)
        Cluster labels, any hashable values.

    Returns
    -------
    pandas.DataFrame
        Rows are clusters, columns are classes (both sorted when sortable),
        values are int64 counts; the total equals n_samples.

    Raises
    ------
    CraftInputError
        If the lengths differ, an input is empty or not 1-D, or a value is missing.

    Examples
    --------
    >>> contingency(["a", "a", "b"], [0, 1, 1]).to_numpy().tolist()
    [[1, 0], [1, 1]]
    """
    class_codes, cluster_codes, classes, clusters = _prepare(y_true, labels)
    counts = _count_matrix(class_codes, cluster_codes, len(classes), len(clusters))
    return pd.DataFrame(
        counts,
        index=pd.Index(clusters, name="cluster"),
        columns=pd.Index(classes, name="class"),
    )


def purity(y_true, labels) -> float:
    """Share of points whose class is the majority class of their cluster.

    Parameters
    ----------
    y_true, labels : array-like of shape (n_samples,)
        Classes and cluster labels (any hashable values).

    Returns
    -------
    float
        In (0, 1]; 1 when every cluster is pure.

    Examples
    --------
    >>> purity([0, 0, 1, 1, 1], ["x", "x", "x", "y", "y"])
    0.8
    """
    class_codes, cluster_codes, classes, clusters = _prepare(y_true, labels)
    counts = _count_matrix(class_codes, cluster_codes, len(classes), len(clusters))
    return float(counts.max(axis=1).sum() / counts.sum())


def nmi(y_true, labels) -> float:
    """Normalised mutual information with geometric normalisation.

    ``NMI = I(classes; clusters) / sqrt(H(classes) * H(clusters))`` with
    natural logarithms, as the paper defines it. It equals scikit-learn's
    ``normalized_mutual_info_score(y_true, labels, average_method="geometric")``.

    Degenerate case: when either partition has a single block its entropy is
    zero and the ratio is undefined. We return 1.0 when *both* are a single
    block (the partitions are then identical) and 0.0 otherwise (a single
    cluster, or a single class, carries no information about the other
    partition). The result is never NaN.

    Parameters
    ----------
    y_true, labels : array-like of shape (n_samples,)
        Classes and cluster labels (any hashable values).

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> nmi([0, 0, 1, 1], ["a", "a", "b", "b"])
    1.0
    """
    class_codes, cluster_codes, classes, clusters = _prepare(y_true, labels)
    counts = _count_matrix(class_codes, cluster_codes, len(classes), len(clusters))
    if len(classes) == 1 or len(clusters) == 1:
        return 1.0 if len(classes) == len(clusters) == 1 else 0.0
    h_true = _entropy(counts.sum(axis=0))
    h_pred = _entropy(counts.sum(axis=1))
    n = counts.sum()
    joint = counts / n
    outer = np.outer(joint.sum(axis=1), joint.sum(axis=0))
    nz = joint > 0
    mutual = float((joint[nz] * np.log(joint[nz] / outer[nz])).sum())
    value = max(mutual, 0.0) / math.sqrt(h_true * h_pred)
    return float(min(value, 1.0))


def ari(y_true, labels) -> float:
    """Adjusted Rand index (scikit-learn's ``adjusted_rand_score``).

    Parameters
    ----------
    y_true, labels : array-like of shape (n_samples,)
        Classes and cluster labels (any hashable values).

    Returns
    -------
    float
        In [-1, 1]; 1 for identical partitions, about 0 for random labels.

    Examples
    --------
    >>> ari([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    class_codes, cluster_codes, _, _ = _prepare(y_true, labels)
    return float(adjusted_rand_score(class_codes, cluster_codes))


def evaluate(y_true, labels) -> dict:
    """All criteria at once.

    Parameters
    ----------
    y_true, labels : array-like of shape (n_samples,)
        Classes and cluster labels (any hashable values).

    Returns
    -------
    dict
        ``{"purity": float, "nmi": float, "ari": float, "n_clusters": int}``.

    Examples
    --------
    >>> evaluate([0, 0, 1, 1], [5, 5, 7, 7])["n_clusters"]
    2
    """
    class_codes, cluster_codes, classes, clusters = _prepare(y_true, labels)
    return {
        "purity": purity(class_codes, cluster_codes),
        "nmi": nmi(class_codes, cluster_codes),
        "ari": ari(class_codes, cluster_codes),
        "n_clusters": int(len(clusters)),
    }


def align_clusters(reference, labels) -> np.ndarray:
    """Match the clusters of ``labels`` to those of ``reference`` by overlap.

    Parameters
    ----------
    reference, labels : array-like of int, shape (n_samples,)
        Two labellings of the same rows (clusters 0..K-1; -1, noise, is in
        no cluster and matches nothing).

    Returns
    -------
    ndarray of int, shape (n_clusters of labels,)
        For each cluster of ``labels``, the reference cluster it is matched to
        (Hungarian assignment maximising shared rows), or -1 when unmatched.

    Examples
    --------
    >>> align_clusters(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])).tolist()
    [1, 0]
    """
    reference = np.asarray(reference, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    k_ref, k_new = int(reference.max()) + 1, int(labels.max()) + 1
    overlap = np.zeros((k_new, k_ref), dtype=np.int64)
    both = (labels >= 0) & (reference >= 0)
    np.add.at(overlap, (labels[both], reference[both]), 1)
    rows, cols = linear_sum_assignment(-overlap)
    mapping = np.full(k_new, -1, dtype=np.int64)
    matched = overlap[rows, cols] > 0
    mapping[rows[matched]] = cols[matched]
    return mapping


def planted_agreement(true_labels, true_mask, labels, mask) -> dict:
    """How a fit agrees with planted clusters and subspaces.

    A planted cluster is *matched* when the fitted cluster paired with it
    (:func:`align_clusters`) holds more than half of its rows and more than
    half of its own rows come from it; its *mask is equal* when, in addition,
    the fitted cluster selects exactly the planted subspace.

    Parameters
    ----------
    true_labels : array-like of int, shape (n_samples,)
        Planted cluster of every row, 0..T-1.
    true_mask : array-like of bool, shape (T, n_features)
        Planted subspaces.
    labels : array-like of int, shape (n_samples,)
        Fitted clusters, 0..K-1; -1 (noise) is in no cluster, so a planted
        row labelled noise is a row its matched cluster lacks.
    mask : array-like of bool, shape (K, n_features)
        Fitted selection, the same feature columns as ``true_mask``.

    Returns
    -------
    dict
        ``n_planted``, ``n_found``, ``clusters_matched`` and ``masks_equal``
        (counts of planted clusters), ``ari``, ``exact`` (every planted
        cluster matched with an equal mask and no other cluster) and
        ``aligned_mask``: the fitted masks in planted order (rows of
        unmatched planted clusters all False).

    Examples
    --------
    >>> result = planted_agreement([0, 0, 1, 1], [[1, 0], [0, 1]], [1, 1, 0, 0], [[0, 1], [1, 0]])
    >>> result["clusters_matched"], result["masks_equal"], result["exact"]
    (2, 2, True)
    """
    true_labels = np.asarray(true_labels, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    true_mask = np.asarray(true_mask, dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    n_planted, n_found = true_mask.shape[0], mask.shape[0]
    if mask.shape[1] != true_mask.shape[1]:
        raise CraftInputError(f"mask has {mask.shape[1]} feature columns, true_mask {true_mask.shape[1]}.")
    overlap = np.zeros((n_found, n_planted), dtype=np.int64)
    clustered = labels >= 0
    np.add.at(overlap, (labels[clustered], true_labels[clustered]), 1)
    planted_sizes = np.bincount(true_labels, minlength=n_planted)
    match = align_clusters(true_labels, labels)
    aligned = np.zeros_like(true_mask)
    matched = equal = 0
    for k, t in enumerate(match):
        if t < 0 or 2 * overlap[k, t] <= planted_sizes[t] or 2 * overlap[k, t] <= overlap[k].sum():
            continue
        matched += 1
        aligned[t] = mask[k]
        equal += int((mask[k] == true_mask[t]).all())
    return {
        "n_planted": n_planted,
        "n_found": n_found,
        "clusters_matched": matched,
        "masks_equal": equal,
        "ari": float(adjusted_rand_score(true_labels, labels)),
        "exact": matched == equal == n_planted == n_found,
        "aligned_mask": aligned,
    }


def evaluate_counts(counts) -> dict:
    """:func:`evaluate` from a table of counts instead of the rows: for data that no one process holds.

    Purity, NMI and ARI depend on the rows only through the contingency
    table, so a table summed over the parts of a partitioned data set gives
    the scores of all its rows (``craft app`` on a Dask cluster sums one per
    part). ARI uses scikit-learn's pair-counting formula on exact integers,
    so it equals :func:`ari` on the rows.

    Parameters
    ----------
    counts : array-like of shape (n_clusters, n_classes)
        Non-negative integer counts of each class inside each cluster (a
        cluster or class that holds no row may be a zero row or column).

    Returns
    -------
    dict
        As :func:`evaluate`: ``purity``, ``nmi``, ``ari`` and ``n_clusters``
        (clusters that hold a row).

    Raises
    ------
    CraftInputError
        If ``counts`` is not a 2-D table of non-negative integers with at least one row counted.

    Examples
    --------
    >>> evaluate_counts([[2, 0], [0, 2]]) == evaluate([0, 0, 1, 1], [5, 5, 7, 7])
    True
    """
    table = np.asarray(counts)
    if table.ndim != 2 or table.size == 0 or not np.issubdtype(table.dtype, np.integer) or (table < 0).any():
        raise CraftInputError("counts must be a 2-D table of non-negative integers (clusters x classes).")
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0].astype(np.int64)
    if table.size == 0:
        raise CraftInputError("counts must count at least one row.")
    n_clusters, n_classes = table.shape
    n = int(table.sum())
    if n_classes == 1 or n_clusters == 1:
        nmi_value = 1.0 if n_classes == n_clusters == 1 else 0.0
    else:
        joint = table / n
        outer = np.outer(joint.sum(axis=1), joint.sum(axis=0))
        nz = joint > 0
        mutual = float((joint[nz] * np.log(joint[nz] / outer[nz])).sum())
        h_true, h_pred = _entropy(table.sum(axis=0)), _entropy(table.sum(axis=1))
        nmi_value = float(min(max(mutual, 0.0) / math.sqrt(h_true * h_pred), 1.0))
    # scikit-learn's pair confusion matrix from the contingency table, in Python integers (exact).
    sum_squares = int((table.astype(object) ** 2).sum())
    per_cluster, per_class = [int(v) for v in table.sum(axis=1)], [int(v) for v in table.sum(axis=0)]
    fp = sum(v * v for v in per_cluster) - sum_squares
    fn = sum(v * v for v in per_class) - sum_squares
    tp = sum_squares - n
    tn = n * n - fp - fn - sum_squares
    ari_value = 1.0 if fn == 0 and fp == 0 else float(2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn)))
    return {"purity": float(table.max(axis=1).sum() / n), "nmi": nmi_value, "ari": ari_value, "n_clusters": int(n_clusters)}
