"""Numerical core of CRAFT: costs, the assignment pass, updates, selection.

Prior validation of data and parameters is assumed: everything here takes an
:class:`~craft.encoding.EncodedData` and clean options. Features are in the
engine's order: numeric columns first, then categorical ones.

Choices the paper leaves open are made here and documented in
``docs/numerics.md``:

* categorical distributions are smoothed towards the global distribution,
  ``eta_k = (counts + s * eta_0) / (n_k + s)`` with pseudo-count ``s``;
* a variance floor ``min_variance * global variance`` per numeric feature;
* ties go to the lowest index (cluster in assignment, feature in selection);
* the pass adds the feature-control term ``|v_k| F_Delta`` to every point's
  distance (the paper's Algorithm), the objective counts it once per cluster
  (the paper's objective).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _kernels
from .encoding import EncodedData
from .priors import PriorTerms


@dataclass(frozen=True)
class Options:
    """Options of one CRAFT run that stay fixed while it iterates."""

    terms: PriorTerms
    lam: float
    budget: str = "fixed"
    eps_c: float = 0.8
    eps_v: float = 0.5
    smoothing: float = 1.0
    min_variance: float = 0.01
    init: str = "craft++"
    max_iter: int = 100
    keep_labels: bool = True
    max_clusters: int | None = None
    n_seeds: int = 1
    # Degenerate cases of the supplement: every cluster keeps every feature
    # (budget "all") and, for DP-means, a fixed variance instead of a learned one.
    fixed_variance: float | None = None

    def draw_selection(self, rng: np.random.Generator, probability, n_features: int) -> np.ndarray:
        """v of a new cluster: Bernoulli(probability) per feature (all ones without selection)."""
        if self.budget == "all":
            return np.ones(n_features)
        return (rng.random(n_features) < probability).astype(np.float64)

    def threshold(self, n_features: int) -> float:
        """Cost above which a point opens a new cluster: lambda + D F0."""
        return self.lam + n_features * self.terms.f0


class TooManyClusters(Exception):
    """A run opened more than ``Options.max_clusters`` clusters (used to cut λ searches short)."""


def _check_cluster_budget(n_clusters: int, opts: Options) -> None:
    if opts.max_clusters is not None and n_clusters > opts.max_clusters:
        raise TooManyClusters(n_clusters)


@dataclass
class Clusters:
    """Parameters of K clusters.

    ``weights`` is the selection v (K, D) as floats: 0/1 for real clusters,
    ``m`` everywhere for the expected cluster of the farthest-first heuristic.
    """

    means: np.ndarray  # (K, P) numeric means zeta
    variances: np.ndarray  # (K, P) floored sigma^2
    log_eta: np.ndarray  # (K, T) log of smoothed categorical distributions
    weights: np.ndarray  # (K, D) selection v

    @property
    def n_clusters(self) -> int:
        return self.weights.shape[0]

    def stack(self, other: "Clusters") -> "Clusters":
        return Clusters(
            np.vstack([self.means, other.means]),
            np.vstack([self.variances, other.variances]),
            np.vstack([self.log_eta, other.log_eta]),
            np.vstack([self.weights, other.weights]),
        )


@dataclass
class Statistics:
    """Sufficient statistics of a labelling (what a distributed map would reduce)."""

    counts: np.ndarray  # (K,)
    sums: np.ndarray  # (K, P)
    sums_sq: np.ndarray  # (K, P)
    level_counts: np.ndarray  # (K, T)


@dataclass
class IterationRecord:
    """What one iteration of a run did; see ``CRAFT.history_``."""

    iteration: int
    objective: float
    n_clusters: int
    n_changed: int
    n_opened: int
    feature_mask: np.ndarray
    labels: np.ndarray | None = None
    restart: int = 0
    lam: float = float("nan")


@dataclass
class RunResult:
    """Outcome of one run at one lambda."""

    labels: np.ndarray
    clusters: Clusters
    stats: Statistics
    objective: float
    numeric_nll: float
    n_iter: int
    converged: bool
    history: list[IterationRecord] = field(default_factory=list)

    @property
    def n_clusters(self) -> int:
        return self.clusters.n_clusters


# ---------------------------------------------------------------------------
# Costs


def cost_matrix(data: EncodedData, clusters: Clusters, terms: PriorTerms) -> np.ndarray:
    """The paper's distance d_nk for every point and cluster, shape (N, K).

    Numeric part by the expanded weighted square (matrix products, no N x K x
    P temporary); categorical part as one-hot codes times the per-cluster
    table of ``-log eta`` (selected) or ``-log eta_0`` (not selected).
    """
    n_numeric = data.n_numeric
    costs = np.zeros((data.n_samples, clusters.n_clusters))
    if n_numeric:
        w = half_precision(clusters, n_numeric)
        wz = w * clusters.means
        costs += data.numeric_sq @ w.T
        costs -= 2.0 * (data.numeric @ wz.T)
        costs += (wz * clusters.means).sum(axis=1)
    if data.n_categorical:
        costs += data.onehot() @ categorical_table(data, clusters).T
    costs += clusters.weights.sum(axis=1) * terms.f_delta
    return costs


def categorical_table(data: EncodedData, clusters: Clusters) -> np.ndarray:
    """Per-cluster cost of each level, shape (K, T)."""
    level_weight = np.repeat(clusters.weights[:, data.n_numeric :], data.n_levels, axis=1)
    return level_weight * (-clusters.log_eta) + (1.0 - level_weight) * (-data.log_eta0)


def new_clusters(data: EncodedData, rows: np.ndarray, weights: np.ndarray, opts: Options) -> Clusters:
    """Clusters "set using x_n" for the given rows: mean x_n, sigma 1, eta from x_n smoothed."""
    rows = np.atleast_1d(rows)
    onehot = np.zeros((rows.size, data.n_levels_total))
    codes = data.codes[rows]
    seen = codes >= 0
    onehot[np.nonzero(seen)[0], (codes + data.offsets[None, :])[seen]] = 1.0
    eta = (onehot + opts.smoothing * data.eta0) / (1.0 + opts.smoothing)
    return Clusters(
        means=data.numeric[rows].copy(),
        variances=np.full((rows.size, data.n_numeric), 1.0 if opts.fixed_variance is None else opts.fixed_variance),
        log_eta=np.log(eta),
        weights=np.atleast_2d(weights).astype(np.float64),
    )


# ---------------------------------------------------------------------------
# Statistics, parameters, selection


def statistics(data: EncodedData, labels: np.ndarray, n_clusters: int) -> Statistics:
    """Counts, sums, sums of squares and level counts per cluster."""
    return Statistics(*_kernels.accumulate(data.numeric, data.codes, data.offsets, labels, n_clusters, data.n_levels_total))


def raw_variances(stats: Statistics) -> tuple[np.ndarray, np.ndarray]:
    """Means and (unfloored, non-negative) variances per cluster and numeric feature."""
    counts = stats.counts[:, None]
    means = stats.sums / counts
    variances = np.maximum(stats.sums_sq / counts - means * means, 0.0)
    return means, variances


def log_eta(data: EncodedData, stats: Statistics, smoothing: float) -> np.ndarray:
    eta = (stats.level_counts + smoothing * data.eta0) / (stats.counts[:, None] + smoothing)
    return np.log(eta)


def categorical_gains(data: EncodedData, stats: Statistics, log_eta_k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """G_d and G_d - G_kd per cluster and categorical feature, shapes (K, Q)."""
    if not data.n_categorical:
        empty = np.zeros((stats.counts.shape[0], 0))
        return empty, empty
    global_cost = stats.level_counts * (-data.log_eta0)
    cluster_cost = stats.level_counts * (-log_eta_k)
    g_global = np.add.reduceat(global_cost, data.offsets, axis=1)
    g_cluster = np.add.reduceat(cluster_cost, data.offsets, axis=1)
    return g_global, g_global - g_cluster


def budget_counts(m: float, n_numeric: int, n_categorical: int) -> tuple[int, int]:
    """Fixed budget: round(m |Num|) and round(m |Cat|), halves rounded up."""
    return int(np.floor(m * n_numeric + 0.5 + 1e-9)), int(np.floor(m * n_categorical + 0.5 + 1e-9))


def significant(values: np.ndarray, digits: int = 10, scale: np.ndarray | None = None) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits of ``scale`` (default: of themselves).

    Selection ranks features by variance or gain; values that are equal in
    exact arithmetic can differ in their last bits depending on summation
    order. Ranking rounded values makes such ties explicit, and ties then go
    to the lower feature index. A difference of two large sums (a gain, a
    one-pass variance) is rounded at the precision of the sums, its
    ``scale``, so that an exact zero computed as 1e-15 is a zero too.
    """
    reference = np.abs(values) if scale is None else np.abs(np.broadcast_to(scale, np.shape(values)))
    magnitude = np.floor(np.log10(np.where(reference == 0, 1.0, reference)))
    quantum = 10.0 ** (magnitude - digits + 1)
    return np.round(values / quantum) * quantum


