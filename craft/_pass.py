"""The assignment pass of Algorithm CRAFT: every row to its nearest cluster, the rows beyond lambda + D F0
from every cluster walked in order to open clusters (:class:`OpeningWalk`, :func:`new_clusters`), linked rows
placed as units (:func:`linked_assignment`), and under ``noise=True`` the rows that fit no cluster labelled -1
(:func:`nearest_or_noise`, :func:`noise_threshold`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._distance import cost_matrix, nearest_cluster
from ._engine_types import Clusters, Options, Statistics, check_cluster_budget
from ._statistics import raw_variances
from .encoding import EncodedData


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
            check_cluster_budget(clusters.n_clusters, opts)
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
            check_cluster_budget(self.n_existing, opts)
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
