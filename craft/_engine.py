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
  (the paper's objective);
* ``rho_selection="shrink"``, beside the paper's rule, lets rho reach the
  selection: each cluster ranks its own score shrunk towards the score pooled
  over clusters with the weight ``rho / (m(1-m))`` that the posterior mean of
  nu gives a cluster's own indicator (a modelling choice, :func:`selection_scores`);
* a row with no observed cell never opens a cluster (:func:`opening_candidates`);
* ``noise=True`` (trimming): a row that fits no cluster, CRAFT's own opening
  test, is labelled -1 at every pass instead of opening a cluster, leaves
  its cluster's statistics and costs the objective ``lambda + D F0``, the
  price of the cluster it would have opened (:func:`nearest_or_noise`);
* a marginalised missing cell (``EncodedData.observed`` false, or a
  categorical code -1) adds nothing to a row's cost and nothing to its
  cluster's statistics: means, variances and level distributions are over
  the observed cells of each feature.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from . import _kernels, _update
from ._links import Links
from .encoding import EncodedData
from .exceptions import CraftInputError
from .priors import PriorTerms


@dataclass(frozen=True)
class Pins:
    """Features pinned on (always selected) or off (never selected), for every cluster or per cluster of the start.

    ``every`` has one entry per used feature (engine order): +1 pinned on,
    -1 pinned off, 0 free, for every cluster, the clusters a pass opens too.
    ``per_cluster`` has one such row per cluster of the run's start (a warm
    start's clusters, the previous fit's numbers); its non-zero entries add
    to ``every``'s for that cluster (the estimator refuses the two
    disagreeing). A cluster keeps its own pins while it lives, whatever its
    number after emptied clusters are dropped (:func:`run` carries them).
    Tuples, so that the options stay hashable values.
    """

    every: tuple[int, ...]
    per_cluster: tuple[tuple[int, ...], ...] = ()

    def start(self, n_clusters: int, n_features: int) -> np.ndarray:
        """The (K, D) int8 pins of the run's first clusters."""
        table = np.tile(np.asarray(self.every, dtype=np.int8), (n_clusters, 1)).reshape(n_clusters, n_features)
        if self.per_cluster:
            own = np.asarray(self.per_cluster, dtype=np.int8)[:n_clusters]
            table[: own.shape[0]] = np.where(own != 0, own, table[: own.shape[0]])
        return table

    def extended(self, pins: np.ndarray, n_clusters: int) -> np.ndarray:
        """``pins`` with a row of ``every`` for each cluster a pass opened (numbers from ``len(pins)`` on)."""
        opened = n_clusters - pins.shape[0]
        if opened <= 0:
            return pins
        return np.vstack([pins, np.tile(np.asarray(self.every, dtype=np.int8), (opened, 1))])


@dataclass(frozen=True)
class Options:
    """Options of one CRAFT run that stay fixed while it iterates.

    Every field that mirrors a parameter of :class:`craft.CRAFT` (``budget``
    to ``max_iter``) is required: their defaults have one place, the
    estimator's signature, and a caller that drives the engine directly
    states each (or reads them from that signature). Only the engine's own
    switches (``keep_labels`` onwards) have defaults here.
    """

    terms: PriorTerms
    lam: float
    budget: str
    eps_c: float
    eps_v: float
    smoothing: float
    min_variance: float
    init: str
    rho_selection: str
    max_iter: int
    noise: bool
    keep_labels: bool = True
    max_clusters: int | None = None
    n_seeds: int = 1
    # Degenerate cases of the supplement: every cluster keeps every feature
    # (budget "all") and, for DP-means, a fixed variance instead of a learned one.
    fixed_variance: float | None = None
    # Features pinned on or off (CRAFT(pins=...), named apart from the parameter, which is a mapping); None: every
    # feature free, the paper's selection.
    pinned: Pins | None = None
    # Rows assigned together or apart (CRAFT(must_link=..., cannot_link=...)); None: every row free.
    links: Links | None = None

    def draw_selection(self, rng: np.random.Generator, probability, n_features: int) -> np.ndarray:
        """v of a new cluster: Bernoulli(probability) per feature (all ones without selection)."""
        if self.budget == "all":
            return np.ones(n_features)
        return (rng.random(n_features) < probability).astype(np.float64)

    def threshold(self, n_features: int) -> float:
        """Cost above which a point opens a new cluster: lambda + D F0."""
        return self.lam + n_features * self.terms.f0

    def seeding_cap(self, n_features: int) -> float:
        """Most a row weighs in the craft++ draw: its cost under the trimmed objective, at most
        lambda + D F0, where ``noise=True`` and k seeds are asked for (else no cap).

        k-means++ draws in proportion to the distance, so it favours far
        rows: with noise rows, noise. A noise row costs the trimmed objective
        ``lambda + D F0`` however far it lies, so that is its weight.
        """
        return self.threshold(n_features) if self.noise and self.n_seeds > 1 else np.inf


#: A row is noise when its cost to every cluster exceeds what all but this share of the rows drawn from its
#: nearest cluster's own model would cost (:func:`noise_threshold`): a cluster of 1,000 rows drawn exactly from its
#: model loses one row to noise on average.
NOISE_ALPHA = 0.001
#: Draws per cluster for :func:`noise_threshold`'s quantile, at most, and cells drawn per cluster at most.
NOISE_DRAWS, NOISE_CELLS = 20_000, 2_000_000


def noise_threshold(template: EncodedData, clusters: Clusters, stats: Statistics, opts: Options,
                    rng: np.random.Generator, alpha: float = NOISE_ALPHA) -> float:
    """The cost beyond which a row is improbable under every cluster: the noise threshold of ``noise=True``.

    For each cluster, rows are drawn as the cluster's own rows are spread
    (its statistics: every numeric feature N(mean, variance) with its
    unfloored variance, every categorical feature at its level shares) and
    costed as the fit costs a row (:func:`nearest_cluster`: the floored
    variances and smoothed frequencies of the selected features, ``eta_0``
    for the others); the cluster's threshold is the ``1 - alpha`` quantile
    of those costs: a parametric bootstrap of its members' cost. The fit's
    threshold is the largest over the clusters, so that no cluster loses
    more than ``alpha`` of the rows drawn like its own. It reads the
    clusters and their statistics only, not the rows, so every backend gets
    the same. A cluster without rows draws nothing.
    """
    n_numeric, n_categorical = template.n_numeric, template.n_categorical
    draws = int(np.clip(NOISE_CELLS // max(template.n_features, 1), 1_000, NOISE_DRAWS))
    levels = [np.arange(template.offsets[q], template.offsets[q] + template.n_levels[q]) for q in range(n_categorical)]
    means, variances = raw_variances(stats, template)
    worst = -np.inf
    for k in np.flatnonzero(stats.counts > 0):
        numeric = means[k] + np.sqrt(variances[k]) * rng.standard_normal((draws, n_numeric))
        codes = np.full((draws, n_categorical), -1, dtype=np.int64)
        for q, flat in enumerate(levels):
            counts = stats.level_counts[k, flat]
            if counts.sum() > 0:  # a feature with no observed cell in the cluster stays missing, as its rows
                cumulative = np.cumsum(counts / counts.sum())
                codes[:, q] = np.minimum(np.searchsorted(cumulative, rng.random(draws), side="right"), flat.size - 1)
        drawn = replace(template, numeric=numeric, codes=codes, observed=None, unseen=None)
        one = Clusters(clusters.means[k:k + 1], clusters.variances[k:k + 1], clusters.log_eta[k:k + 1],
                       clusters.weights[k:k + 1])
        cost, _ = nearest_cluster(drawn, one, opts.terms)
        worst = max(worst, float(np.quantile(cost, 1.0 - alpha)))
    return worst


class TooManyClusters(Exception):
    """A run opened more than ``Options.max_clusters`` clusters (used to cut λ searches short)."""


class EveryRowNoise(CraftInputError):
    """Under ``noise=True`` a pass found every row beyond ``lambda + D F0`` from every cluster."""


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
    numeric_counts: np.ndarray  # (K, P) observed cells per numeric feature
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
    pins: np.ndarray | None = None  # (K, D) int8: +1 pinned on, -1 pinned off, 0 free (Pins); None without pins


@dataclass
class RunResult:
    """Outcome of one run at one lambda."""

    labels: Any  # the backend's labels (Backend.assign): an array in memory, one future per partition on dask
    clusters: Clusters
    stats: Statistics
    objective: float
    numeric_nll: float
    n_iter: int
    converged: bool
    history: list[IterationRecord] = field(default_factory=list)
    n_noise: int = 0  # rows labelled -1 (noise=True)
    pins: np.ndarray | None = None  # (K, D) int8, each cluster's pins (Pins), None without

    @property
    def n_clusters(self) -> int:
        return self.clusters.n_clusters


# ---------------------------------------------------------------------------
# Costs


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


def new_clusters(data: EncodedData, rows: np.ndarray, weights: np.ndarray, opts: Options) -> Clusters:
    """Clusters "set using x_n" for the given rows: mean x_n, sigma 1, eta from x_n smoothed.

    Where x_n lacks a value (a marginalised missing cell) the cluster starts
    from the global statistics instead: the global mean, and eta_0.
    """
    rows = np.atleast_1d(rows)
    onehot = np.zeros((rows.size, data.n_levels_total))
    codes = data.codes[rows]
    seen = codes >= 0
    onehot[np.nonzero(seen)[0], (codes + data.offsets[None, :])[seen]] = 1.0
    for i, q in zip(*np.nonzero(~seen), strict=True):
        block = slice(data.offsets[q], data.offsets[q] + data.n_levels[q])
        onehot[i, block] = data.eta0[block]
    means = data.numeric[rows].copy()
    if data.observed is not None:
        means = np.where(data.observed[rows], means, data.global_mean[None, :])
    eta = (onehot + opts.smoothing * data.eta0) / (1.0 + opts.smoothing)
    return Clusters(
        means=means,
        variances=np.full((rows.size, data.n_numeric), 1.0 if opts.fixed_variance is None else opts.fixed_variance),
        log_eta=np.log(eta),
        weights=np.atleast_2d(weights).astype(np.float64),
    )


# ---------------------------------------------------------------------------
# Statistics, parameters, selection


def statistics(data: EncodedData, labels: np.ndarray, n_clusters: int) -> Statistics:
    """Counts, sums, sums of squares and level counts per cluster (observed cells only).

    A row labelled -1 (noise, :func:`nearest_or_noise`) is in no cluster's statistics.
    """
    labels = np.asarray(labels)
    if labels.size and labels.min() < 0:
        data = data.take(np.flatnonzero(labels >= 0))
        labels = labels[labels >= 0]
    return Statistics(
        *_kernels.accumulate(data.numeric, data.observed, data.codes, data.offsets, labels, n_clusters, data.n_levels_total)
    )


def raw_variances(stats: Statistics, data: EncodedData) -> tuple[np.ndarray, np.ndarray]:
    """Means and (unfloored, non-negative) variances per cluster and numeric feature.

    Over each feature's observed cells in the cluster; a cluster with none
    takes the global mean and variance (it has no evidence of its own).
    """
    means, variances = np.empty(stats.sums.shape), np.empty(stats.sums.shape)
    _update.moments(stats.numeric_counts, stats.sums, stats.sums_sq, data.global_mean, data.global_var, means, variances)
    return means, variances


def level_totals(data: EncodedData, level_counts: np.ndarray) -> np.ndarray:
    """Observed cells per cluster and categorical feature, (K, Q): level counts summed per feature."""
    return feature_sums(data, level_counts)


def feature_sums(data: EncodedData, values: np.ndarray) -> np.ndarray:
    """``values`` (K, T) summed over each categorical feature's levels, (K, Q)."""
    if not data.n_categorical:
        return np.zeros((values.shape[0], 0))
    return np.add.reduceat(values, data.offsets, axis=1)


def log_eta(data: EncodedData, stats: Statistics, smoothing: float) -> np.ndarray:
    # The denominator is the cluster's observed cells of each feature (its
    # size when nothing is marginalised), so that every feature's eta sums to 1.
    observed = np.repeat(level_totals(data, stats.level_counts), data.n_levels, axis=1)
    eta = (stats.level_counts + smoothing * data.eta0) / (observed + smoothing)
    return np.log(eta)


def budget_counts(m: float, n_numeric: int, n_categorical: int) -> tuple[int, int]:
    """Fixed budget: round(m |Num|) and round(m |Cat|), halves rounded up."""
    return int(np.floor(m * n_numeric + 0.5 + 1e-9)), int(np.floor(m * n_categorical + 0.5 + 1e-9))


def significant(values: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """``values`` rounded to ten significant digits of ``scale`` (default: of themselves).

    Selection ranks features by variance or gain; values that are equal in
    exact arithmetic can differ in their last bits depending on summation
    order. Ranking rounded values makes such ties explicit, and ties then go
    to the lower feature index. A difference of two large sums (a gain, a
    one-pass variance) is rounded at the precision of the sums, its
    ``scale``, so that an exact zero computed as 1e-15 is a zero too. The
    compiled update (:func:`craft._update.significant`) computes it.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    scale = values if scale is None else np.broadcast_to(np.asarray(scale, dtype=np.float64), values.shape)
    out = np.empty(values.shape)
    _update.significant(values, np.ascontiguousarray(scale), out)
    return out


@dataclass(frozen=True)
class SelectionScores:
    """What the selection rule ranks, per cluster and feature.

    ``variance`` (K, P): numeric features are selected lowest first (fixed
    budget) or below ``eps_v`` (approximate). ``gain`` (K, Q): categorical
    features are selected highest first, or where ``gain > eps_c *
    reference``. ``variance_scale`` and ``reference`` are the magnitudes at
    whose precision ties are rounded (:func:`significant`). Gains are in
    nats summed over the cluster's points, as the paper's ``G_d - G_kd``;
    ``reference`` is the paper's ``G_d``. ``own_weight`` is the weight of the
    cluster's own score: 1 for the paper's rule, ``rho / (m(1-m))`` under
    ``rho_selection="shrink"``.
    """

    variance: np.ndarray
    variance_scale: np.ndarray
    gain: np.ndarray
    reference: np.ndarray
    own_weight: float


def selection_scores(
    data: EncodedData, stats: Statistics, variances: np.ndarray, log_eta_k: np.ndarray, opts: Options
) -> SelectionScores:
    """The scores :func:`select_features` ranks, under ``opts.rho_selection``.

    ``"paper"``: Algorithm CRAFT's rule, each cluster's own within-cluster
    variance and entropy gain. ``"shrink"``: each cluster's score is shrunk
    towards the score pooled over all clusters with the credibility weight
    ``w = rho / (m(1-m))`` that the posterior mean of nu gives its own
    indicator, ``a/(a+b) = m + w (v - m)``. The model does not pool across
    clusters; the pooled target and the weight's transfer to scores are a
    modelling choice (``docs/numerics.md``). With ``n_kd`` the observed cells
    of feature d in cluster k, ``n_k`` its rows and ``N`` the table's rows:

        variance~_kd = w var_kd + (1 - w) sum_j n_jd var_jd / sum_j n_jd
        gain~_kd     = w (G_d - G_kd) + (1 - w) n_k sum_j (G_d - G_jd)_j / N

    (and ``G_d`` alike for the approximate budget's reference), a missing
    cell adding nothing to a gain. As rho -> 0 every cluster ranks the same
    pooled scores (``n_k`` is one factor for all of a cluster's features),
    so all select one common set, short of exact ties; as rho -> m(1-m) the
    paper's rule is recovered.
    """
    shrink = opts.rho_selection != "paper"
    shape_numeric, shape_categorical = stats.sums.shape, (stats.counts.shape[0], data.n_categorical)
    variance, variance_scale = np.empty(shape_numeric), np.empty(shape_numeric)
    gain, reference = np.empty(shape_categorical), np.empty(shape_categorical)
    _update.scores(stats.counts, stats.numeric_counts, stats.sums_sq, np.ascontiguousarray(variances), stats.level_counts,
                   np.ascontiguousarray(log_eta_k), data.log_eta0, data.offsets, data.n_levels, shrink,
                   opts.terms.own_weight if shrink else 1.0, variance, variance_scale, gain, reference)
    return SelectionScores(variance, variance_scale, gain, reference, opts.terms.own_weight if shrink else 1.0)


@dataclass(frozen=True)
class Selection:
    """The selection rule's decision per cluster and feature, and what it compared.

    Arrays are (K, D) in the engine's feature order (numeric, then
    categorical). This is what :func:`select_features` decides, computed by
    the same code, so a view that reads it cannot disagree with the fit.

    Attributes
    ----------
    score : ndarray of float
        The number the rule ranks: the within-cluster variance (numeric,
        encoded units, lower is better) or the gain ``G_d - G_kd`` (categorical,
        nats summed over the cluster's rows, higher is better); under
        ``rho_selection="shrink"``, the shrunk scores.
    rank : ndarray of int
        1-based place of the feature among the cluster's features of its
        kind in the rule's order (scores rounded by :func:`significant`,
        ties to the lower index): 1 is chosen first.
    criterion : ndarray of float
        The number compared with ``cut``. Fixed budget: ``score``.
        Approximate budget: the variance (numeric, compared with eps_v) and
        the gain's share of ``G_d``, ``(G_d - G_kd) / G_d`` (categorical,
        compared with eps_c; 0 where ``G_d = 0``).
    cut : ndarray of float
        Where the rule splits ``criterion``. Fixed budget: between the last
        kept and the first dropped score of the cluster's features of that
        kind (their mean; the last kept, or the first dropped, score itself
        when all, or none, are kept). Approximate: eps_v or eps_c.
    selected : ndarray of bool
        The selection v. Numeric features are selected at or below the cut
        (fixed: rank <= n_keep; approximate: variance < eps_v), categorical
        ones above it.
    n_keep : tuple of int or None
        Fixed budget: features kept per cluster, (numeric, categorical).
    """

    score: np.ndarray
    rank: np.ndarray
    criterion: np.ndarray
    cut: np.ndarray
    selected: np.ndarray
    n_keep: tuple[int, int] | None


def _budget_cut(score: np.ndarray, rank: np.ndarray, keep) -> np.ndarray:
    """Per row, a value between the ``keep``-th and the next score in rank order, broadcast to ``score``.

    ``keep`` is one count for every row, or one per row (pins make it differ).
    """
    if score.shape[1] == 0:
        return np.zeros_like(score)
    keep = np.broadcast_to(np.asarray(keep, dtype=np.int64), (score.shape[0],))
    ordered = np.take_along_axis(score, np.argsort(rank, axis=1), axis=1)
    rows = np.arange(score.shape[0])
    last = ordered[rows, np.maximum(keep, 1) - 1]
    first_out = ordered[rows, np.minimum(keep, score.shape[1] - 1)]
    cut = np.where(keep == 0, first_out, np.where(keep >= score.shape[1], last, 0.5 * (last + first_out)))
    return np.broadcast_to(cut[:, None], score.shape).copy()


_BUDGET_CODES = {"fixed": _update.FIXED, "approximate": _update.APPROXIMATE, "all": _update.ALL}


def _pins_or_free(pins: np.ndarray | None, n_clusters: int, n_features: int) -> np.ndarray:
    """``pins`` as the compiled update reads them, (K, D) int8; no pins: every feature free (0)."""
    if pins is None:
        return np.zeros((n_clusters, n_features), dtype=np.int8)
    return np.ascontiguousarray(pins, dtype=np.int8)


def _budget_arguments(data: EncodedData, opts: Options) -> tuple:
    """The selection rule's settings as :func:`craft._update.select` reads them."""
    keep_num, keep_cat = budget_counts(opts.terms.m, data.n_numeric, data.n_categorical)
    return _BUDGET_CODES[opts.budget], keep_num, keep_cat, float(opts.eps_v), float(opts.eps_c)


def _decided(data: EncodedData, scores: SelectionScores, opts: Options,
             pins: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranks of each kind and the selection v (K, D floats), as the compiled update decides them."""
    n_clusters = scores.variance.shape[0]
    num_rank = np.empty(scores.variance.shape, dtype=np.int64)
    cat_rank = np.empty(scores.gain.shape, dtype=np.int64)
    selected = np.empty((n_clusters, data.n_features))
    arguments = (scores.variance, scores.variance_scale, scores.gain, scores.reference,
                 _pins_or_free(pins, n_clusters, data.n_features), *_budget_arguments(data, opts), num_rank, cat_rank,
                 selected)
    _update.select(*arguments)
    return num_rank, cat_rank, selected


def feature_selection(
    data: EncodedData, stats: Statistics, variances: np.ndarray, log_eta_k: np.ndarray, opts: Options,
    pins: np.ndarray | None = None,
) -> Selection:
    """The selection of every cluster with its scores, ranks and cut (see :class:`Selection`).

    ``pins`` (K, D) int8 (+1 on, -1 off, 0 free; None: all free): a pinned-on
    feature is selected and ranked before the free ones of its kind, a
    pinned-off one never selected and ranked after them; the budget's rule
    chooses among the free ones (fixed: ``n_keep`` less the pinned-on
    features of that kind, none once those fill or pass it). The scores,
    ranks and decision are the compiled update's (:mod:`craft._update`), the
    very numbers each pass selects by; the cut and criterion are read from them.
    """
    n_numeric = data.n_numeric
    scores = selection_scores(data, stats, variances, log_eta_k, opts)
    num_rank, cat_rank, chosen = _decided(data, scores, opts, pins)
    selected = chosen > 0.5
    score = np.hstack([scores.variance, scores.gain])
    rank = np.hstack([num_rank, cat_rank])
    if opts.budget == "all":
        return Selection(score, rank, score, score.copy(), selected, None)
    if opts.budget == "fixed":
        keep_num, keep_cat = budget_counts(opts.terms.m, n_numeric, data.n_categorical)
        kept_num, kept_cat = selected[:, :n_numeric].sum(axis=1), selected[:, n_numeric:].sum(axis=1)
        cut = np.hstack([_budget_cut(scores.variance, num_rank, kept_num), _budget_cut(scores.gain, cat_rank, kept_cat)])
        return Selection(score, rank, score, cut, selected, (keep_num, keep_cat))
    share = np.divide(scores.gain, scores.reference, out=np.zeros_like(scores.gain), where=scores.reference > 0)
    cut = np.hstack([np.full(scores.variance.shape, opts.eps_v), np.full(scores.gain.shape, opts.eps_c)])
    return Selection(score, rank, np.hstack([scores.variance, share]), cut, selected, None)


def select_features(
    data: EncodedData, stats: Statistics, variances: np.ndarray, log_eta_k: np.ndarray, opts: Options,
    pins: np.ndarray | None = None,
) -> np.ndarray:
    """The selection v of every cluster, as floats (K, D), as :func:`feature_selection` decides it."""
    return _decided(data, selection_scores(data, stats, variances, log_eta_k, opts), opts, pins)[2]


def merged_statistics(stats: Statistics, a: int, b: int) -> Statistics:
    """The statistics of the partition with clusters ``a`` and ``b`` pooled into ``a`` (``b`` dropped): sums add."""
    keep = np.flatnonzero(np.arange(stats.counts.shape[0]) != b)
    pooled = {}
    for name in ("counts", "numeric_counts", "sums", "sums_sq", "level_counts"):
        values = np.array(getattr(stats, name), copy=True)
        values[a] += values[b]
        pooled[name] = values[keep]
    return Statistics(**pooled)


#: Most clusters :func:`cheapest_merge` pairs up (a pair's objective is one update: K (K - 1) / 2 of them).
MERGE_CLUSTERS = 60


def cheapest_merge(template: EncodedData, stats: Statistics, opts: Options) -> tuple[int, int, float] | None:
    """The two clusters whose pooling changes the objective least, and that change (< 0: pooling lowers it).

    Each pair's objective is that of the pooled partition's clusters
    (:func:`clusters_from_statistics`, :func:`objective`), so it counts
    everything a merge changes: one cluster's price ``lambda + D F0``
    saved, the pooled cluster's wider spread and its own selection, and
    under ``rho_selection="shrink"`` every cluster's pooled scores. Ties go
    to the first pair. None with fewer than two or more than
    :data:`MERGE_CLUSTERS` clusters.
    """
    n_clusters = stats.counts.shape[0]
    if not 2 <= n_clusters <= MERGE_CLUSTERS:
        return None
    before, _ = objective(template, clusters_from_statistics(template, stats, opts), stats, opts)
    best: tuple[int, int, float] | None = None
    for a in range(n_clusters):
        for b in range(a + 1, n_clusters):
            pooled = merged_statistics(stats, a, b)
            after, _ = objective(template, clusters_from_statistics(template, pooled, opts), pooled, opts)
            if best is None or after - before < best[2]:
                best = (a, b, after - before)
    return best


def fit_clusters(data: EncodedData, labels: np.ndarray, n_clusters: int, opts: Options,
                 pins: np.ndarray | None = None) -> tuple[Clusters, Statistics]:
    """Means, floored variances, smoothed eta and selection from a labelling (``pins`` as in :func:`feature_selection`)."""
    stats = statistics(data, labels, n_clusters)
    return clusters_from_statistics(data, stats, opts, pins), stats


def clusters_from_statistics(data: EncodedData, stats: Statistics, opts: Options,
                             pins: np.ndarray | None = None) -> Clusters:
    """Cluster parameters from sufficient statistics; only ``data``'s global tables are read.

    ``pins`` (K, D) int8 constrain the selection (:func:`feature_selection`).
    """
    n_clusters = stats.counts.shape[0]
    log_eta_k = log_eta(data, stats, opts.smoothing)
    shape_numeric, shape_categorical = stats.sums.shape, (n_clusters, data.n_categorical)
    means, variances, floored = np.empty(shape_numeric), np.empty(shape_numeric), np.empty(shape_numeric)
    variance, variance_scale = np.empty(shape_numeric), np.empty(shape_numeric)
    gain, reference = np.empty(shape_categorical), np.empty(shape_categorical)
    weights = np.empty((n_clusters, data.n_features))
    shrink = opts.rho_selection != "paper"
    arguments = (
        stats.counts, stats.numeric_counts, stats.sums, stats.sums_sq, stats.level_counts, log_eta_k, data.global_mean,
        data.global_var, data.log_eta0, data.offsets, data.n_levels, float(opts.min_variance),
        np.nan if opts.fixed_variance is None else float(opts.fixed_variance), shrink,
        opts.terms.own_weight if shrink else 1.0, *_budget_arguments(data, opts),
        _pins_or_free(pins, n_clusters, data.n_features), means, variances, floored, variance, variance_scale, gain,
        reference, np.empty(shape_numeric, dtype=np.int64), np.empty(shape_categorical, dtype=np.int64), weights,
    )
    _update.update(*arguments)
    return Clusters(means, floored, log_eta_k, weights)


@dataclass(frozen=True)
class ObjectiveTerms:
    """The paper's objective split into its terms.

    Attributes
    ----------
    numeric : float
        ``sum_k sum_{d in Num} v_kd n_kd var_kd / (2 sigma_kd^2)``, ``n_kd`` the
        observed cells of feature d in cluster k (its rows on a complete table).
    categorical : float
        Every row's categorical cost: ``-log eta_kd`` of selected features,
        ``-log eta_0d`` of the others.
    regularization : float
        ``(lambda + D F0) K``.
    feature_control : float
        ``F_Delta sum_k |v_k|``.
    numeric_nll : float
        ``sum_k sum_{d in Num} v_kd n_kd log sigma_kd``: not a term of the
        objective; it breaks ties between restarts (see :func:`objective`).
    noise : float
        ``(lambda + D F0)`` times the rows labelled noise (``noise=True``;
        else 0): each costs what the cluster it would have opened costs.
    """

    numeric: float
    categorical: float
    regularization: float
    feature_control: float
    numeric_nll: float
    noise: float = 0.0

    @property
    def total(self) -> float:
        """The objective: the sum of the terms."""
        return self.numeric + self.categorical + self.regularization + self.feature_control + self.noise


def objective_terms(
    data: EncodedData, clusters: Clusters, stats: Statistics, opts: Options, n_noise: int = 0
) -> ObjectiveTerms:
    """The paper's objective term by term, for clusters fitted to ``stats`` (``n_noise`` rows labelled noise)."""
    _, variances = raw_variances(stats, data)
    numeric, categorical, nll = _update.objective_parts(
        np.ascontiguousarray(clusters.weights, dtype=np.float64), np.ascontiguousarray(clusters.variances),
        np.log(clusters.variances), np.ascontiguousarray(clusters.log_eta), stats.numeric_counts, variances,
        stats.level_counts, data.log_eta0, data.offsets, data.n_levels,
    )
    regularization = opts.threshold(data.n_features) * clusters.n_clusters
    feature_control = opts.terms.f_delta * float(clusters.weights.sum())
    noise = opts.threshold(data.n_features) * n_noise
    return ObjectiveTerms(float(numeric), float(categorical), regularization, feature_control, float(nll), noise)


def objective(
    data: EncodedData, clusters: Clusters, stats: Statistics, opts: Options, n_noise: int = 0
) -> tuple[float, float]:
    """The paper's objective, and the numeric Gaussian normaliser used to break its ties.

    The second value, ``sum_k sum_{d in Num, v_kd = 1} n_kd log sigma_kd``, is
    the part of the numeric likelihood that the asymptotics drop (``n_kd``:
    the observed cells of feature d in cluster k). A selected numeric
    feature adds ``n_kd var_kd / (2 sigma_kd^2)``: ``n_kd / 2`` whatever the
    partition while the cluster's variance is above the floor (sigma^2 is
    then that variance), ``n_kd var_kd / (2 floor)`` below it. Restarts on
    numeric data so often tie on the objective; this term then decides.
    """
    terms = objective_terms(data, clusters, stats, opts, n_noise)
    return terms.total, terms.numeric_nll


@dataclass(frozen=True)
class Inspection:
    """What the engine computed for one labelling: the inspection surface of a fit.

    Attributes
    ----------
    labels : ndarray of int, shape (N,)
    clusters : Clusters
        Means, floored variances, level log-probabilities and selection.
    stats : Statistics
    selection : Selection
        The selection rule's scores, ranks, cut and decision.
    objective : ObjectiveTerms
    """

    labels: np.ndarray | None
    clusters: Clusters
    stats: Statistics
    selection: Selection
    objective: ObjectiveTerms


def inspect(
    data: EncodedData, clusters: Clusters, stats: Statistics, opts: Options, labels=None, n_noise: int = 0,
    pins: np.ndarray | None = None,
) -> Inspection:
    """The selection and objective terms of ``clusters`` fitted to ``stats`` (``n_noise`` rows labelled noise).

    Only ``data``'s global tables are read (a partitioned backend passes
    its template), so every backend inspects its fit with this one function.
    ``pins``: the run's pins of these clusters (:class:`Pins`), None without.
    """
    _, variances = raw_variances(stats, data)
    selection = feature_selection(data, stats, variances, clusters.log_eta, opts, pins)
    return Inspection(labels, clusters, stats, selection, objective_terms(data, clusters, stats, opts, n_noise))


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
    if opts.noise:
        return nearest_or_noise(data, clusters, opts)[1], clusters
    threshold = opts.threshold(data.n_features)
    best_old, labels = nearest_cluster(data, clusters, opts.terms)
    candidates = opening_candidates(data, best_old, threshold)
    if candidates.size:
        walk = OpeningWalk(clusters, opts, rng)
        walk.visit(data.take(candidates), candidates, best_old[candidates])
        labels, clusters = walk.assign(data, labels, best_old, clusters)
    if opts.links is not None:
        return linked_assignment(data, labels, clusters, opts, rng)
    return labels, clusters


def linked_assignment(data: EncodedData, labels: np.ndarray, clusters: Clusters, opts: Options,
                      rng: np.random.Generator) -> tuple[np.ndarray, Clusters]:
    """``labels`` of a pass with every unit of ``opts.links`` placed (:mod:`craft._links`).

    Each unit, in the order of its first row, takes the cluster of least
    summed cost among those not holding a unit it is cannot-linked to and
    placed before it; where every cluster is barred it opens one, set from
    its first row with a selection drawn as the pass draws one (at the cost
    of a cluster, λ + D F0). Returns the labels and the clusters, those a
    unit opened appended.
    """
    links = opts.links
    assert links is not None
    rows = np.fromiter((row for unit in links.units for row in unit), dtype=np.int64)
    starts = np.cumsum([0, *(len(unit) for unit in links.units)])[:-1]
    linked = data.take(rows)
    unit_costs = np.add.reduceat(cost_matrix(linked, clusters, opts.terms), starts, axis=0)
    barred = links.barred()
    placed = np.full(len(links.units), -1, dtype=np.int64)
    labels = labels.copy()
    selected = clusters.weights.sum(axis=0)
    for u, unit in enumerate(links.units):
        cost = unit_costs[u].copy()
        cost[placed[barred[u]]] = np.inf
        if np.isfinite(cost).any():
            cluster = int(np.argmin(cost))
        else:
            probability = opts.terms.selection_probability(selected / clusters.n_clusters)
            v = opts.draw_selection(rng, probability, data.n_features)
            selected = selected + v
            opened = new_clusters(data, np.array([unit[0]]), v, opts)
            clusters = clusters.stack(opened)
            _check_cluster_budget(clusters.n_clusters, opts)
            unit_costs = np.hstack([unit_costs, np.add.reduceat(cost_matrix(linked, opened, opts.terms), starts, axis=0)])
            cluster = clusters.n_clusters - 1
        placed[u] = cluster
        labels[list(unit)] = cluster
    return labels, clusters


def has_observed_cell(data: EncodedData, rows: np.ndarray | None = None) -> np.ndarray:
    """Whether each of ``rows`` (default: all) has at least one observed cell, as bools.

    Only marginalised missing cells are unobserved (a numeric cell whose
    ``observed`` is false, a categorical code -1); an imputed cell is observed.
    """
    rows = np.arange(data.n_samples) if rows is None else rows
    if data.n_numeric and data.observed is None:
        return np.ones(rows.size, dtype=bool)
    seen = np.asarray((data.codes[rows] >= 0).any(axis=1))
    if data.observed is not None:
        seen |= data.observed[rows].any(axis=1)
    return seen


def nearest_or_noise(data: EncodedData, clusters: Clusters, opts: Options) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_cluster`, with ``opts.noise`` the rows that fit no cluster labelled -1.

    A row fits no cluster when it would open one (:func:`opening_candidates`:
    beyond ``lambda + D F0`` from every cluster, with an observed cell). Under
    ``noise=True`` such a row is trimmed rather than opening a cluster: the
    pass, the last assignment of an unconverged run and ``predict`` all label
    it -1 here, so ``labels_`` equals ``predict`` of the fitted table.
    """
    best, labels = nearest_cluster(data, clusters, opts.terms)
    if opts.noise:
        labels[opening_candidates(data, best, opts.threshold(data.n_features))] = -1
    return best, labels


def opening_candidates(data: EncodedData, best: np.ndarray, threshold: float) -> np.ndarray:
    """Rows that may open a cluster in a pass: beyond ``threshold`` from every cluster, with an observed cell.

    A row with no observed cell costs ``|v_k| F_Delta`` to every cluster
    whatever its parameters: it carries no evidence for a cluster of its own
    and never opens one (``docs/numerics.md``). It takes its nearest cluster
    among those that exist at its turn, as every row that opens none does.
    """
    beyond = np.flatnonzero(best > threshold)
    return beyond[has_observed_cell(data, beyond)]


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


def initial_clusters(data: EncodedData | Backend, opts: Options, rng: np.random.Generator) -> Clusters:
    """The clusters that exist when the first pass starts.

    ``init="random"`` is the paper's: one cluster at a random point with
    ``v ~ Bernoulli(m)``. ``init="craft++"`` starts the same way, then keeps
    opening clusters, as the pass would, at points beyond the threshold from
    every cluster so far, but chooses each such point at random with
    probability proportional to its distance (k-means++ seeding on CRAFT's own
    distance) instead of taking the first one in row order. With a target
    number of clusters (``n_seeds``), the first ``n_seeds`` clusters are
    opened this way whatever their distance, so a fit asked for k starts
    from k. ``data`` is an :class:`EncodedData` or a backend (see
    :class:`Backend`): the per-row best distance is the backend's state.
    """
    backend = as_backend(data)
    n_features = backend.template.n_features
    first = int(rng.integers(backend.n_samples))
    v = opts.draw_selection(rng, opts.terms.m, n_features)
    seed = backend.seed_row(first)
    clusters = new_clusters(seed[-1], np.array([0]), v, opts)
    if opts.init == "random":
        return clusters
    threshold = opts.threshold(n_features)
    state = None
    while True:
        if opts.noise and opts.n_seeds > 1 and clusters.n_clusters >= opts.n_seeds:
            # With noise rows and k asked for, the k seeds are the clusters: the
            # rows still beyond the threshold are noise candidates, not seeds.
            return clusters
        # The first n_seeds clusters open at any point (a target k asks for
        # them); beyond that only points the pass itself would open qualify.
        floor = 0.0 if clusters.n_clusters < opts.n_seeds else threshold
        state, n_beyond = backend.lower(state, seed, v, opts, floor)
        if n_beyond == 0:
            return clusters
        seed = backend.draw(state, rng.random(), floor)
        probability = opts.terms.selection_probability(clusters.weights.mean(axis=0))
        v = opts.draw_selection(rng, probability, n_features)
        clusters = clusters.stack(new_clusters(seed[-1], np.array([0]), v, opts))
        _check_cluster_budget(clusters.n_clusters, opts)


# ---------------------------------------------------------------------------
# A run


class Backend(Protocol):
    """How the engine visits the rows: the one interface of its two backends.

    :func:`run`, :func:`initial_clusters`, :func:`farthest_first_lambda`,
    :func:`default_lambda` and the estimator's restarts and λ search
    (``CRAFT._fit_runs``) drive any backend through these methods; the
    iteration loop, the updates and the objective stay in the engine, a
    backend only says how rows are visited. :class:`InMemory` holds one
    table; ``craft._dask_backend._Partitions`` maps over the partitions of a
    dask table. What a backend keeps per row is its own: ``labels`` (an
    array here, one future per partition there) and the seeding ``state``
    (the best distances) are handed back to it unread, and a seed handle is
    a tuple whose last item is the row's :class:`EncodedData`.

    Attributes
    ----------
    template : EncodedData
        The global tables (eta_0, variances, level offsets) the updates read.
    n_samples : int
    """

    template: EncodedData
    n_samples: int

    def seed_row(self, row: int) -> tuple:
        """A handle of one row for seeding, its encoding last."""

    def lower(self, state: Any, seed: tuple, weights: np.ndarray, opts: Options, floor: float) -> tuple[Any, int]:
        """Every row's best distance lowered by a cluster at ``seed`` (its own row then out of reach),
        and how many rows lie beyond ``floor``."""

    def draw(self, state: Any, uniform: float, floor: float) -> tuple:
        """The handle of the row beyond ``floor`` drawn in proportion to its best distance."""

    def farthest(self, state: Any) -> tuple[tuple, float]:
        """The handle of the row farthest from its nearest seed, and that distance."""

    def initial_labels(self) -> Any:
        """The labelling the first pass is compared with: every row in cluster 0."""

    def assign(self, clusters: Clusters, opts: Options, rng: np.random.Generator,
               labels: Any) -> tuple[Any, Statistics, int, int, np.ndarray]:
        """One pass, empty clusters dropped: ``(labels, statistics, n_changed, n_clusters_in_pass, kept)``,
        ``kept`` the numbers in the pass (before dropping) of the clusters kept, in order."""

    def nearest(self, clusters: Clusters, opts: Options, labels: Any) -> tuple[Any, Statistics, int, np.ndarray]:
        """Every row to its nearest cluster, none opened: ``(labels, statistics, n_changed, kept)``."""

    def kept_labels(self, labels: Any) -> np.ndarray | None:
        """The labels an iteration record keeps (None where they stay with the backend)."""

    def one_cluster_statistics(self) -> Statistics:
        """Statistics of every row in one cluster."""

    def nearest_cost_total(self, clusters: Clusters, terms: PriorTerms) -> float:
        """Sum over the rows of the smallest distance to ``clusters``."""

    def sample(self, n_rows: int, rng: np.random.Generator) -> EncodedData:
        """A uniform sample of ``n_rows`` rows (fewer than the backend's), in row order, held in this process.

        The rows are ``np.sort(rng.choice(n_samples, n_rows, replace=False))``
        on every backend, so one stream gives one sample.
        """

    def distinct_rows(self, at_most: int) -> int:
        """The number of distinct rows (:func:`distinct_digests`), or ``at_most`` if there are more."""


class InMemory:
    """The engine's backend for data held in one process (see :class:`Backend`).

    Attributes
    ----------
    template : EncodedData
        The global tables (eta_0, variances, level offsets) the updates read.
    n_samples : int
    """

    def __init__(self, data: EncodedData):
        self.data = data
        self.template = data
        self.n_samples = data.n_samples

    def seed_row(self, row: int) -> tuple[int, EncodedData]:
        return row, self.data.take(np.array([row]))

    def lower(self, best, seed: tuple, weights: np.ndarray, opts: Options, floor: float) -> tuple[np.ndarray, int]:
        row, seed_data = seed
        distance = nearest_cluster(self.data, new_clusters(seed_data, np.array([0]), weights, opts), opts.terms)[0]
        best = np.minimum(distance, opts.seeding_cap(self.data.n_features)) if best is None else np.minimum(best, distance)
        best[row] = -np.inf
        # A row without an observed cell is never a seed (it opens no cluster, see opening_candidates).
        best[~has_observed_cell(self.data)] = -np.inf
        return best, int(np.count_nonzero(best > floor))

    def draw(self, best: np.ndarray, uniform: float, floor: float) -> tuple[int, EncodedData]:
        """:func:`sample_proportional` over the rows beyond ``floor``."""
        beyond = np.flatnonzero(best > floor)
        return self.seed_row(int(beyond[sample_proportional(best[beyond], uniform)]))

    def farthest(self, best: np.ndarray) -> tuple[tuple[int, EncodedData], float]:
        row = int(np.argmax(best))
        return self.seed_row(row), float(best[row])

    def initial_labels(self) -> np.ndarray:
        return np.zeros(self.n_samples, dtype=np.int64)

    def assign(self, clusters: Clusters, opts: Options, rng: np.random.Generator, labels: np.ndarray):
        proposed, clusters = assignment_pass(self.data, clusters, opts, rng)
        settled, stats, n_changed, kept = self._settled(proposed, clusters.n_clusters, labels)
        return settled, stats, n_changed, clusters.n_clusters, kept

    def nearest(self, clusters: Clusters, opts: Options, labels: np.ndarray):
        if opts.links is not None:
            # The last pass's labels met every link, and an assignment without its units could break one.
            return self._settled(labels.copy(), clusters.n_clusters, labels)
        _, final = nearest_or_noise(self.data, clusters, opts)
        return self._settled(final, clusters.n_clusters, labels)

    def _settled(self, proposed: np.ndarray, n_clusters: int,
                 labels: np.ndarray) -> tuple[np.ndarray, Statistics, int, np.ndarray]:
        proposed, kept = compact_kept(proposed, n_clusters)
        return proposed, statistics(self.data, proposed, kept.size), int((proposed != labels).sum()), kept

    def kept_labels(self, labels: np.ndarray) -> np.ndarray:
        return labels.astype(np.int32)

    def one_cluster_statistics(self) -> Statistics:
        return statistics(self.data, np.zeros(self.n_samples, dtype=np.int64), 1)

    def nearest_cost_total(self, clusters: Clusters, terms: PriorTerms) -> float:
        return float(nearest_cluster(self.data, clusters, terms)[0].sum())

    def sample(self, n_rows: int, rng: np.random.Generator) -> EncodedData:
        return self.data.take(np.sort(rng.choice(self.n_samples, size=n_rows, replace=False)))

    def distinct_rows(self, at_most: int) -> int:
        # A table's first rows nearly always hold ``at_most`` (the k asked for) distinct rows already, and
        # then the answer is known without digesting and sorting every row (8 % of a million-row fit's time).
        head = min(self.n_samples, max(1_000, 10 * at_most))
        if head < self.n_samples and distinct_digests(self.data.take(np.arange(head))).size >= at_most:
            return at_most
        return min(distinct_digests(self.data).size, at_most)


def distinct_digests(data: EncodedData) -> np.ndarray:
    """A 64-bit hash of every distinct row of the encoded table (missing cells included as such), sorted.

    One vectorized pass per column (a collision could only undercount,
    with odds of about N² / 2^64). Distinct rows over several pieces of a
    table are the distinct digests of the pieces' digests together.
    """
    # +0.0 folds -0.0 into 0.0, so that equal numbers have equal bits.
    columns = [(data.numeric[:, j] + 0.0).view(np.uint64) for j in range(data.n_numeric)]
    columns += [data.codes[:, q].view(np.uint64) for q in range(data.n_categorical)]
    if data.observed is not None:
        columns += [data.observed[:, j].astype(np.uint64) for j in range(data.n_numeric)]
    digest = np.full(data.n_samples, 14695981039346656037, dtype=np.uint64)  # FNV-1a, one 64-bit word at a time
    for column in columns:
        digest = (digest ^ column) * np.uint64(1099511628211)
        digest ^= digest >> np.uint64(29)
    return unique_sorted(digest)


def unique_sorted(digest: np.ndarray) -> np.ndarray:
    """The distinct values of ``digest``, sorted (a sort and a comparison: several times faster than
    ``np.unique`` on a million rows)."""
    digest = np.sort(digest)
    if digest.size < 2:
        return digest
    return digest[np.concatenate([[True], digest[1:] != digest[:-1]])]


def as_backend(data: EncodedData | Backend) -> Backend:
    """``data`` as a backend: an :class:`EncodedData` is wrapped in :class:`InMemory`."""
    return InMemory(data) if isinstance(data, EncodedData) else data


def run(
    data: EncodedData | Backend,
    opts: Options,
    rng: np.random.Generator,
    *,
    restart: int = 0,
    callback=None,
    initial: Clusters | None = None,
) -> RunResult:
    """Iterate passes and updates until the assignments stop changing.

    ``data`` is an :class:`EncodedData` or a backend (see :class:`Backend`);
    every backend runs this one loop. The first pass starts from ``initial``
    when given (e.g. a run's clusters on a sample of the rows), else from the
    backend's :func:`initial_clusters`.
    """
    backend = as_backend(data)
    template = backend.template
    clusters = initial_clusters(backend, opts, rng) if initial is None else initial
    labels = backend.initial_labels()
    history: list[IterationRecord] = []
    converged = False
    stats = None
    pins = opts.pinned.start(clusters.n_clusters, template.n_features) if opts.pinned is not None else None
    for iteration in range(1, opts.max_iter + 1):
        n_before = clusters.n_clusters
        labels, stats, n_changed, n_in_pass, kept = backend.assign(clusters, opts, rng, labels)
        _check_some_cluster(stats, opts)
        pins = _carried(pins, opts, n_in_pass, kept)
        clusters = clusters_from_statistics(template, stats, opts, pins)
        value, _ = objective(template, clusters, stats, opts, _noise_rows(backend, stats))
        record = IterationRecord(
            iteration=iteration,
            objective=value,
            n_clusters=clusters.n_clusters,
            n_changed=n_changed,
            n_opened=n_in_pass - n_before,
            feature_mask=clusters.weights > 0.5,
            labels=backend.kept_labels(labels) if opts.keep_labels else None,
            restart=restart,
            lam=opts.lam,
            pins=pins,
        )
        history.append(record)
        if callback is not None:
            callback(record)
        if n_changed == 0:
            converged = True
            break
    if not converged:
        # A last assignment without opening keeps labels_ equal to predict(X).
        final, final_stats, n_changed, kept = backend.nearest(clusters, opts, labels)
        if final_stats.counts.shape[0] != clusters.n_clusters or n_changed:
            labels, stats = final, final_stats
            pins = _carried(pins, opts, clusters.n_clusters, kept)
            clusters = clusters_from_statistics(template, stats, opts, pins)
    assert stats is not None  # max_iter >= 1 (validated), so a pass ran
    _check_some_cluster(stats, opts)
    n_noise = _noise_rows(backend, stats)
    value, nll = objective(template, clusters, stats, opts, n_noise)
    return RunResult(labels, clusters, stats, value, nll, len(history), converged, history, n_noise, pins)


def _carried(pins: np.ndarray | None, opts: Options, n_in_pass: int, kept: np.ndarray) -> np.ndarray | None:
    """The pins of the clusters a pass kept: each cluster's own, and those for every cluster for one it opened."""
    if pins is None or opts.pinned is None:
        return None
    return opts.pinned.extended(pins, n_in_pass)[kept]


def _noise_rows(backend: Backend, stats: Statistics) -> int:
    """Rows in no cluster: labelled noise (every row is in a cluster unless ``noise=True``)."""
    return int(round(backend.n_samples - float(stats.counts.sum())))


def _check_some_cluster(stats: Statistics, opts: Options) -> None:
    if stats.counts.size == 0:
        raise EveryRowNoise(
            f"With noise=True every row lies beyond lambda + D F0 from every cluster at lam={opts.lam:.4g}, so no "
            "cluster is left: raise lam (or ask for fewer clusters with k)."
        )


def compact(labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, int]:
    """Drop empty clusters and renumber labels 0..K-1, keeping their order (noise stays -1)."""
    labels, kept = compact_kept(labels, n_clusters)
    return labels, kept.size


def compact_kept(labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`compact`, with which of the ``n_clusters`` clusters were kept (their old numbers, in order)."""
    present = np.bincount(labels[labels >= 0], minlength=n_clusters) > 0
    if present.all():
        return labels, np.arange(n_clusters)
    return renumber(labels, present), np.flatnonzero(present)


def renumber(labels: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Labels of the clusters ``present`` renumbered 0..K-1 in order; noise (-1) stays -1."""
    mapping = np.cumsum(present) - 1
    return np.where(labels >= 0, mapping[np.maximum(labels, 0)], -1)


# ---------------------------------------------------------------------------
# Lambda


def farthest_first_lambda(data: EncodedData | Backend, k: int, opts: Options, rng: np.random.Generator) -> float:
    """The paper's farthest-first heuristic on CRAFT's own distance.

    T starts as one random point; each of ``k`` rounds adds the point farthest
    from T (its distance being the smallest distance to a member of T, each
    member taken as a new cluster with every feature weighted by m); lambda is
    the distance of the last point added. T so ends with k + 1 points, and
    lambda is how far the farthest point lies from the first k of them.

    A point once in T has distance -inf, so it is never added again. Where
    fewer than k points lie at a positive distance from T (k exceeds the
    distinct rows), lambda is the last positive distance found; NaN when
    there is none (the caller refuses it: lambda must be > 0). ``data`` is
    an :class:`EncodedData` or a backend (see :class:`Backend`).
    """
    backend = as_backend(data)
    weights = np.full(backend.template.n_features, opts.terms.m)
    seed = backend.seed_row(int(rng.integers(backend.n_samples)))
    best = None
    lam = float("nan")
    for _ in range(k):
        best, _ = backend.lower(best, seed, weights, opts, np.inf)
        farthest, distance = backend.farthest(best)
        if not (np.isfinite(distance) and distance > 0):
            break
        lam, seed = distance, farthest
    return lam


def default_lambda(data: EncodedData | Backend, opts: Options) -> float:
    """Lambda when neither lam nor k is given: the mean cost to a single global cluster.

    A point then opens a cluster when it costs more than about twice what a
    typical point costs in the one-cluster model (plus D F0). ``data`` is an
    :class:`EncodedData` or a backend (see :class:`Backend`).

    That mean can be <= 0: above m = 0.5 the feature-control term
    ``|v| F_Delta`` is negative, and under the approximate budget one cluster
    may select nothing (a discrepancy of 0). Lambda must be > 0, so it is then
    the mean discrepancy of the one cluster with every feature selected and
    no feature-control term, which is > 0 unless every used column is
    constant (``docs/numerics.md``).
    """
    backend = as_backend(data)
    clusters = clusters_from_statistics(backend.template, backend.one_cluster_statistics(), opts)
    mean_cost = backend.nearest_cost_total(clusters, opts.terms) / backend.n_samples
    if mean_cost > 0:
        return mean_cost
    every = replace(clusters, weights=np.ones_like(clusters.weights))
    total = backend.nearest_cost_total(every, opts.terms) - backend.n_samples * every.weights.sum() * opts.terms.f_delta
    return total / backend.n_samples