def select_features(
    data: EncodedData, stats: Statistics, variances: np.ndarray, log_eta_k: np.ndarray, opts: Options
) -> np.ndarray:
    """The selection v of every cluster, as floats (K, D)."""
    n_clusters = stats.counts.shape[0]
    n_numeric = data.n_numeric
    weights = np.zeros((n_clusters, data.n_features))
    g_global, gains = categorical_gains(data, stats, log_eta_k)
    if opts.budget == "all":
        weights[:] = 1.0
    elif opts.budget == "fixed":
        keep_num, keep_cat = budget_counts(opts.terms.m, n_numeric, data.n_categorical)
        if keep_num:
            second_moment = stats.sums_sq / stats.counts[:, None]
            order = np.argsort(significant(variances, scale=second_moment), axis=1, kind="stable")[:, :keep_num]
            np.put_along_axis(weights[:, :n_numeric], order, 1.0, axis=1)
        if keep_cat:
            order = np.argsort(-significant(gains, scale=g_global), axis=1, kind="stable")[:, :keep_cat]
            np.put_along_axis(weights[:, n_numeric:], order, 1.0, axis=1)
    else:
        weights[:, :n_numeric] = variances < opts.eps_v
        weights[:, n_numeric:] = gains > opts.eps_c * g_global
    return weights


