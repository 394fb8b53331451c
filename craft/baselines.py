"""Baselines of the paper's experiments: DP-means, DP-means(R) and DP-RF.

All estimators work on an already encoded float matrix ``X`` of shape
(n_samples, n_features) (numeric columns standardised, categorical columns
one-hot), as the paper ran them.

* :class:`DPMeans` is DP-means of Kulis & Jordan (2012): squared Euclidean
  distance, and a point farther than ``lambda`` from every centre opens a new
  cluster. ``init="mean"`` starts from one cluster at the global mean
  (DP-means, column "D" of the paper's tables); ``init="random"`` starts at a
  random data point, which is the paper's **DP-means(R)** (column "DR").
* :class:`DPRF` is the paper's DP-RF, "DP-means(R) extended to incorporate
  feature selection": DP-means(R) with CRAFT's per-cluster feature mask and
  its feature-control and regularisation terms, keeping the squared
  Euclidean discrepancy.

lambda comes from ``lam``, from ``k`` (the paper's farthest-first heuristic
on the estimator's own distance) or, with neither, from the rule of
:class:`craft.CRAFT`'s default: the mean cost of a row under a single cluster
holding every row, on the estimator's own distance (``docs/numerics.md``).
The threshold at which a row opens a cluster is then set by what a typical
row costs in the one-cluster model, so it follows the data's scale.

The layering follows scikit-learn: private numerical cores that take clean
arrays (prior validation of data is assumed), and estimators that validate
once in ``fit`` / ``predict`` and call them.

One pass over the data (both estimators) is vectorised but gives exactly the
labels of the paper's literal per-point loop, in which centres stay fixed
during the pass except that new clusters open at the points that found no
centre within the threshold:

1. distances of all points to the centres existing at the start of the pass
   (``|x|^2 - 2 x.c + |c|^2``, one matrix product);
2. only points farther than the threshold from all of them can open
   clusters; they are walked in row order, and a candidate opens a cluster
   when it is also farther than the threshold from every centre opened
   before it (after each opening, the distances of the remaining candidates
   to the new centre are updated at once);
3. every point takes the argmin over the old centres and the new centres
   opened *before it in row order* (later ones are masked with +inf); a point
   that opened a cluster belongs to it. Ties go to the lowest cluster index.

Empty clusters are removed after each pass and labels renumbered 0..K-1 in
order of first index.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ._random import as_generator
from .exceptions import CraftInputError
from .priors import PriorTerms, prior_terms

__all__ = ["DPMeans", "DPRF"]

_BLOCK = 256  # new centres handled per block in the final assignment


# ----------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------
class _NotNumericError(CraftInputError, TypeError):
    """A cell that is no number: bad input, and still NumPy's TypeError (scikit-learn's checks expect it)."""


def _check_X(X, *, min_rows: int = 2) -> np.ndarray:
    """A finite 2-D float64 array with at least ``min_rows`` rows.

    Messages follow scikit-learn's ``check_array`` wording where its
    estimator checks look for it ("Reshape your data", "0 feature(s)",
    "Complex data not supported", "Sparse").
    """
    if sp.issparse(X):
        raise CraftInputError("Sparse input is not supported: pass a dense array (X.toarray()).")
    array = np.asarray(X)
    if np.iscomplexobj(array):
        raise CraftInputError("Complex data not supported: X must hold real numbers.")
    try:
        array = array.astype(np.float64)
    except TypeError as error:
        raise _NotNumericError(f"X must be a numeric matrix: {error}") from error
    except ValueError as error:
        raise CraftInputError(f"X must be a numeric matrix: {error}") from error
    if array.ndim != 2:
        raise CraftInputError(
            f"X must be 2-D (n_samples, n_features); got shape {array.shape}. "
            "Reshape your data, e.g. X.reshape(-1, 1) for a single feature."
        )
    n, d = array.shape
    if d < 1:
        raise CraftInputError(f"X has 0 feature(s) (shape={array.shape}) while a minimum of 1 is required.")
    if n < min_rows:
        raise CraftInputError(f"X has n_samples={n}; at least {min_rows} rows are needed.")
    bad = int(np.size(array) - np.count_nonzero(np.isfinite(array)))
    if bad:
        raise CraftInputError(
            f"X has {bad} non-finite value{'s' if bad != 1 else ''} (NaN or inf); "
            "encode or impute them first."
        )
    return np.ascontiguousarray(array)


def _check_positive_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(value) and float(value) > 0
    ):
        raise CraftInputError(f"{name}={value!r} must be a finite number > 0.")
    return float(value)


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise CraftInputError(f"{name}={value!r} must be an integer >= {minimum}.")
    return int(value)


def _check_lam_k(lam, k) -> tuple[float | None, int | None]:
    """At most one of ``lam`` and ``k`` (neither: the default lambda)."""
    if lam is not None and k is not None:
        raise CraftInputError(
            f"Give at most one of lam and k (got lam={lam!r}, k={k!r}): lam is the "
            "new-cluster penalty, k the approximate number of clusters for the "
            "farthest-first heuristic; with neither, lam is the mean cost of a row "
            "under a single cluster."
        )
    if lam is not None:
        return _check_positive_real(lam, "lam"), None
    if k is not None:
        return None, _check_int(k, "k", 1)
    return None, None


def _column_variances(X: np.ndarray) -> np.ndarray:
    """Variance (ddof 0) of every column, for a default lambda; refused when every row is the same (all 0)."""
    variances = np.var(X, axis=0)
    if not variances.sum() > 0:
        raise CraftInputError(
            "The default lambda (the mean cost of a row under one cluster) is 0: every row of X is the "
            "same, so there is nothing to cluster; give lam > 0 or use other data."
        )
    return variances




# ----------------------------------------------------------------------------
# numerical cores (prior validation of data is assumed)
# ----------------------------------------------------------------------------
def _sq_distances(X: np.ndarray, x_sq: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (n, K) as |x|^2 - 2 x.c + |c|^2, clipped at 0."""
    dist = x_sq[:, None] - 2.0 * (X @ centers.T) + np.einsum("kd,kd->k", centers, centers)[None, :]
    np.maximum(dist, 0.0, out=dist)
    return dist


