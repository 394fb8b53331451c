"""The engine's shared types: a run's options and pins, the clusters and their sufficient statistics, what
a run records and returns, and the errors that cut it short.

Every other module of the engine imports them from here, and none imports
:mod:`craft._engine`, so that the engine's modules form no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._links import Links
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


class TooManyClusters(Exception):
    """A run opened more than ``Options.max_clusters`` clusters (used to cut λ searches short)."""


class EveryRowNoise(CraftInputError):
    """Under ``noise=True`` a pass found every row beyond ``lambda + D F0`` from every cluster."""


def check_cluster_budget(n_clusters: int, opts: Options) -> None:
    """Stop a run that has opened more than ``opts.max_clusters`` clusters (:class:`TooManyClusters`)."""
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

    def take(self, clusters: np.ndarray) -> "Statistics":
        """The statistics of ``clusters`` only (indices), in their order."""
        return Statistics(self.counts[clusters], self.numeric_counts[clusters], self.sums[clusters],
                          self.sums_sq[clusters], self.level_counts[clusters])


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