def fit_clusters(data: EncodedData, labels: np.ndarray, n_clusters: int, opts: Options) -> tuple[Clusters, Statistics]:
    """Means, floored variances, smoothed eta and selection from a labelling."""
    stats = statistics(data, labels, n_clusters)
    return clusters_from_statistics(data, stats, opts), stats


def clusters_from_statistics(data: EncodedData, stats: Statistics, opts: Options) -> Clusters:
    """Cluster parameters from sufficient statistics; only ``data``'s global tables are read."""
    means, variances = raw_variances(stats)
    if opts.fixed_variance is not None:
        floored = np.full_like(variances, opts.fixed_variance)
    else:
        floored = np.maximum(variances, opts.min_variance * data.global_var[None, :])
        floored = np.where(floored > 0, floored, opts.min_variance)
    log_eta_k = log_eta(data, stats, opts.smoothing)
    weights = select_features(data, stats, variances, log_eta_k, opts)
    return Clusters(means, floored, log_eta_k, weights)


def objective(data: EncodedData, clusters: Clusters, stats: Statistics, opts: Options) -> tuple[float, float]:
    """The paper's objective, and the numeric Gaussian normaliser used to break its ties.

    The second value, ``sum_k sum_{d in Num, v_kd = 1} n_k log sigma_kd``, is
    the part of the numeric likelihood that the asymptotics drop. Under the
    fixed budget the paper's numeric discrepancy equals ``n_k / 2`` per
    selected feature whatever the partition, so restarts on numeric data tie
    on the objective; this term then decides between them.
    """
    n_numeric = data.n_numeric
    _, variances = raw_variances(stats)
    v_num = clusters.weights[:, :n_numeric]
    numeric = float((v_num * stats.counts[:, None] * variances / (2.0 * clusters.variances)).sum())
    categorical = 0.0
    if data.n_categorical:
        table = categorical_table(data, clusters)
        categorical = float((stats.level_counts * table).sum())
    k = clusters.n_clusters
    total = numeric + categorical + opts.threshold(data.n_features) * k + opts.terms.f_delta * float(clusters.weights.sum())
    nll = float((v_num * stats.counts[:, None] * 0.5 * np.log(clusters.variances)).sum())
    return total, nll


