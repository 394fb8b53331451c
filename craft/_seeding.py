"""The clusters a run starts from (:func:`initial_clusters`: the paper's random start, craft++ seeding),
and lambda where it is not given: the farthest-first heuristic for a target k, and the default.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._backend import Backend, as_backend
from ._engine_types import Clusters, Options, check_cluster_budget
from ._pass import new_clusters
from ._statistics import clusters_from_statistics
from .encoding import EncodedData


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
        check_cluster_budget(clusters.n_clusters, opts)


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
