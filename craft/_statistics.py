"""From a labelling to cluster parameters: the sufficient statistics, the update (means, floored variances,
smoothed level distributions), the selection rule and its scores, the objective and its terms, the inspection
surface, and pooling two clusters (:func:`merged_statistics`, :func:`cheapest_merge`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels, _update
from ._engine_types import Clusters, Options, Statistics
from .encoding import EncodedData


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