# ---------------------------------------------------------------------------
# The pass


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
    if rows is None:
        rows = np.arange(data.n_samples, dtype=np.int64)
    if start_row is None:
        start_row = np.full(clusters.n_clusters, -1, dtype=np.int64)
    return _kernels.nearest(
        data.numeric,
        data.codes,
        data.offsets,
        rows,
        clusters.means,
        half_precision(clusters, data.n_numeric),
        categorical_table(data, clusters),
        clusters.weights.sum(axis=1) * terms.f_delta,
        start_row,
    )


def half_precision(clusters: Clusters, n_numeric: int) -> np.ndarray:
    """``v_kd / (2 sigma_kd^2)``: the weight of a squared numeric deviation."""
    return clusters.weights[:, :n_numeric] * (1.0 / (2.0 * clusters.variances))


def assignment_pass(
    data: EncodedData, clusters: Clusters, opts: Options, rng: np.random.Generator
) -> tuple[np.ndarray, Clusters]:
    """One pass of Algorithm CRAFT over the points in order, vectorized.

    Points are visited in row order in the paper; a point opens a cluster when
    its smallest distance exceeds ``lambda + D F0``. Distances to the clusters
    that exist at the start of the pass are computed for all points at once;
    only points beyond the threshold from all of them ("candidates") can open
    clusters, so only they are walked in order (:class:`OpeningWalk`). Every
    point then takes the argmin over the old clusters and the new ones opened
    before it (ties to the lowest index, so an old cluster wins a tie with a
    new one).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        Indices into the returned clusters (old ones first, then new ones).
    clusters : Clusters
        The old clusters followed by the clusters opened in this pass.
    """
    threshold = opts.threshold(data.n_features)
    best_old, labels = nearest_cluster(data, clusters, opts.terms)
    candidates = np.flatnonzero(best_old > threshold)
    if candidates.size == 0:
        return labels, clusters
    walk = OpeningWalk(clusters, opts, rng)
    walk.visit(data.take(candidates), candidates, best_old[candidates])
    return walk.assign(data, labels, best_old, clusters)