def _weighted_distances(
    X: np.ndarray, X2: np.ndarray, centers: np.ndarray, masks: np.ndarray, f_delta: float
) -> np.ndarray:
    """DP-RF distances (n, K): sum_d v_kd (x_nd - c_kd)^2 + |v_k| F_Delta."""
    w = masks.astype(np.float64)
    wc = w * centers
    quad = X2 @ w.T - 2.0 * (X @ wc.T) + np.einsum("kd,kd->k", wc, centers)[None, :]
    np.maximum(quad, 0.0, out=quad)
    return quad + w.sum(axis=1)[None, :] * f_delta


def _walk_candidates(
    candidates: np.ndarray,
    candidate_min: np.ndarray,
    threshold: float,
    on_open: Callable[[int, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Decide, in row order, which candidates open a cluster.

    ``candidate_min`` is each candidate's smallest distance to the old centres;
    ``on_open(i, rest)`` registers a new centre at point ``i`` and returns the
    distances of the later candidates ``rest`` to it. Returns the row indices
    of the opening points, in opening order.
    """
    current = candidate_min.astype(np.float64, copy=True)
    opened: list[int] = []
    for pos in range(candidates.size):
        if current[pos] > threshold:
            point = int(candidates[pos])
            opened.append(point)
            rest = candidates[pos + 1 :]
            dist = on_open(point, rest)
            if rest.size:
                np.minimum(current[pos + 1 :], dist, out=current[pos + 1 :])
    return np.asarray(opened, dtype=np.intp)


def _assign(
    dist_old: np.ndarray,
    opened: np.ndarray,
    new_distances: Callable[[int, int], np.ndarray],
) -> np.ndarray:
    """Argmin over old centres and the new centres opened before each row.

    ``new_distances(j0, j1)`` returns the (n, j1 - j0) distances to new
    centres j0..j1-1. Ties go to the lowest index (old centres first); points
    in ``opened`` get their own new cluster.
    """
    n, k_old = dist_old.shape
    rows = np.arange(n)
    labels = dist_old.argmin(axis=1)
    best = dist_old[rows, labels]
    for j0 in range(0, opened.size, _BLOCK):
        j1 = min(opened.size, j0 + _BLOCK)
        dist = new_distances(j0, j1)
        dist[opened[None, j0:j1] > rows[:, None]] = np.inf
        local = dist.argmin(axis=1)
        local_best = dist[rows, local]
        better = local_best < best
        labels[better] = k_old + j0 + local[better]
        best[better] = local_best[better]
    labels[opened] = k_old + np.arange(opened.size)
    return labels


def _dpmeans_pass(
    X: np.ndarray, x_sq: np.ndarray, centers: np.ndarray, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """One DP-means pass. Returns (labels over old + new clusters, opened rows)."""
    dist_old = _sq_distances(X, x_sq, centers)
    min_old = dist_old.min(axis=1)
    candidates = np.flatnonzero(min_old > lam)

    def on_open(point: int, rest: np.ndarray) -> np.ndarray:
        diff = X[rest] - X[point]
        return np.einsum("nd,nd->n", diff, diff)

    opened = _walk_candidates(candidates, min_old[candidates], lam, on_open)
    new_centers = X[opened]
    labels = _assign(
        dist_old, opened, lambda j0, j1: _sq_distances(X, x_sq, new_centers[j0:j1])
    )
    return labels, opened


def _dprf_pass(
    X: np.ndarray,
    X2: np.ndarray,
    centers: np.ndarray,
    masks: np.ndarray,
    threshold: float,
    terms: PriorTerms,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One DP-RF pass.

    A new cluster's mask is drawn, at its opening, from
    Bernoulli(selection_probability(share)) per feature, where ``share`` is the
    mean of v_jd over all clusters existing at that moment (old ones and those
    opened earlier in the pass). Returns (labels, opened rows, masks of the
    new clusters in opening order).
    """
    f_delta = terms.f_delta
    dist_old = _weighted_distances(X, X2, centers, masks, f_delta)
    min_old = dist_old.min(axis=1)
    candidates = np.flatnonzero(min_old > threshold)
    selected_sum = masks.sum(axis=0).astype(np.float64)
    new_masks: list[np.ndarray] = []

    def on_open(point: int, rest: np.ndarray) -> np.ndarray:
        share = selected_sum / (masks.shape[0] + len(new_masks))
        mask = rng.random(X.shape[1]) < terms.selection_probability(share)
        new_masks.append(mask)
        selected_sum[mask] += 1.0
        diff = X[rest] - X[point]
        return (diff * diff) @ mask.astype(np.float64) + mask.sum() * f_delta

    opened = _walk_candidates(candidates, min_old[candidates], threshold, on_open)
    new_mask_array = (
        np.asarray(new_masks, dtype=bool) if new_masks else np.zeros((0, X.shape[1]), dtype=bool)
    )
    new_centers = X[opened]
    labels = _assign(
        dist_old,
        opened,
        lambda j0, j1: _weighted_distances(
            X, X2, new_centers[j0:j1], new_mask_array[j0:j1], f_delta
        ),
    )
    return labels, opened, new_mask_array


def _compact(labels: np.ndarray, n_slots: int) -> tuple[np.ndarray, int]:
    """Drop empty clusters; renumber 0..K-1 keeping their order."""
    counts = np.bincount(labels, minlength=n_slots)
    keep = counts > 0
    remap = np.cumsum(keep) - 1
    return remap[labels].astype(np.intp), int(keep.sum())


def _cluster_stats(
    X: np.ndarray, X2: np.ndarray, labels: np.ndarray, n_clusters: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster means and population variances, each (K, D).

    Variances are ``(sum x^2 - (sum x)^2 / n_k) / n_k`` (clipped at 0): on
    0/1 (one-hot) columns the sums are exact integers, so columns with equal
    counts tie exactly and the stable tie-break decides; on standardised
    numeric data the cancellation error is negligible.
    """
    n = X.shape[0]
    onehot = sp.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(n_clusters, n))
    counts = np.asarray(onehot.sum(axis=1)).ravel()[:, None]
    sums = np.asarray(onehot @ X)
    sums_sq = np.asarray(onehot @ X2)
    means = sums / counts
    variances = np.maximum(sums_sq - sums * sums / counts, 0.0) / counts
    return means, variances


def _select_lowest_variance(variances: np.ndarray, n_select: int) -> np.ndarray:
    """Boolean masks of the ``n_select`` lowest-variance features per cluster.

    Stable: among equal variances the lower feature index is taken first.
    """
    order = np.argsort(variances, axis=1, kind="stable")[:, :n_select]
    masks = np.zeros(variances.shape, dtype=bool)
    np.put_along_axis(masks, order, True, axis=1)
    return masks


def _farthest_first_sq(X: np.ndarray, start: np.ndarray, k: int) -> float:
    """Squared Euclidean distance of the k-th point farthest-first adds to T.

    ``T`` starts as ``{start}`` and each of the ``k`` rounds adds the data
    point farthest from ``T`` (ties: lowest row), so ``T`` ends with ``k + 1``
    points; the returned value is the distance (to the rest of ``T``) of the
    last one added.
    """
    diff = X - start
    nearest = np.einsum("nd,nd->n", diff, diff)
    last = 0.0
    for round_ in range(1, k + 1):
        point = int(nearest.argmax())
        last = float(nearest[point])
        if last <= 0.0:
            raise CraftInputError(
                f"k={k} is too large for farthest-first: after {round_ - 1} rounds every "
                "row of X coincides with a point of T (X has too few distinct rows)."
            )
        diff = X - X[point]
        np.minimum(nearest, np.einsum("nd,nd->n", diff, diff), out=nearest)
    return last


def _dpmeans_default_lambda(X: np.ndarray) -> float:
    """Mean squared Euclidean distance of a row to the global mean: a row's cost under one cluster."""
    return float(_column_variances(X).sum())


def _dprf_default_lambda(X: np.ndarray, terms: PriorTerms, n_select: int) -> float:
    """Mean DP-RF distance of a row to one cluster holding every row (its mask: the lowest variances).

    Above m = 0.5 ``F_Delta < 0`` can make that mean <= 0; lambda is then the
    mean squared distance with every feature selected and no feature-control
    term, as CRAFT's default does.
    """
    variances = _column_variances(X)
    selected = _select_lowest_variance(variances[None, :], n_select)[0]
    lam = float(variances[selected].sum() + n_select * terms.f_delta)
    return lam if lam > 0 else float(variances.sum())


def _budget(m: float, n_features: int) -> int:
    """round(m * D), halves up, clipped to [1, D]."""
    return int(min(n_features, max(1, math.floor(m * n_features + 0.5))))


@dataclass(frozen=True)
class _Fitted:
    labels: np.ndarray
    centers: np.ndarray
    masks: np.ndarray | None
    n_iter: int
    converged: bool


def _warn_not_converged(name: str, max_iter: int) -> None:
    warnings.warn(
        f"{name} did not converge: assignments still changed after max_iter={max_iter} "
        "passes; increase max_iter.",
        ConvergenceWarning,
        stacklevel=3,
    )


# ----------------------------------------------------------------------------
# DP-means
# ----------------------------------------------------------------------------
def _dpmeans_run(X: np.ndarray, init_center: np.ndarray, lam: float, max_iter: int) -> _Fitted:
    """DP-means iterations from one cluster holding every point at ``init_center``."""
    n = X.shape[0]
    X2 = X * X
    x_sq = X2.sum(axis=1)
    labels = np.zeros(n, dtype=np.intp)
    centers = init_center[None, :].copy()
    converged, n_iter = False, 0
    while not converged and n_iter < max_iter:
        n_iter += 1
        raw, opened = _dpmeans_pass(X, x_sq, centers, lam)
        new_labels, n_clusters = _compact(raw, centers.shape[0] + opened.size)
        centers, _ = _cluster_stats(X, X2, new_labels, n_clusters)
        converged = np.array_equal(new_labels, labels)
        labels = new_labels
    return _Fitted(labels, centers, None, n_iter, converged)


class DPMeans(ClusterMixin, BaseEstimator):
    """DP-means (Kulis & Jordan, 2012), and DP-means(R) with ``init="random"``.

    Minimises ``sum_n |x_n - c_{z_n}|^2 + lam * K`` by passes over the points
    in row order: a point whose smallest squared distance to the current
    centres exceeds ``lam`` opens a new cluster centred on it; otherwise it
    joins the nearest centre. Centres are recomputed after each pass and
    empty clusters removed; passes repeat until the assignments stop
    changing. See the module docstring for the exact vectorised pass.

    Parameters
    ----------
    lam : float or None, default None
        New-cluster penalty lambda (> 0). Give at most one of ``lam`` and
        ``k``. With neither, lambda is the mean squared distance of a row to
        the global mean (the sum of the column variances): a row's cost when
        one cluster holds every row, the rule of CRAFT's default lambda on
        DP-means' distance. It is refused (``CraftInputError``) when every
        row is the same.
    k : int or None, default None
        Approximate number of clusters: lambda is then set by the
        farthest-first heuristic of the paper. ``T`` starts with the initial
        centre (the global mean for ``init="mean"``, the random initial data
        point for ``init="random"``); each of ``k`` rounds adds the data point
        farthest from ``T``; lambda is the squared distance of the k-th added
        point to the rest of ``T``. ``T`` thus ends with ``k + 1`` points.
    init : {"mean", "random"}, default "mean"
        First cluster at the global mean (DP-means) or at a data point drawn
        uniformly at random (DP-means(R), the paper's "DR").
    max_iter : int, default 100
        Maximum number of passes; a ConvergenceWarning is issued when reached.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng`` (only ``init="random"`` draws).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each point, 0..K-1.
    n_clusters_ : int
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    lam_ : float
        The lambda used (given, from farthest-first or the default rule).
    n_iter_ : int
        Passes run.
    objective_ : float
        ``sum_n |x_n - c_{z_n}|^2 + lam_ * n_clusters_``.
    n_features_in_ : int

    Examples
    --------
    >>> X = np.array([[0.0], [0.1], [10.0], [10.1]])
    >>> DPMeans(lam=1.0).fit(X).labels_.tolist()
    [0, 0, 1, 1]
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [10.0], [10.1]])
    >>> model = DPMeans().fit(X)  # lambda: the mean squared distance to the mean
    >>> round(model.lam_, 4), model.labels_.tolist()
    (16.6692, [1, 1, 0, 0, 2, 2])
    """

    def __init__(self, lam=None, *, k=None, init="mean", max_iter=100, random_state=None):
        self.lam = lam
        self.k = k
        self.init = init
        self.max_iter = max_iter
        self.random_state = random_state

    def _validate(self) -> tuple[float | None, int | None, int]:
        lam, k = _check_lam_k(self.lam, self.k)
        if self.init not in ("mean", "random"):
            raise CraftInputError(f"init={self.init!r} must be 'mean' or 'random'.")
        return lam, k, _check_int(self.max_iter, "max_iter", 1)

    def fit(self, X, y=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite encoded data, at least 2 rows.
        y : ignored

        Returns
        -------
        self
        """
        lam, k, max_iter = self._validate()
        X = _check_X(X)
        rng = as_generator(self.random_state)
        if self.init == "mean":
            start = X.mean(axis=0)
        else:
            start = X[int(rng.integers(X.shape[0]))].copy()
        if k is not None:
            lam = _farthest_first_sq(X, start, k)
        elif lam is None:
            lam = _dpmeans_default_lambda(X)
        fitted = _dpmeans_run(X, start, lam, max_iter)
        if not fitted.converged:
            _warn_not_converged("DPMeans", max_iter)
        sse = float(((X - fitted.centers[fitted.labels]) ** 2).sum())
        self.labels_ = fitted.labels
        self.cluster_centers_ = fitted.centers
        self.n_clusters_ = int(fitted.centers.shape[0])
        self.lam_ = float(lam)
        self.n_iter_ = fitted.n_iter
        self.objective_ = sse + self.lam_ * self.n_clusters_
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Nearest centre (squared Euclidean; ties to the lowest index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "cluster_centers_")
        X = _check_predict_X(X, self.n_features_in_, type(self).__name__)
        x_sq = np.einsum("nd,nd->n", X, X)
        return _sq_distances(X, x_sq, self.cluster_centers_).argmin(axis=1)


def _check_predict_X(X, n_features: int, name: str) -> np.ndarray:
    X = _check_X(X, min_rows=1)
    if X.shape[1] != n_features:
        raise CraftInputError(
            f"X has {X.shape[1]} features, but {name} is expecting {n_features} features as input."
        )
    return X


# ----------------------------------------------------------------------------
# DP-RF
# ----------------------------------------------------------------------------
def _dprf_run(
    X: np.ndarray,
    first: int,
    first_mask: np.ndarray,
    threshold: float,
    terms: PriorTerms,
    n_select: int,
    max_iter: int,
    rng: np.random.Generator,
) -> _Fitted:
    """DP-RF iterations from one cluster at row ``first`` with mask ``first_mask``."""
    n = X.shape[0]
    X2 = X * X
    labels = np.zeros(n, dtype=np.intp)
    centers = X[first][None, :].copy()
    masks = first_mask[None, :].copy()
    converged, n_iter = False, 0
    while not converged and n_iter < max_iter:
        n_iter += 1
        raw, opened, _ = _dprf_pass(X, X2, centers, masks, threshold, terms, rng)
        new_labels, n_clusters = _compact(raw, centers.shape[0] + opened.size)
        centers, variances = _cluster_stats(X, X2, new_labels, n_clusters)
        masks = _select_lowest_variance(variances, n_select)
        converged = np.array_equal(new_labels, labels)
        labels = new_labels
    return _Fitted(labels, centers, masks, n_iter, converged)


class DPRF(ClusterMixin, BaseEstimator):
    """DP-RF: DP-means(R) extended with CRAFT's feature selection.

    The paper's baseline of Figure 4 ("we borrowed the feature selection term
    from CRAFT to extend DP-means(R) ... and retained its squared Euclidean
    distance measure"). With ``(F0, F_Delta)`` from
    :func:`craft.priors.prior_terms`:

    * distance of point ``n`` to cluster ``k``:
      ``d_nk = sum_d v_kd (x_nd - c_kd)^2 + (sum_d v_kd) F_Delta``
      (the feature-control term is paid per point in the pass, as in the
      paper's Algorithm CRAFT);
    * a point opens a new cluster when ``min_k d_nk > lam + D F0``; the new
      cluster's ``v`` is drawn per feature from
      Bernoulli(``selection_probability(share_d)``), ``share_d`` being the mean
      of ``v_jd`` over the clusters existing at that moment;
    * the first cluster sits at a random data point with ``v ~ Bernoulli(m)``;
    * after each pass the centres are recomputed and each cluster selects the
      ``round(m * D)`` features (halves up, at least 1) with the lowest
      within-cluster variance (population variance; ties to the lower feature
      index, so a singleton cluster takes the first features).

    Random draws, in order: the first row, its mask, then the masks of new
    clusters in opening order.

    Parameters
    ----------
    m : float, default 0.5
        Fraction of features per cluster, in (0, 1).
    rho : float or None
        Prior variance in (0, m(1-m)); None takes the paper's default.
    lam : float or None, default None
        New-cluster penalty (> 0). Give at most one of ``lam`` and ``k``.
        With neither, lambda is the mean DP-RF distance of a row to one
        cluster holding every row: centre the global mean, ``v`` the
        ``round(m * D)`` lowest-variance features (what the update selects),
        so ``sum of those variances + round(m * D) F_Delta`` (the rule of
        CRAFT's default lambda on DP-RF's distance). Where that is <= 0
        (possible for m > 0.5, where ``F_Delta < 0``) it is the sum of all
        column variances (every feature, no feature-control term), as in
        CRAFT; refused (``CraftInputError``) when every row is the same.
    k : int or None, default None
        Approximate number of clusters: lambda by farthest-first on DP-RF's
        distance where a candidate centre's ``v`` is its expectation (every
        feature weighted by ``m``): ``m |x - t|^2 + m D F_Delta``. ``T`` starts
        at the random first row; after ``k`` rounds (``T`` has ``k + 1``
        points) lambda is that distance for the k-th added point. For
        ``m > 0.5`` (``F_Delta < 0``) it can be negative; the new-cluster
        threshold ``lam + D F0`` stays positive because ``F0 + m F_Delta > 0``.
    max_iter : int, default 100
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    feature_mask_ : ndarray of bool, shape (n_clusters_, n_features)
        Selected features ``v`` of each cluster.
    lam_ : float
        The lambda used (given, from farthest-first or the default rule).
    n_iter_ : int
    objective_ : float
        The paper's objective with the feature-control term counted once per
        cluster: ``sum_n d'_{n z_n} + (lam_ + D F0) K + F_Delta sum_k |v_k|``
        where ``d'`` is the masked squared distance without the F_Delta term.
    n_features_in_ : int

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.1, (20, 4)), rng.normal(5, 0.1, (20, 4))])
    >>> DPRF(m=0.5, lam=10.0, random_state=0).fit(X).n_clusters_
    2
    >>> DPRF(m=0.5, random_state=0).fit(X).n_clusters_  # the default lambda
    2
    """

    def __init__(self, m=0.5, *, rho=None, lam=None, k=None, max_iter=100, random_state=None):
        self.m = m
        self.rho = rho
        self.lam = lam
        self.k = k
        self.max_iter = max_iter
        self.random_state = random_state

    def _validate(self) -> tuple[PriorTerms, float | None, int | None, int]:
        if isinstance(self.m, bool) or not isinstance(self.m, numbers.Real):
            raise CraftInputError(f"m={self.m!r} must be a number strictly between 0 and 1.")
        if self.rho is not None and (
            isinstance(self.rho, bool) or not isinstance(self.rho, numbers.Real)
        ):
            raise CraftInputError(f"rho={self.rho!r} must be None or a number in (0, m(1-m)).")
        terms = prior_terms(float(self.m), None if self.rho is None else float(self.rho))
        lam, k = _check_lam_k(self.lam, self.k)
        return terms, lam, k, _check_int(self.max_iter, "max_iter", 1)

    def fit(self, X, y=None):
        """Cluster ``X`` and select features per cluster.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite encoded data, at least 2 rows.
        y : ignored

        Returns
        -------
        self
        """
        terms, lam, k, max_iter = self._validate()
        X = _check_X(X)
        n, n_features = X.shape
        rng = as_generator(self.random_state)
        first = int(rng.integers(n))
        first_mask = rng.random(n_features) < terms.m
        n_select = _budget(terms.m, n_features)
        if k is not None:
            sq = _farthest_first_sq(X, X[first], k)
            lam = terms.m * sq + terms.m * n_features * terms.f_delta
        elif lam is None:
            lam = _dprf_default_lambda(X, terms, n_select)
        threshold = lam + n_features * terms.f0
        fitted = _dprf_run(X, first, first_mask, threshold, terms, n_select, max_iter, rng)
        if not fitted.converged:
            _warn_not_converged("DPRF", max_iter)
        masks = fitted.masks
        assert masks is not None  # a DP-RF run always selects
        diff = X - fitted.centers[fitted.labels]
        discrepancy = float(((diff * diff) * masks[fitted.labels]).sum())
        n_clusters = int(fitted.centers.shape[0])
        self.labels_ = fitted.labels
        self.cluster_centers_ = fitted.centers
        self.feature_mask_ = masks
        self.n_clusters_ = n_clusters
        self.lam_ = float(lam)
        self.n_iter_ = fitted.n_iter
        self.objective_ = (
            discrepancy + threshold * n_clusters + terms.f_delta * float(masks.sum())
        )
        self.n_features_in_ = n_features
        return self

    def predict(self, X):
        """Cluster of smallest DP-RF distance (ties to the lowest index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "cluster_centers_")
        X = _check_predict_X(X, self.n_features_in_, type(self).__name__)
        terms = prior_terms(float(self.m), None if self.rho is None else float(self.rho))
        dist = _weighted_distances(
            X, X * X, self.cluster_centers_, self.feature_mask_, terms.f_delta
        )
        return dist.argmin(axis=1)
