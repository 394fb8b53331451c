"""How the engine visits the rows: the :class:`Backend` protocol, its in-memory backend (:class:`InMemory`),
and what the backends share: the proportional draw of a seed, the digests of distinct rows, and the labels
renumbered once emptied clusters are dropped.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ._distance import nearest_cluster
from ._engine_types import Clusters, Options, Statistics
from ._pass import assignment_pass, has_observed_cell, nearest_or_noise, new_clusters
from ._statistics import statistics
from .encoding import EncodedData
from .priors import PriorTerms


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
        # The statistics of the proposed labels say which clusters emptied: those of the compacted labels are
        # theirs without the empty clusters' zeros (each cluster's sums run over the same rows in the same order).
        stats = statistics(self.data, proposed, n_clusters)
        present = stats.counts > 0
        if present.all():
            kept = np.arange(n_clusters)
        else:
            proposed, kept = renumber(proposed, present), np.flatnonzero(present)
            stats = stats.take(kept)
        return proposed, stats, int((proposed != labels).sum()), kept

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


def sample_proportional(weights: np.ndarray, uniform: float) -> int:
    """Index drawn with probability proportional to ``weights``, given one uniform draw.

    Written with an explicit cumulative sum so that a partitioned backend can
    reproduce the draw from per-partition totals.
    """
    cumulative = np.cumsum(weights)
    return min(int(np.searchsorted(cumulative, uniform * cumulative[-1], side="right")), weights.size - 1)


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