class OpeningWalk:
    """The ordered walk over candidate points of one pass.

    Candidates may be visited in several chunks (the distributed backend
    streams them in global row order); the walk keeps what the paper's pass
    knows at each point: how many clusters exist, which features they
    select (for the new cluster's Bernoulli draw), and the clusters opened so
    far in this pass.
    """

    def __init__(self, clusters: Clusters, opts: Options, rng: np.random.Generator):
        self.opts = opts
        self.rng = rng
        self.selected = clusters.weights.sum(axis=0)
        self.n_existing = clusters.n_clusters
        self.rows: list[int] = []
        self.opened: Clusters | None = None

    def visit(self, subset: EncodedData, rows: np.ndarray, best_old: np.ndarray) -> None:
        """Walk candidates ``rows`` (global indices, increasing; ``subset`` holds their data).

        ``best_old`` is each candidate's smallest distance to the clusters
        that existed when the pass started.
        """
        opts = self.opts
        threshold = opts.threshold(subset.n_features)
        best = best_old.copy()
        if self.opened is not None:
            best = np.minimum(best, nearest_cluster(subset, self.opened, opts.terms)[0])
        start = 0
        while start < rows.size:
            beyond = np.flatnonzero(best[start:] > threshold)
            if beyond.size == 0:
                return
            position = start + int(beyond[0])
            probability = opts.terms.selection_probability(self.selected / self.n_existing)
            v = opts.draw_selection(self.rng, probability, subset.n_features)
            self.selected = self.selected + v
            self.n_existing += 1
            _check_cluster_budget(self.n_existing, opts)
            cluster = new_clusters(subset, np.array([position]), v, opts)
            self.opened = cluster if self.opened is None else self.opened.stack(cluster)
            self.rows.append(int(rows[position]))
            rest = np.arange(position + 1, rows.size)
            if rest.size:
                costs, _ = nearest_cluster(subset, cluster, opts.terms, rows=rest)
                best[position + 1 :] = np.minimum(best[position + 1 :], costs)
            start = position + 1

    def assign(
        self, data: EncodedData, labels: np.ndarray, best_old: np.ndarray, clusters: Clusters, *, row_offset: int = 0
    ) -> tuple[np.ndarray, Clusters]:
        """Final labels of ``data``'s rows (global rows ``row_offset``...) and all clusters."""
        if self.opened is None:
            return labels, clusters
        start_row = np.array(self.rows) - row_offset
        best_new, nearest_new = nearest_cluster(data, self.opened, self.opts.terms, start_row=start_row)
        labels = np.where(best_new < best_old, clusters.n_clusters + nearest_new, labels)
        own = (start_row >= 0) & (start_row < data.n_samples)
        labels[start_row[own]] = clusters.n_clusters + np.flatnonzero(own)
        return labels, clusters.stack(self.opened)


# ---------------------------------------------------------------------------
# Initialisation


def sample_proportional(weights: np.ndarray, uniform: float) -> int:
    """Index drawn with probability proportional to ``weights``, given one uniform draw.

    Written with an explicit cumulative sum so that a partitioned backend can
    reproduce the draw from per-partition totals.
    """
    cumulative = np.cumsum(weights)
    return min(int(np.searchsorted(cumulative, uniform * cumulative[-1], side="right")), weights.size - 1)


def initial_clusters(data: EncodedData, opts: Options, rng: np.random.Generator) -> Clusters:
    """The clusters that exist when the first pass starts.

    ``init="random"`` is the paper's: one cluster at a random point with
    ``v ~ Bernoulli(m)``. ``init="craft++"`` starts the same way, then keeps
    opening clusters, as the pass would, at points beyond the threshold from
    every cluster so far, but chooses each such point at random with
    probability proportional to its distance (k-means++ seeding on CRAFT's own
    distance) instead of taking the first one in row order. With a target
    number of clusters (``n_seeds``), the first ``n_seeds`` clusters are
    opened this way whatever their distance, so a fit asked for k starts
    from k.
    """
    first = int(rng.integers(data.n_samples))
    v = opts.draw_selection(rng, opts.terms.m, data.n_features)
    clusters = new_clusters(data, np.array([first]), v, opts)
    if opts.init == "random":
        return clusters
    threshold = opts.threshold(data.n_features)
    best, _ = nearest_cluster(data, clusters, opts.terms)
    best[first] = -np.inf
    while True:
        # The first n_seeds clusters open at any point (a target k asks for
        # them); beyond that only points the pass itself would open qualify.
        floor = 0.0 if clusters.n_clusters < opts.n_seeds else threshold
        beyond = np.flatnonzero(best > floor)
        if beyond.size == 0:
            return clusters
        row = int(beyond[sample_proportional(best[beyond], rng.random())])
        probability = opts.terms.selection_probability(clusters.weights.mean(axis=0))
        v = opts.draw_selection(rng, probability, data.n_features)
        seed = new_clusters(data, np.array([row]), v, opts)
        best = np.minimum(best, nearest_cluster(data, seed, opts.terms)[0])
        best[row] = -np.inf
        clusters = clusters.stack(seed)
        _check_cluster_budget(clusters.n_clusters, opts)


# ---------------------------------------------------------------------------
# A run


