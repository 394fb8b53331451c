"""Cluster numbers that follow the clusters from one view to the next.

A fit numbers its clusters in the order its run opened them, so two fits of
the same table at nearby settings may call the same group of rows "cluster 0"
and "cluster 2". A person tuning a slider follows clusters by their number and
colour; this module renumbers a new fit so that each of its clusters takes the
number of the previous view's cluster it shares most rows with.

The choice (also in ``docs/numerics.md``, "Cluster numbers between views"):

* **What is matched.** The new fit's clusters to the previous view's, by the
  rows they share (a row labelled -1, noise, in either view counts in no
  cluster). The assignment maximises the total number of rows that keep their
  number, which is the Hungarian method on the overlap table
  (:func:`scipy.optimize.linear_sum_assignment`), so no other renumbering keeps
  more rows on their colour.
* **Numbers stay 0..K-1.** A fitted model's arrays are indexed by cluster
  (``feature_mask_``, ``statistics_``, a saved model's labels), so a new view
  with K clusters uses the numbers 0..K-1. A matched cluster keeps its number
  when it is below K; a cluster that vanished frees its number, which a new
  cluster (or one whose number is K or above) takes; with more clusters than
  before, the new ones take the numbers K_previous.. (colours not used in the
  previous view). Within this constraint the assignment is still the one that
  keeps the most rows on their number.
* **Ties.** Among renumberings that keep the same number of rows, the one
  that leaves the most clusters on their own fitted number is taken (then
  :func:`~scipy.optimize.linear_sum_assignment`'s own, deterministic, order),
  so a fit whose clusters already follow the previous view is left as it is.

:func:`match_clusters` computes the renumbering, :func:`relabel` applies it to
labels, :func:`relabel_model` to a fitted :class:`~craft.CRAFT` (every
per-cluster fitted attribute at once, so every view of the copy agrees), and
:func:`changed_share` measures how many rows changed number between two views.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from scipy.optimize import linear_sum_assignment

from .exceptions import CraftInputError

__all__ = ["changed_share", "check_permutation", "match_clusters", "overlap_table", "relabel", "relabel_model"]


def _labels(values, name: str) -> np.ndarray:
    labels = np.asarray(values)
    if labels.ndim != 1:
        raise CraftInputError(f"{name} must be one label per row (a 1-D array); got shape {labels.shape}.")
    if labels.size and not np.issubdtype(labels.dtype, np.integer):
        raise CraftInputError(f"{name} must hold integer cluster numbers (-1 for noise); got dtype {labels.dtype}.")
    if labels.size and labels.min() < -1:
        raise CraftInputError(f"{name} holds {int(labels.min())}: cluster numbers are 0.. and -1 (noise).")
    return labels.astype(np.int64, copy=False)


def overlap_table(current, previous, n_current: int | None = None, n_previous: int | None = None) -> np.ndarray:
    """Rows shared by each cluster of ``current`` (rows of the table) and of ``previous`` (columns).

    Parameters
    ----------
    current, previous : array-like of int, shape (n_samples,)
        Two labellings of the same rows; -1 (noise) counts in no cluster.
    n_current, n_previous : int, optional
        The number of clusters of each (default: the largest label + 1), so
        that an empty cluster still has its row or column.

    Returns
    -------
    ndarray of int64, shape (n_current, n_previous)
    """
    current = _labels(current, "current")
    previous = _labels(previous, "previous")
    if current.shape != previous.shape:
        raise CraftInputError(
            f"the two views label {current.size} and {previous.size} rows: clusters can be matched only "
            "between views of the same table."
        )
    k_cur = int(current.max(initial=-1)) + 1 if n_current is None else int(n_current)
    k_prev = int(previous.max(initial=-1)) + 1 if n_previous is None else int(n_previous)
    if current.size and current.max() >= k_cur or previous.size and previous.max() >= k_prev:
        raise CraftInputError("a label is not below the number of clusters given for its view.")
    both = (current >= 0) & (previous >= 0)
    table = np.zeros((k_cur, k_prev), dtype=np.int64)
    np.add.at(table, (current[both], previous[both]), 1)
    return table


def match_clusters(current, previous, n_current: int | None = None, n_previous: int | None = None) -> np.ndarray:
    """The number each cluster of ``current`` takes so that the most rows keep their ``previous`` number.

    Parameters
    ----------
    current : array-like of int, shape (n_samples,)
        The new view's labels (0..K-1, -1 for noise).
    previous : array-like of int, shape (n_samples,)
        The labels the previous view showed for the same rows.
    n_current, n_previous : int, optional
        Numbers of clusters (default: the largest label + 1 of each).

    Returns
    -------
    ndarray of int64, shape (n_current,)
        ``perm[j]`` is the number cluster ``j`` of ``current`` is shown as:
        a permutation of ``0..n_current-1`` (see the module docstring for
        the rule). ``relabel(current, perm)`` are the labels to show.

    Examples
    --------
    >>> match_clusters([1, 1, 0, 0, 2], [0, 0, 1, 1, 1]).tolist()
    [1, 0, 2]
    """
    table = overlap_table(current, previous, n_current, n_previous)
    k_cur, k_prev = table.shape
    if k_cur == 0:
        return np.zeros(0, dtype=np.int64)
    # Slot s < K_previous is the previous view's cluster s; slots above it are new numbers (no shared rows).
    gain = np.zeros((k_cur, k_cur), dtype=np.float64)
    width = min(k_cur, k_prev)
    gain[:, :width] = table[:, :width]
    # Rows kept dominate: each is worth more than every identity bonus together (at most k_cur - 1 < k_cur + 1),
    # so the bonus only breaks ties, towards clusters keeping their own fitted number.
    gain = gain * (k_cur + 1) + np.eye(k_cur)
    rows, slots = linear_sum_assignment(gain, maximize=True)
    perm = np.empty(k_cur, dtype=np.int64)
    perm[rows] = slots
    return perm


def check_permutation(perm, n_clusters: int) -> np.ndarray:
    """``perm`` as an int64 array if it renumbers ``n_clusters`` clusters, else a :class:`CraftInputError`."""
    try:
        values = np.asarray(perm, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise CraftInputError(f"a cluster renumbering must be whole numbers; got {perm!r}.") from None
    if values.ndim != 1 or values.size != n_clusters or not np.array_equal(np.sort(values), np.arange(n_clusters)):
        raise CraftInputError(
            f"a cluster renumbering of {n_clusters} clusters must list each of 0..{n_clusters - 1} once; "
            f"got {np.asarray(perm).tolist()}."
        )
    return values


def relabel(labels, perm) -> np.ndarray:
    """``labels`` renumbered by ``perm`` (``perm[j]`` for label ``j``); -1 (noise) stays -1.

    Examples
    --------
    >>> relabel([0, 1, -1, 2], [2, 0, 1]).tolist()
    [2, 0, -1, 1]
    """
    labels = _labels(labels, "labels")
    perm = np.asarray(perm, dtype=np.int64)
    out = labels.copy()
    inside = labels >= 0
    out[inside] = perm[labels[inside]]
    return out


def changed_share(current, previous) -> float:
    """The share of rows whose number differs between two views (noise in both counts as unchanged).

    Examples
    --------
    >>> changed_share([0, 0, 1, 1], [0, 1, 1, 1])
    0.25
    """
    current = _labels(current, "current")
    previous = _labels(previous, "previous")
    if current.shape != previous.shape:
        raise CraftInputError(f"the two views label {current.size} and {previous.size} rows.")
    return float(np.mean(current != previous)) if current.size else 0.0


def _take(array: np.ndarray, order: np.ndarray) -> np.ndarray:
    return np.asarray(array)[order]


def relabel_model(model, perm):
    """A copy of a fitted ``model`` whose cluster ``j`` is numbered ``perm[j]``; ``model`` is not changed.

    Every per-cluster fitted attribute is renumbered at once: ``labels_``
    (noise stays -1), ``clusters_``, ``statistics_``, ``cluster_sizes_``,
    ``feature_mask_``, ``selection_`` and the iterations of ``history_`` that
    have the fit's number of clusters (their labels and masks; earlier
    iterations had other clusters, so their numbers are the run's own).
    Sums over clusters (``objective_``, ``objective_terms_``) do not change.
    The copy predicts and scores rows as the model does, under the new
    numbers.

    Parameters
    ----------
    model : CRAFT
        A fitted estimator.
    perm : array-like of int, shape (n_clusters_,)
        A permutation of ``0..n_clusters_-1`` (from :func:`match_clusters`).

    Returns
    -------
    CRAFT
    """
    model._check_fitted()
    perm = check_permutation(perm, model.n_clusters_)
    if np.array_equal(perm, np.arange(perm.size)):
        return copy.copy(model)
    # Row r of a renumbered array is the old cluster whose new number is r.
    order = np.argsort(perm)
    out = copy.copy(model)
    clusters = model.clusters_
    out.clusters_ = dataclasses.replace(clusters, **{
        name: _take(getattr(clusters, name), order) for name in ("means", "variances", "log_eta", "weights")})
    stats = model.statistics_
    out.statistics_ = dataclasses.replace(stats, **{
        name: _take(getattr(stats, name), order)
        for name in ("counts", "numeric_counts", "sums", "sums_sq", "level_counts")})
    out.cluster_sizes_ = _take(model.cluster_sizes_, order)
    out.feature_mask_ = _take(model.feature_mask_, order)
    selection = model.selection_
    out.selection_ = dataclasses.replace(selection, **{
        name: _take(getattr(selection, name), order) for name in ("score", "rank", "criterion", "cut", "selected")})
    if hasattr(model, "labels_"):
        out.labels_ = relabel(model.labels_, perm)
    history = []
    for record in model.history_:
        if record.n_clusters == perm.size:
            labels = None if record.labels is None else relabel(record.labels, perm).astype(np.asarray(record.labels).dtype)
            record = dataclasses.replace(record, feature_mask=_take(record.feature_mask, order), labels=labels)
        history.append(record)
    out.history_ = history
    return out
