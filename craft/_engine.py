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

The engine's jobs live in private sibling modules, each importing only
those below it (none imports this one): :mod:`craft._engine_types` (the
shared types), :mod:`craft._distance` (d_nk), :mod:`craft._statistics`
(statistics to parameters, the selection, the objective),
:mod:`craft._pass` (the assignment pass), :mod:`craft._backend` (the
``Backend`` protocol and :class:`InMemory`) and :mod:`craft._seeding` (the
first clusters, lambda's heuristics). This module runs the loop
(:func:`run`) and re-exports their names, so that ``_engine.<name>`` keeps
reaching each of them.
"""

from __future__ import annotations

import numpy as np

# The names of the engine's modules, re-exported: ``_engine.<name>`` is used across craft/, the app,
# the tests and the benchmarks.
from ._backend import (
    Backend as Backend,
    InMemory as InMemory,
    as_backend as as_backend,
    compact as compact,
    compact_kept as compact_kept,
    distinct_digests as distinct_digests,
    renumber as renumber,
    sample_proportional as sample_proportional,
    unique_sorted as unique_sorted,
)
from ._distance import (
    CostTerms as CostTerms,
    categorical_table as categorical_table,
    categorical_tables as categorical_tables,
    cost_matrix as cost_matrix,
    cost_terms as cost_terms,
    feature_costs as feature_costs,
    half_precision as half_precision,
    nearest_cluster as nearest_cluster,
    runner_up as runner_up,
)
from ._engine_types import (
    Clusters as Clusters,
    EveryRowNoise as EveryRowNoise,
    IterationRecord as IterationRecord,
    Options as Options,
    Pins as Pins,
    RunResult as RunResult,
    Statistics as Statistics,
    TooManyClusters as TooManyClusters,
    check_cluster_budget as check_cluster_budget,
)
from ._pass import (
    NOISE_ALPHA as NOISE_ALPHA,
    NOISE_CELLS as NOISE_CELLS,
    NOISE_DRAWS as NOISE_DRAWS,
    OpeningWalk as OpeningWalk,
    assignment_pass as assignment_pass,
    has_observed_cell as has_observed_cell,
    linked_assignment as linked_assignment,
    nearest_or_noise as nearest_or_noise,
    new_clusters as new_clusters,
    noise_threshold as noise_threshold,
    opening_candidates as opening_candidates,
)
from ._seeding import (
    default_lambda as default_lambda,
    farthest_first_lambda as farthest_first_lambda,
    initial_clusters as initial_clusters,
)
from ._statistics import (
    MERGE_CLUSTERS as MERGE_CLUSTERS,
    Inspection as Inspection,
    ObjectiveTerms as ObjectiveTerms,
    Selection as Selection,
    SelectionScores as SelectionScores,
    budget_counts as budget_counts,
    cheapest_merge as cheapest_merge,
    clusters_from_statistics as clusters_from_statistics,
    feature_selection as feature_selection,
    feature_sums as feature_sums,
    fit_clusters as fit_clusters,
    inspect as inspect,
    level_totals as level_totals,
    log_eta as log_eta,
    merged_statistics as merged_statistics,
    objective as objective,
    objective_terms as objective_terms,
    raw_variances as raw_variances,
    select_features as select_features,
    selection_scores as selection_scores,
    significant as significant,
    statistics as statistics,
)
from .encoding import EncodedData


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