def run(
    data: EncodedData,
    opts: Options,
    rng: np.random.Generator,
    *,
    restart: int = 0,
    callback=None,
) -> RunResult:
    """Iterate passes and updates until the assignments stop changing."""
    clusters = initial_clusters(data, opts, rng)
    labels = np.zeros(data.n_samples, dtype=np.int64)
    history: list[IterationRecord] = []
    converged = False
    stats = None
    for iteration in range(1, opts.max_iter + 1):
        n_before = clusters.n_clusters
        proposed, clusters = assignment_pass(data, clusters, opts, rng)
        n_opened = clusters.n_clusters - n_before
        proposed, n_clusters = compact(proposed, clusters.n_clusters)
        n_changed = int((proposed != labels).sum())
        labels = proposed
        clusters, stats = fit_clusters(data, labels, n_clusters, opts)
        value, _ = objective(data, clusters, stats, opts)
        record = IterationRecord(
            iteration=iteration,
            objective=value,
            n_clusters=n_clusters,
            n_changed=n_changed,
            n_opened=n_opened,
            feature_mask=clusters.weights > 0.5,
            labels=labels.astype(np.int32) if opts.keep_labels else None,
            restart=restart,
            lam=opts.lam,
        )
        history.append(record)
        if callback is not None:
            callback(record)
        if n_changed == 0:
            converged = True
            break
    if not converged:
        # A last assignment without opening keeps labels_ equal to predict(X).
        _, final = nearest_cluster(data, clusters, opts.terms)
        final, n_clusters = compact(final, clusters.n_clusters)
        if n_clusters != clusters.n_clusters or (final != labels).any():
            labels = final
            clusters, stats = fit_clusters(data, labels, n_clusters, opts)
    value, nll = objective(data, clusters, stats, opts)
    return RunResult(labels, clusters, stats, value, nll, len(history), converged, history)


def compact(labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, int]:
    """Drop empty clusters and renumber labels 0..K-1, keeping their order."""
    present = np.bincount(labels, minlength=n_clusters) > 0
    if present.all():
        return labels, n_clusters
    mapping = np.cumsum(present) - 1
    return mapping[labels], int(present.sum())


# ---------------------------------------------------------------------------
# Lambda


def expected_cluster(data: EncodedData, row: int, opts: Options) -> Clusters:
    """A new cluster at ``row`` whose selection is its expectation under Bernoulli(m)."""
    weights = np.full(data.n_features, opts.terms.m)
    return new_clusters(data, np.array([row]), weights, opts)


def farthest_first_lambda(data: EncodedData, k: int, opts: Options, rng: np.random.Generator) -> float:
    """The paper's farthest-first heuristic on CRAFT's own distance.

    T starts as one random point; each of ``k`` rounds adds the point farthest
    from T (its distance being the smallest distance to a member of T, each
    member taken as a new cluster with every feature weighted by m); lambda is
    the distance of the last point added. T so ends with k + 1 points, and
    lambda is how far the farthest point lies from the first k of them.

    A point once in T has distance -inf, so it is never added again. Where
    fewer than k points lie at a positive distance from T (k exceeds the
    distinct rows), lambda is the last positive distance found; NaN when
    there is none (the caller refuses it: lambda must be > 0).
    """
    start = int(rng.integers(data.n_samples))
    best, _ = nearest_cluster(data, expected_cluster(data, start, opts), opts.terms)
    best[start] = -np.inf
    lam = float("nan")
    for _ in range(k):
        row = int(np.argmax(best))
        distance = float(best[row])
        if not (np.isfinite(distance) and distance > 0):
            break
        lam = distance
        best = np.minimum(best, nearest_cluster(data, expected_cluster(data, row, opts), opts.terms)[0])
        best[row] = -np.inf
    return lam


def default_lambda(data: EncodedData, opts: Options) -> float:
    """Lambda when neither lam nor k is given: the mean cost to a single global cluster.

    A point then opens a cluster when it costs more than about twice what a
    typical point costs in the one-cluster model (plus D F0).
    """
    labels = np.zeros(data.n_samples, dtype=np.int64)
    clusters, _ = fit_clusters(data, labels, 1, opts)
    return float(nearest_cluster(data, clusters, opts.terms)[0].mean())
