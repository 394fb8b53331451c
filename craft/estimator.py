"""The scikit-learn-style CRAFT estimator."""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import threading
import numbers
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClusterMixin, clone
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning

from . import _engine
from ._random import as_generator
from .encoding import MISSING_MODES, Encoder, EncodedData, numeric_column
from .exceptions import CraftInputError
from .priors import prior_terms
from .limits import check_columns
from ._lambda_search import SearchStep
from ._links import MAX_PAIRS, Links
from .schema import Schema, infer_schema


#: Above this many rows the λ search and the restarts run on a uniform sample
#: of this many rows, and only the best run is iterated on the whole table: a
#: pass costs time in proportion to the rows, while λ and the choice among
#: restarts settle on a sample (docs/numerics.md, docs/RESULTS.md "Whole fits
#: at scale"). Both backends read it (``CRAFT._fit_runs``).
SEARCH_ROWS = 50_000


@dataclasses.dataclass(frozen=True)
class Explanation:
    """:meth:`CRAFT.explain`'s answer: each feature's part of every row's cost and margin.

    Attributes
    ----------
    cluster : ndarray of int64, shape (n_rows,)
        The row's nearest cluster.
    runner_up : ndarray of int64, shape (n_rows,)
        Its next-nearest cluster (-1 when the model has one cluster).
    cost : DataFrame, shape (n_rows, n_used_features)
        Each feature's part of the row's distance to ``cluster``; a row sums
        to ``assign``'s ``cost``.
    margin : DataFrame, shape (n_rows, n_used_features)
        Each feature's part of (distance to ``runner_up``) - (distance to
        ``cluster``); a row sums to ``assign``'s ``margin``.
    """

    cluster: np.ndarray
    runner_up: np.ndarray
    cost: pd.DataFrame
    margin: pd.DataFrame


@dataclasses.dataclass
class _WarmStart:
    """What a warm fit starts from: the previous fit's statistics (its partition) and λ.

    ``used`` is set False by :meth:`CRAFT._fit_runs` when the warm search
    finds no λ giving k clusters and the fit runs cold instead.
    """

    statistics: _engine.Statistics
    lam: float
    used: bool = True


@dataclasses.dataclass(frozen=True)
class _Rule:
    """One declarative constraint on a constructor parameter."""

    check: Callable[[object], bool]
    text: str


def _number(low=None, high=None, *, low_open=True, high_open=True, integer=False, none=False, why=""):
    def check(value):
        if value is None:
            return none
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if integer and not isinstance(value, numbers.Integral):
            return False
        if not np.isfinite(float(value)):
            return False
        if low is not None and (value <= low if low_open else value < low):
            return False
        if high is not None and (value >= high if high_open else value > high):
            return False
        return True

    kind = "an integer" if integer else "a number"
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high}")
    text = f"{kind} {' and '.join(bounds)}".strip() + (" or None" if none else "") + (f" ({why})" if why else "")
    return _Rule(check, text)


def _one_of(*options):
    return _Rule(lambda value: isinstance(value, str) and value in options, "one of " + ", ".join(map(repr, options)))


def _random_state(value):
    return value is None or isinstance(value, (numbers.Integral, np.random.Generator, np.random.RandomState)) and not isinstance(value, bool)


#: Most clusters a fit may have. Beyond it per-cluster feature masks summarise
#: nothing, and every pass costs rows x clusters x features (see :func:`cluster_limit`).
MAX_CLUSTERS = 1_000
#: Most restarts and passes per run: a fit costs their product times a pass.
MAX_N_INIT = 1_000
MAX_ITER = 10_000
#: Smallest ``smoothing``: the cost of a level a cluster has not seen is
#: ``-log(smoothing * eta0 / (n_k + smoothing))``, with eta0 >= 1/N; at 1e-6 it
#: stays below about 60 nats for a billion rows, while at 5e-324 the product
#: underflows to 0, its log is -inf, and 0 x -inf makes the objective NaN.
MIN_SMOOTHING = 1e-6
#: Fewest cells (rows x used features) at which ``n_jobs=None`` runs a fit's runs on several threads. Each pass
#: holds Python's lock for its updates (about half of a pass on Spambase's 4,601 x 57), and only the compiled
#: pass and sums run beside one another: on two cores, 2 threads took Credit-g (20,000 cells) 1.37x and Soybean
#: (24,000) 1.12x longer, Spambase (262,000) about as long, Splice (191,000) 0.81x and a 20,000-row mixed table
#: (480,000) 0.67x (``docs/RESULTS.md``, *Warm starts*).
THREADED_CELLS = 150_000
#: Most threads ``n_jobs`` may name: a restart is a thread's whole task, and ``MAX_N_INIT`` bounds the restarts.
MAX_THREADS = MAX_N_INIT


_LIMIT_RULE = f"up to 100 clusters, or half the rows on larger tables, never more than {MAX_CLUSTERS:,}"


def cluster_limit(n_samples: int) -> int:
    """Most clusters a fit on ``n_samples`` rows may have.

    Half the rows (clusters of two rows on average) on tables of more than
    100 rows, and never more than :data:`MAX_CLUSTERS`; up to 100 rows any
    K <= N (such fits are cheap). A λ so small that nearly every row opens
    its own cluster makes every pass cost rows² x features and rarely
    converges; the fit is refused instead.
    """
    return min(MAX_CLUSTERS, max(n_samples // 2, min(n_samples, 100)))


_PARAMETER_RULES = {
    "m": _number(0, 1),
    # rho's range depends on m: prior_terms checks it, once, with a message that says why.
    "rho": _number(none=True),
    "lam": _number(0, None, none=True),
    "k": _number(
        1, MAX_CLUSTERS, low_open=False, high_open=False, integer=True, none=True,
        why="more clusters summarise nothing per cluster, and every pass costs rows x clusters x features",
    ),
    "k_method": _one_of("search", "farthest_first"),
    "budget": _one_of("fixed", "approximate"),
    "rho_selection": _one_of("paper", "shrink"),
    "eps_c": _number(0, 1),
    "eps_v": _number(0, None),
    "standardize": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "missing": _one_of(*MISSING_MODES),
    "max_iter": _number(
        1, MAX_ITER, low_open=False, high_open=False, integer=True,
        why="passes stop when no row changes cluster; runs converge in tens of passes",
    ),
    "n_init": _Rule(
        lambda value: value == "auto"
        or _number(1, MAX_N_INIT, low_open=False, high_open=False, integer=True).check(value),
        f"'auto' or an integer >= 1 and <= {MAX_N_INIT} (each restart is a whole fit)",
    ),
    "init": _one_of("craft++", "random"),
    "smoothing": _number(
        MIN_SMOOTHING, None, low_open=False,
        why="a smaller pseudo-count makes the cost -log(smoothing x global share / cluster size) of a level a "
        "cluster has not seen underflow to infinity",
    ),
    "min_variance": _number(0, None),
    "random_state": _Rule(_random_state, "None, an int or a numpy Generator"),
    "history_labels": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "noise": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "warm_start": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    # Their keys name columns and clusters, which only the table and the previous fit know: checked in fit.
    "pins": _Rule(lambda value: value is None or isinstance(value, Mapping),
                  "None or a mapping from (cluster or None, column name) to True or False"),
    "must_link": _Rule(lambda value: _pairs_or_none(value), "None or a list of pairs of row positions"),
    "cannot_link": _Rule(lambda value: _pairs_or_none(value), "None or a list of pairs of row positions"),
    "n_jobs": _number(
        1, MAX_THREADS, low_open=False, high_open=False, integer=True, none=True,
        why="threads that run the restarts at once; None uses every core available",
    ),
}


class CRAFT(ClusterMixin, BaseEstimator):
    """CRAFT: clustering of mixed data with cluster-specific feature selection.

    Implements Algorithm "CRAFT" of Garg, Rudin and Jaakkola: a K-means-style
    alternation in which a point farther than ``lam + D F0`` from every
    cluster opens a new one (so K is not fixed), and every cluster selects
    its own features: numeric ones by low within-cluster variance,
    categorical ones by entropy gain ``G_d - G_kd``.

    Parameters
    ----------
    m : float, default=0.5
        Fraction of features selected per cluster, in (0, 1).
    rho : float or None, default=None
        Prior variance of the selection probability, in (0, m(1-m)), and at
        least 1e-9 m(1-m) (``craft.priors.MIN_OWN_WEIGHT``: below it the
        Beta shapes m(1-m)/rho pass 1e9 and F_Delta loses its digits). None
        takes the paper's ``max(0.01, m(1-m) - 0.01)``. Under the paper's
        rule (``rho_selection="paper"``) rho moves the cost of a cluster
        (``lam + D F0``), the cost per selected feature (``F_Delta``) and the
        draw of a new cluster's features, but not which features a cluster
        selects. With ``rho_selection="shrink"`` it also sets how global the
        selection is: near m(1-m) cluster-specific, near 0 one common set.
    rho_selection : {"paper", "shrink"}, default="paper"
        ``"paper"``: Algorithm CRAFT's rule, every cluster ranks its own
        within-cluster variances and entropy gains. ``"shrink"``: every
        cluster ranks its own score shrunk towards the score pooled over all
        clusters, with the weight ``rho / (m(1-m))`` that the posterior mean
        of the selection probability gives a cluster's own choice (see
        ``docs/numerics.md``); as rho -> 0 all clusters select the same
        features.
    lam : float or None, default=None
        Cost of opening a cluster (lambda > 0). Give at most one of ``lam``
        and ``k``. With neither, lambda is the mean cost of a point under a
        single global cluster (see ``docs/numerics.md``).
    k : int or None, default=None
        Desired number of clusters; lambda is then derived (``k_method``;
        with ``noise=True`` the default lambda, see ``noise``).
    k_method : {"search", "farthest_first"}, default="search"
        ``"search"`` looks for a lambda whose fit has exactly ``k`` clusters
        (the nearest K reachable, with a warning, where k is not);
        ``"farthest_first"`` is the paper's heuristic, which gives about k.
    budget : {"fixed", "approximate"}, default="fixed"
        Fixed: every cluster selects ``round(m |Num|)`` numeric and
        ``round(m |Cat|)`` categorical features. Approximate: a categorical
        feature is selected when ``G_d - G_kd > eps_c G_d``, a numeric one
        when its within-cluster variance is below ``eps_v``.
    eps_c : float, default=0.8
        In (0, 1). Used by the approximate budget only.
    eps_v : float, default=0.5
        Variance threshold (> 0) in encoded units (standardized: a share of
        the global variance). Approximate budget only.
    categorical : "auto", list of str or int, or Schema, default="auto"
        Which columns are categorical. "auto" infers a schema from the
        dtypes (:func:`craft.infer_schema`; identifiers, constant and
        all-missing columns are ignored, with a warning). A list names the
        categorical columns (by name or position); all others are numeric.
        A :class:`craft.Schema` fixes every column's role.
    standardize : bool, default=True
        Scale numeric columns to zero mean and unit variance before fitting.
        Fixed-budget selection compares variances across features, which is
        only meaningful on a common scale.
    missing : {"marginalise", "impute"}, default="marginalise"
        What a missing cell is. "marginalise": it adds nothing to its row's
        cost and nothing to its cluster's statistics (missing at random);
        means, variances, level distributions, scales and eta_0 come from
        the observed cells. "impute": a missing number is its column's mean,
        a missing categorical value a level of its own, "(missing)" (better
        where missingness itself tells the groups apart). The default was
        chosen by the evidence in ``docs/RESULTS.md`` (*Missing values*);
        see ``docs/numerics.md``.
    max_iter : int, default=100
        Maximum number of passes per run.
    n_init : "auto" or int, default="auto"
        Runs with different seeds; the one with the lowest objective is kept
        (with ``k`` given, the runs whose K is nearest k come first). "auto"
        is 10 runs. Above ``SEARCH_ROWS`` (50,000) rows the runs, and the λ
        search, use a uniform sample of that many rows, so that they cost
        no more than on 50,000 rows, and the kept run's clusters then start
        the passes over every row.
    init : {"craft++", "random"}, default="craft++"
        "random" is the paper's start (one cluster at a random point);
        "craft++" opens the first pass's clusters at far points sampled in
        proportion to their CRAFT distance, as k-means++ does.
    smoothing : float, default=0.1
        Pseudo-count pulling each cluster's level distribution towards the
        global one; keeps ``log eta`` finite for small clusters. At least
        1e-6 (``MIN_SMOOTHING``): a smaller one makes the cost of a level a
        cluster has not seen underflow to infinity.
    min_variance : float, default=0.3
        Variance floor per numeric feature, as a share of its global variance.
    random_state : int, Generator or None, default=None
        Seed for the random choices; the same seed gives the same result.
    history_labels : bool, default=False
        Keep every iteration's labels in ``history_`` (``IterationRecord.labels``),
        which :meth:`inspect_iteration` needs. They cost 4 bytes per row and
        iteration, kept as long as the model, so they are off unless asked for.
    noise : bool, default=False
        Label the rows that fit no cluster -1 (noise, as HDBSCAN does) and
        keep them out of every cluster's statistics and feature selection.
        A row is noise when its cost to every cluster exceeds the noise
        threshold ``lam_ + D F0``; the passes then trim such rows instead of
        opening clusters (trimmed k-means with the threshold as the trimming
        cost), so clusters open only in the seeding, which needs
        ``init="craft++"``. With ``lam`` given, the threshold is CRAFT's own
        opening cost ``lam + D F0`` (a noise row costs what the cluster it
        would open costs). Without ``lam`` (``k`` given, or neither), the fit
        asked for is made first with ``noise=False`` and then trimmed at the
        threshold of its own clusters: a row is noise when it is less likely
        under every cluster than all but 0.1 % of the rows drawn as that
        cluster's rows are spread (``_engine.noise_threshold``), found from
        a robust core and refitted without clusters of far rows
        (:meth:`_noise_fit`); ``lam_`` is then that threshold's λ. Each
        noise row adds ``lam_ + D F0`` to the objective
        (``objective_terms_.noise``); a fit leaving more than 10 % of its
        rows in no cluster warns. ``predict`` gives -1 for a new row that
        fits no cluster. See ``docs/numerics.md`` (*The noise threshold*).
    warm_start : bool, default=False
        As in scikit-learn's ``GaussianMixture``: a ``fit`` on the table of
        the previous fit (same columns, rows and encoding) runs one run that
        starts from the previous fit's partition, its clusters recomputed at
        the new parameters, instead of the restarts. λ is ``lam``, the
        default λ, or with ``k`` a search that starts at the previous
        ``lam_`` and whose runs all start from that partition (when it finds
        no λ giving k clusters, the cold search and restarts run instead).
        Any other table refits cold, with a warning. ``warm_started_`` says
        which it was. A warm fit is quick and follows the previous clusters,
        but it is one local optimum, not the best of the restarts:
        ``docs/RESULTS.md`` ("Warm starts") measures what it gives up.
        :func:`craft.warm_refit` fits a copy warm, leaving the model as it is.
    n_jobs : int or None, default=None
        Threads that run the restarts at once (the compiled pass releases
        Python's lock), and the λ search's next fits ahead of time. None:
        one per core available to the process, as scikit-learn's ``KMeans``
        uses every core, on tables of at least ``THREADED_CELLS`` (150,000)
        cells; below, one (the updates hold Python's lock, so on small
        tables threads cost more than they give). The result does not
        depend on it: every restart is a function of its own seed, and the
        kept run is chosen by the same ranking in restart order.

    pins : mapping or None, default=None
        Features a person fixes: ``{(cluster, column): True or False}``,
        True to always select the column in that cluster, False never.
        ``cluster`` is None for every cluster (any fit, the clusters a pass
        opens too), or a cluster number of the previous fit, with
        ``warm_start=True`` (the pin follows that cluster while it lives).
        The selection takes the pinned-on features first and the budget's
        rule chooses among the free ones: under the fixed budget a
        pinned-on feature counts within ``round(m |kind|)``, and where the
        pinned-on features of a kind fill or pass it, they are all selected
        and the rule adds none (the cluster then selects more than the
        budget). ``feature_mask_`` honours every pin; ``pins_`` records
        them per fitted cluster. An unknown column, an ignored one, a
        cluster the previous fit does not have, or a column pinned both ways
        for one cluster is refused (``CraftInputError``).

    must_link, cannot_link : list of (int, int) or None, default=None
        Pairs of row positions (0-based) that must share a cluster, or must
        not. Must-linked rows (with the rows linked to them) are assigned as
        one unit, on the sum of their costs; cannot-linked rows never share
        a cluster, and a unit that every cluster bars opens one of its own,
        so the constraints always hold in ``labels_`` (``craft._links``,
        ``docs/numerics.md``). ``predict`` knows no links: on the fitted
        rows it may place a linked row elsewhere. At most 10,000 pairs of
        each kind. Refused: a position beyond the table, a row paired with
        itself, a pair both linked and kept apart (also through a chain of
        must-links), and links with ``noise=True`` or on ``DaskCRAFT``.
        Above 50,000 rows a linked fit runs its search and restarts on every
        row, not on a sample (the links name rows of the whole table).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of every row, 0..K-1; -1 for noise (``noise=True`` only).
    n_clusters_ : int
    n_noise_ : int
        Rows labelled -1 (0 unless ``noise=True``).
    feature_mask_ : ndarray of bool, shape (n_clusters_, n_features_in_)
        Selected features per cluster, columns in ``feature_names_in_`` order
        (ignored columns are never selected).
    objective_ : float
        The paper's objective at the end of the kept run.
    history_ : list of IterationRecord
        One record per iteration of the kept run (above 50,000 rows: of its
        passes over every row, after the sample): objective, K, points that
        changed cluster, clusters opened, masks (engine order, see
        ``engine_features_``) and, with ``history_labels=True``, the labels
        (else ``labels`` is None).
    converged_ : bool
        Whether the kept run stopped because no row changed cluster (False:
        it reached ``max_iter``, with a ``ConvergenceWarning``).
    clusters_ : craft._engine.Clusters
        The kept run's cluster parameters, in encoded units and engine order:
        ``means`` and floored ``variances`` (K, numeric features), ``log_eta``
        (K, categorical levels in ``encoder_``'s order; smoothed level
        distributions) and ``weights`` (K, used features; the selection v as
        0/1 floats). :meth:`predict` and :meth:`cost_terms` measure rows
        against them.
    selection_ : craft.Selection
        What the selection rule decided and why, per cluster and used
        feature (columns in ``engine_features_`` order): the score it ranked
        (``score``: variance or gain ``G_d - G_kd``), ``rank``, the number
        compared with the cut (``criterion``; for the approximate budget the
        quantity compared with eps), the ``cut`` and ``selected``
        (``feature_mask_`` in engine order). :meth:`selection_frame` gives it
        as a table with names.
    statistics_ : Statistics
        The kept run's sufficient statistics per cluster, in encoded units
        and engine order: ``counts``, ``sums``, ``sums_sq`` (numeric) and
        ``level_counts`` (categorical levels, ``encoder_``'s order).
    objective_terms_ : craft.ObjectiveTerms
        ``objective_`` split into its terms (``numeric``, ``categorical``,
        ``regularization``, ``feature_control``; ``total`` is ``objective_``).
    n_iter_ : int
    pins_ : ndarray of int8, shape (n_clusters_, n_features_in_)
        Each fitted cluster's pins, columns as ``feature_mask_``: +1 pinned
        on, -1 pinned off, 0 free (all 0 without ``pins``).
    warm_started_ : bool
        Whether this fit started from the previous fit (``warm_start=True``
        on the same table) rather than from its restarts.
    lam_ : float
        The lambda used.
    rho_ : float
        The rho used.
    schema_ : Schema
    encoder_ : craft.encoding.Encoder
        The encoding fitted on ``X`` (scales, level codes, the global tables
        eta_0 and variances); :meth:`predict` encodes new rows with it.
    options_ : craft._engine.Options
        The engine's options of the kept run, every parameter validated and
        ``lam`` set to ``lam_`` (``options_.terms``: F0, F_Delta and the
        other prior terms of m and rho).
    engine_features_ : list of str
        Used features in the engine's order (numeric, then categorical).
    cluster_sizes_ : ndarray of shape (n_clusters_,)
        Rows per cluster (noise rows are in none).
    n_imputed_ : dict
        Numeric cells imputed by the column mean, per column (only columns
        with any; empty when ``missing="marginalise"``).
    n_marginalised_ : dict
        Missing cells left out of the model, per column (only columns with
        any; empty when ``missing="impute"``).
    feature_names_in_ : ndarray of str
    n_features_in_ : int

    Examples
    --------
    >>> import pandas as pd
    >>> from craft import CRAFT
    >>> table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9],
    ...                       "colour": ["red", "red", "red", "blue", "blue", "blue"]})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(table)
    >>> model.n_clusters_
    2
    """

    def __init__(
        self,
        m=0.5,
        *,
        rho=None,
        lam=None,
        k=None,
        k_method="search",
        budget="fixed",
        rho_selection="paper",
        eps_c=0.8,
        eps_v=0.5,
        categorical="auto",
        standardize=True,
        missing="marginalise",
        max_iter=100,
        n_init="auto",
        init="craft++",
        smoothing=0.1,
        min_variance=0.3,
        random_state=None,
        history_labels=False,
        noise=False,
        warm_start=False,
        n_jobs=None,
        pins=None,
        must_link=None,
        cannot_link=None,
    ):
        self.m = m
        self.rho = rho
        self.lam = lam
        self.k = k
        self.k_method = k_method
        self.budget = budget
        self.rho_selection = rho_selection
        self.eps_c = eps_c
        self.eps_v = eps_v
        self.categorical = categorical
        self.standardize = standardize
        self.missing = missing
        self.max_iter = max_iter
        self.n_init = n_init
        self.init = init
        self.smoothing = smoothing
        self.min_variance = min_variance
        self.random_state = random_state
        self.history_labels = history_labels
        self.noise = noise
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.pins = pins
        self.must_link = must_link
        self.cannot_link = cannot_link

    #: The callback of the fit in progress (see :meth:`_reporting`); never a parameter, so a model pickles.
    _callback: Callable[[_engine.IterationRecord], object] | None = None

    # ------------------------------------------------------------------
    def fit(self, X, y=None, *, callback=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
        y : ignored
        callback : callable or None, default=None
            Called with an :class:`IterationRecord` after every iteration of
            every run (λ search included), e.g. for a progress bar; an
            exception it raises stops the fit. It belongs to this call only:
            the fitted model does not keep it.

        Returns
        -------
        self
        """
        # Everything is computed into locals and stored at the end, so that a
        # refit that fails leaves the previous fit whole (labels_, encoder_
        # and feature_names_in_ always belong to the same table).
        options = self._validated_options()
        _check_callback(callback)
        table = _as_table(X, min_rows=2)
        # Columns only, before the per-column work a very wide table pays for (its cells are already in memory);
        # a fixed limit, so that the same call never depends on the machine's free memory.
        check_columns(table.shape[1], "X")
        schema = self._schema(table)
        encoder = Encoder(list(schema.numeric), list(schema.categorical), bool(self.standardize), self.missing)
        data = encoder.fit_transform(table)
        warm = self._warm_start_from(encoder, data.n_samples, table.columns)
        options = self._linked_options(self._pinned_options(options, schema, warm), data.n_samples)
        with self._reporting(callback):
            best, lam = self._fit_runs(_engine.InMemory(data), options, as_generator(self.random_state), warm=warm)
        self._store(best, data, lam, options, schema=schema, encoder=encoder, columns=table.columns,
                    warm_started_=warm is not None and warm.used)
        return self

    def _linked_options(self, options: _engine.Options, n_samples: int) -> _engine.Options:
        """``options`` with ``must_link`` and ``cannot_link`` checked against the table, as units (``craft._links``)."""
        must, cannot = list(self.must_link or ()), list(self.cannot_link or ())
        if not must and not cannot:
            return options
        if self.noise:
            raise CraftInputError("must_link and cannot_link do not go with noise=True: a linked row labelled noise "
                                  "would leave its unit. Fit without noise, or without links.")
        for name, pairs in (("must_link", must), ("cannot_link", cannot)):
            if len(pairs) > MAX_PAIRS:
                raise CraftInputError(f"{name} holds {len(pairs):,} pairs; at most {MAX_PAIRS:,} (each unit is placed "
                                      "by a step of its own in every pass).")
            for pair in pairs:
                a, b = (int(row) for row in pair)
                if not (0 <= a < n_samples and 0 <= b < n_samples):
                    raise CraftInputError(f"{name} pair {tuple(pair)} names a row beyond the table's {n_samples:,} rows "
                                          f"(positions 0..{n_samples - 1}).")
                if a == b:
                    raise CraftInputError(f"{name} pair {tuple(pair)} pairs row {a} with itself.")
        shared = {tuple(sorted((int(a), int(b)))) for a, b in must} & {tuple(sorted((int(a), int(b)))) for a, b in cannot}
        if shared:
            raise CraftInputError(f"Rows {sorted(shared)[0]} are both must-linked and cannot-linked: give one of the two.")
        try:
            links = Links.from_pairs([(int(a), int(b)) for a, b in must], [(int(a), int(b)) for a, b in cannot], n_samples)
        except ValueError as error:
            raise CraftInputError(f"Contradictory links: {error}.") from None
        return _replace(options, links=links)

    def _pinned_options(self, options: _engine.Options, schema: Schema, warm: _WarmStart | None) -> _engine.Options:
        """``options`` with ``pins`` checked against the table and the previous fit, in the engine's terms."""
        if not self.pins:
            return options
        features = list(schema.numeric) + list(schema.categorical)
        position = {name: j for j, name in enumerate(features)}
        n_previous = warm.statistics.counts.shape[0] if warm is not None else 0
        every = np.zeros(len(features), dtype=np.int8)
        own = np.zeros((n_previous, len(features)), dtype=np.int8)
        for key, value in self.pins.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise CraftInputError(f"The pin {key!r} is invalid: a pin's key is (cluster or None, column name).")
            cluster, column = key
            if not isinstance(value, (bool, np.bool_)):
                raise CraftInputError(f"The pin {key!r}: {value!r} is invalid: it must be True (always selected) or False (never).")
            if str(column) not in position:
                why = "is ignored by the schema" if str(column) in schema.ignored else "is not a column of the table"
                raise CraftInputError(f"The pin {key!r} names column {column!r}, which {why}.")
            sign = 1 if value else -1
            if cluster is None:
                every[position[str(column)]] = sign
                continue
            if isinstance(cluster, bool) or not isinstance(cluster, numbers.Integral):
                raise CraftInputError(f"The pin {key!r} names cluster {cluster!r}: a cluster is a number of the previous fit, or None for every cluster.")
            if warm is None:
                raise CraftInputError(
                    f"The pin {key!r} names cluster {cluster} of the previous fit, but this fit starts cold: pins on "
                    "one cluster need warm_start=True and a previous fit on this table (cluster numbers are its own); "
                    "None pins a column in every cluster."
                )
            if not 0 <= int(cluster) < n_previous:
                raise CraftInputError(f"The pin {key!r} names cluster {cluster}; the previous fit has clusters 0..{n_previous - 1}.")
            own[int(cluster), position[str(column)]] = sign
        clash = np.flatnonzero(((own * every[None, :]) < 0).any(axis=0))
        if clash.size:
            column = features[int(clash[0])]
            raise CraftInputError(
                f"Column {column!r} is pinned {'on' if every[clash[0]] > 0 else 'off'} in every cluster (None) and the "
                "other way in one cluster: give one of the two."
            )
        pins = _engine.Pins(tuple(int(v) for v in every), tuple(tuple(int(v) for v in row) for row in own) if own.any() else ())
        return _replace(options, pinned=pins)

    def _warm_start_from(self, encoder: Encoder, n_samples: int, columns) -> _WarmStart | None:
        """The previous fit to start from, when ``warm_start`` is on and it was fitted on this table.

        The same table means the same columns, rows and encoding (every
        scale, centre and level equal), so that the previous fit's
        statistics are sums over this table's encoded rows. Anything else
        refits cold, with a warning that says what differs.
        """
        if not self.warm_start or not hasattr(self, "statistics_"):
            return None
        previous: Encoder = self.encoder_
        previous_rows = int(round(float(self.statistics_.counts.sum()))) + int(self.n_noise_)
        differences = []
        if [str(c) for c in self.feature_names_in_] != [str(c) for c in columns]:
            differences.append("its columns")
        if previous_rows != n_samples:
            differences.append(f"its row count ({n_samples:,} rows; the previous fit had {previous_rows:,})")
        if not differences and not _same_encoding(previous, encoder):
            differences.append("its values (the encoding's scales, centres or levels)")
        if differences:
            warnings.warn(
                f"warm_start=True, but the table differs from the previous fit's in {' and '.join(differences)}: "
                "fitted cold, with every restart.",
                UserWarning,
                stacklevel=3,
            )
            return None
        return _WarmStart(statistics=self.statistics_, lam=float(self.lam_))

    @contextlib.contextmanager
    def _reporting(self, callback):
        """``callback`` (checked by :func:`_check_callback`) receives every iteration record while the block runs,
        and is forgotten after it."""
        self._callback = callback
        try:
            yield
        finally:
            del self._callback

    def predict(self, X):
        """Nearest existing cluster for every row of ``X``; never opens a cluster.

        Fitted with ``noise=True``, a row that fits no cluster (beyond
        ``lam_ + D F0`` from every cluster, with an observed cell) is -1.

        Levels unseen in ``fit`` add the same cost to every cluster, so they
        do not influence the choice; a warning names each column that has
        them and counts their rows. A value written exactly as a fitted level
        of another type (the text "10" for the level 10) is that level, and a
        warning says so. Missing cells are treated as in ``fit``
        (``missing``).
        """
        self._check_fitted()
        table = _as_table(X)
        if not isinstance(X, pd.DataFrame) and table.shape[1] != self.n_features_in_:
            raise CraftInputError(
                f"X has {table.shape[1]} features, but CRAFT is expecting {self.n_features_in_} features as input."
            )
        notes: list[str] = []
        data = self._encoded(table, notes)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        _, labels = _engine.nearest_or_noise(data, self.clusters_, self.options_)
        return labels

    def fit_predict(self, X, y=None, *, callback=None):
        """Fit and return ``labels_`` (``callback`` as in :meth:`fit`)."""
        return self.fit(X, callback=callback).labels_

    def assign(self, X) -> pd.DataFrame:
        """Where every row of ``X`` goes, and how sure that is; never opens a cluster.

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the fitted columns (checked as :meth:`predict` checks
            them; levels unseen in fit follow its rule).

        Returns
        -------
        DataFrame
            Indexed like ``X``, with columns

            * ``cluster`` (int64): :meth:`predict`'s label, the nearest cluster;
            * ``cost``: the row's distance d_nk to that cluster;
            * ``margin``: its distance to the next-nearest cluster minus its
              distance to the nearest (>= 0; 0 is a tie). 0 for every row of
              a model of one cluster, where no other cluster competes;
              ``fits_no_cluster`` then says how well a row fits; NaN for a
              row with nothing known;
            * ``fits_no_cluster`` (bool): CRAFT's own opening test on the
              fitted clusters (``_engine.opening_candidates``): the row's
              distance to every cluster exceeds ``lam_ + D F0`` and it has
              an observed cell, so a pass would have opened a cluster for it;
              also True for a row with nothing known (next);
            * ``nothing_known`` (bool): no cell of the row can be judged by
              the clusters: each is missing or holds a value never seen in
              fit. Such a cell costs the same in every cluster (0), so such a
              row costs 0 everywhere: it is no confident fit but no fit at
              all, so its ``margin`` is NaN and ``fits_no_cluster`` True;
            * ``unseen_cells`` (int64) and ``unseen_columns`` (str, the
              columns comma-separated, "" if none): the row's cells holding
              values never seen in fit (placed by its other columns only).

        Examples
        --------
        >>> import pandas as pd
        >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
        >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
        >>> scored = model.assign(pd.DataFrame({"a": [0.05, 40.0], "b": [0.0, 0.0]}))
        >>> scored["cluster"].tolist(), scored["fits_no_cluster"].tolist()
        ([0, 1], [False, True])
        """
        self._check_fitted()
        table = _as_table(X)
        notes: list[str] = []
        data = self._encoded(table, notes)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        return assignment_frame(data, self.clusters_, self.options_, table.index, self.encoder_.categorical)

    def explain(self, X) -> "Explanation":
        """Why each row of ``X`` is where it is: every feature's share of its cost and of its margin.

        A row's distance to a cluster, d_nk, is a sum over features (the
        feature-control term ``|v_k| F_Delta`` counted ``F_Delta`` per
        selected feature; :func:`craft._engine.feature_costs`), so the split
        is exact: the row sums of ``cost`` are :meth:`assign`'s ``cost`` and
        those of ``margin`` its ``margin``, up to rounding.

        Parameters
        ----------
        X : DataFrame or array-like
            Rows with the fitted columns (checked as :meth:`assign` checks them).

        Returns
        -------
        Explanation
            ``cluster`` (the nearest cluster, as :meth:`assign`'s ``cluster``
            before noise: a noise row is explained against its nearest
            cluster), ``runner_up`` (the next-nearest, -1 for a one-cluster
            model), ``cost`` (rows x used features, table order: each
            feature's part of the row's distance to ``cluster``) and
            ``margin`` (each feature's part of the distance to ``runner_up``
            minus that to ``cluster``; positive: the feature holds the row in
            its cluster; all 0 for a one-cluster model, NaN for a row with no
            cell the clusters can judge, as ``assign``'s margin).

        Examples
        --------
        >>> import pandas as pd
        >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
        >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
        >>> why = model.explain(X)
        >>> bool(abs(why.cost.sum(axis=1) - model.assign(X)["cost"]).max() < 1e-9)
        True
        """
        self._check_fitted()
        table = _as_table(X)
        notes: list[str] = []
        data = self._encoded(table, notes)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        terms = self.options_.terms
        _, labels = _engine.nearest_cluster(data, self.clusters_, terms)
        _, second = _engine.runner_up(data, self.clusters_, terms, labels)
        cost = _engine.feature_costs(data, self.clusters_, terms, labels)
        if self.clusters_.n_clusters > 1:
            margin = _engine.feature_costs(data, self.clusters_, terms, second) - cost
        else:
            margin = np.zeros_like(cost)
        # As in assign: a row with no cell the clusters can judge has no margin.
        margin[data.known_cells() == 0] = np.nan
        used = set(self.engine_features_)
        columns = [str(name) for name in self.feature_names_in_ if str(name) in used]
        order = [self.engine_features_.index(name) for name in columns]
        return Explanation(
            cluster=labels.astype(np.int64),
            runner_up=second,
            cost=pd.DataFrame(cost[:, order], index=table.index, columns=columns),
            margin=pd.DataFrame(margin[:, order], index=table.index, columns=columns),
        )

    def save(self, path) -> None:
        """Write the fitted model to ``path`` (a path or a binary file object); :func:`craft.load` reads it.

        The file holds values only, never code (``craft.persist``,
        ``docs/model-format.md``).
        """
        from .persist import save

        save(self, path)

    # ------------------------------------------------------------------
    # Inspection: what the engine computed, read from the engine's own functions.

    def selection_frame(self) -> pd.DataFrame:
        """``selection_`` as a table: one row per cluster and used feature.

        Returns
        -------
        DataFrame
            Columns ``cluster``, ``feature``, ``kind`` ("numeric" or
            "categorical"), ``score``, ``rank``, ``criterion``, ``cut`` and
            ``selected`` (see :class:`craft.Selection`); features in the
            engine's order within each cluster.

        Examples
        --------
        >>> import pandas as pd
        >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
        >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
        >>> model.selection_frame().query("selected")[["cluster", "feature", "rank"]].to_dict("list")
        {'cluster': [0, 1], 'feature': ['a', 'a'], 'rank': [1, 1]}
        """
        self._check_fitted()
        selection = self.selection_
        k, d = selection.score.shape
        n_numeric = len(self.schema_.numeric)
        kinds = np.array(["numeric"] * n_numeric + ["categorical"] * (d - n_numeric))
        return pd.DataFrame({
            "cluster": np.repeat(np.arange(k, dtype=np.int64), d),
            "feature": np.tile(np.asarray(self.engine_features_, dtype=object), k),
            "kind": np.tile(kinds, k),
            "score": selection.score.ravel(),
            "rank": selection.rank.ravel().astype(np.int64),
            "criterion": selection.criterion.ravel(),
            "cut": selection.cut.ravel(),
            "selected": selection.selected.ravel(),
        })

    def cost_terms(self, X, *, state: _engine.Inspection | None = None) -> _engine.CostTerms:
        """The distance d_nk of every row of ``X`` to every cluster, term by term.

        Parameters
        ----------
        X : DataFrame or EncodedData
            Rows with the fitted columns, or ``encoder_.transform`` of them.
        state : craft.Inspection or None
            None: the fitted clusters (``total``'s row-wise argmin is
            ``predict(X)``). Else the clusters of that state, e.g. after one
            iteration (:meth:`inspect_iteration`).

        Returns
        -------
        craft.CostTerms
            Arrays of shape (n_rows, n_clusters).

        Examples
        --------
        >>> import pandas as pd
        >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
        >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
        >>> bool((model.cost_terms(X).total.argmin(axis=1) == model.labels_).all())
        True
        """
        self._check_fitted()
        data = self._encoded(X)
        clusters = self.clusters_ if state is None else state.clusters
        return _engine.cost_terms(data, clusters, self.options_.terms)

    def inspect_iteration(self, X, iteration: int) -> _engine.Inspection:
        """Clusters, selection and objective terms after ``iteration`` of the kept run.

        Parameters
        ----------
        X : DataFrame or EncodedData
            The table the model was fitted on, or ``encoder_.transform`` of it.
        iteration : int
            1 .. ``len(history_)``.

        Returns
        -------
        craft.Inspection
            ``selection`` and ``objective`` as in ``selection_`` and
            ``objective_terms_``, for the labels of that iteration
            (``objective.total`` equals that record's ``objective``).

        Raises
        ------
        CraftInputError
            If the iteration does not exist or its labels were not kept
            (the model was fitted without ``history_labels=True``).
        """
        self._check_fitted()
        history = self.history_
        if not 1 <= iteration <= len(history):
            raise CraftInputError(f"iteration={iteration} must lie in 1..{len(history)}.")
        record = history[iteration - 1]
        if record.labels is None:
            raise CraftInputError(
                "This fit kept no labels per iteration: fit with history_labels=True to inspect its iterations."
            )
        data = self._encoded(X)
        if data.n_samples != record.labels.shape[0]:
            raise CraftInputError(
                f"X has {data.n_samples} rows; the fit had {record.labels.shape[0]}: pass the fitted table."
            )
        labels = record.labels.astype(np.int64)
        clusters, stats = _engine.fit_clusters(data, labels, record.n_clusters, self.options_, record.pins)
        return _engine.inspect(data, clusters, stats, self.options_, labels, int(np.count_nonzero(labels < 0)), record.pins)

    def _encoded(self, X, notes: list[str] | None = None) -> EncodedData:
        if isinstance(X, EncodedData):  # encoded once by the caller (a wide table costs per column)
            return X
        table = _as_table(X)
        check_fitted_columns(table, self.encoder_, self.feature_names_in_)
        return self.encoder_.transform(table, notes)

    # ------------------------------------------------------------------
    def _validated_options(self) -> _engine.Options:
        for name, rule in _PARAMETER_RULES.items():
            value = getattr(self, name)
            if not rule.check(value):
                raise CraftInputError(f"Parameter {name}={value!r} is invalid: it must be {rule.text}.")
        if self.lam is not None and self.k is not None:
            raise CraftInputError(f"Give at most one of lam={self.lam!r} and k={self.k!r}: each sets the other.")
        if self.noise and self.init == "random":
            raise CraftInputError(
                "noise=True needs init='craft++': the passes then label far rows noise instead of opening "
                "clusters, so clusters open only in the seeding, and init='random' opens one."
            )
        terms = prior_terms(float(self.m), None if self.rho is None else float(self.rho))
        return _engine.Options(
            terms=terms,
            lam=float(self.lam) if self.lam is not None else float("nan"),
            budget=self.budget,
            rho_selection=self.rho_selection,
            eps_c=float(self.eps_c),
            eps_v=float(self.eps_v),
            smoothing=float(self.smoothing),
            min_variance=float(self.min_variance),
            init=self.init,
            max_iter=int(self.max_iter),
            noise=bool(self.noise),
            keep_labels=bool(self.history_labels),
            n_seeds=int(self.k) if self.k is not None else 1,
        )

    def _schema(self, table: pd.DataFrame) -> Schema:
        columns = {str(c) for c in table.columns}  # a set: one lookup per schema column, however wide
        if isinstance(self.categorical, Schema):
            schema = self.categorical
            unknown = [c for c in schema.used if c not in columns]
            if unknown:
                raise CraftInputError(f"The schema names column(s) {unknown[:5]} that the table does not have.")
        elif isinstance(self.categorical, str) and self.categorical == "auto":
            schema = infer_schema(table)
            if schema.ignored:
                detail = "; ".join(f"{c!r}: {schema.reasons[c]}" for c in schema.ignored[:5])
                warnings.warn(
                    f"{len(schema.ignored)} column(s) ignored by the inferred schema ({detail}).", UserWarning, stacklevel=3
                )
        else:
            schema = _schema_from_list(table, self.categorical)
        if not schema.used:
            raise CraftInputError("No usable column: every column is ignored (see the schema's reasons).")
        return schema

    def _fit_runs(self, backend: _engine.Backend, options: _engine.Options,
                  rng: np.random.Generator, *, warm: _WarmStart | None = None) -> tuple[_engine.RunResult, float]:
        """The kept run and the lambda it used, on either backend (nothing is stored on ``self``).

        Up to ``SEARCH_ROWS`` rows the λ search and the restarts run on every
        row. Above, they run on one uniform sample of ``SEARCH_ROWS`` rows
        (drawn in row order from a child stream of the first seed's), and
        the kept run's clusters then start the passes over every row; one
        run at a given λ has nothing to choose and runs on every row.
        With ``warm``, one run from the previous partition instead
        (:meth:`_warm_run`); ``warm.used`` becomes False where it falls back.
        """
        if warm is None and options.noise and self.lam is None:
            return self._noise_fit(backend, options, rng)
        n_init = 10 if self.n_init == "auto" else self.n_init
        seeds = rng.integers(np.iinfo(np.int32).max, size=n_init)
        n_samples = backend.n_samples
        # Only the exact-k search pays for an unreachable k (dozens of fits); farthest-first warns.
        searching = self.k is not None and self.k_method == "search"
        target = self._checked_target(n_samples, backend.distinct_rows(self.k) if searching else None)
        if warm is not None:
            found = self._warm_run(backend, options, warm, seeds[0], target)
            if found is not None:
                self._warn_about(found[0], target, found[1])
                return found
            if options.pinned is not None and options.pinned.per_cluster:
                raise CraftInputError(
                    f"No λ gives k={target} clusters from the previous fit's clusters, and a cold fit does not have "
                    "them, so the pins on its clusters cannot apply: pin columns in every cluster (None), or ask for "
                    "a k the warm fit reaches."
                )
            warm.used = False
            if options.noise and self.lam is None:
                return self._noise_fit(backend, options, rng)
        # Links name rows of the whole table, so a linked fit never runs on a sample.
        sampled = n_samples > SEARCH_ROWS and options.links is None
        if sampled and (searching or len(seeds) > 1):
            search: EncodedData | _engine.Backend = backend.sample(
                SEARCH_ROWS, np.random.default_rng(np.random.SeedSequence(int(seeds[0])).spawn(1)[0])
            )
        else:
            search = backend
        runs: list[tuple[float, _engine.RunResult]] = []
        if self.lam is not None:
            lam = float(self.lam)
        elif target is None or options.noise:
            # With noise=True (trimmed=False: _noise_fit's seeded start) a target k fixes the seeds (and so K);
            # lambda then only sets the trimming threshold. (With lam given, lam is the price of a noise row too.)
            lam = _engine.default_lambda(backend, options)
        elif self.k_method == "farthest_first":
            lam = _engine.farthest_first_lambda(backend, target, options, np.random.default_rng(seeds[0]))
        else:
            lam, runs = self._search_lambda(search, options, target, seeds[0])
        lam = _checked_lambda(lam, self, target)
        options = _replace(options, lam=lam, max_clusters=_run_limit(n_samples, target))
        reused = [result for tried, result in runs if tried == lam][:1]
        # Restarts to choose among, or a search run to reuse (restart 0), run
        # where the search ran; a single run at a given λ runs on every row.
        pool = search if (reused or len(seeds) > 1) else backend
        restarts = self._restarts(pool, options, seeds, range(len(reused), len(seeds)), n_samples, target)
        results = reused + [result for result in restarts if result is not None]
        if not results:
            raise self._too_many_clusters(options.max_clusters, n_samples, lam)
        best = min(range(len(results)), key=lambda i: _ranking(results[i], target))
        result = results[best]
        if pool is not backend:
            # The kept run's clusters start the passes over every row.
            result = self._bounded_run(backend, options, seeds[best], best, n_samples, None, initial=result.clusters)
        self._warn_about(result, target, lam)
        return result, lam

    def _restarts(self, pool, options: _engine.Options, seeds: np.ndarray, restarts: range, n_samples: int,
                  target) -> list[_engine.RunResult | None]:
        """Every restart's run (None: dropped by :meth:`_bounded_run`), in restart order, on ``n_jobs`` threads.

        Each restart is a function of its own seed, so the list, and the run
        the caller keeps, do not depend on the threads. The compiled pass
        releases Python's lock, so runs overlap on several cores. A restart
        that raises (a refused fit, or the callback stopping the fit) stops
        the restarts not yet started; the first error in restart order is
        raised. Partitions on a Dask cluster run one restart at a time: the
        cluster already spreads each pass.
        """
        def one(restart: int) -> _engine.RunResult | None:
            return self._bounded_run(pool, options, seeds[restart], restart, n_samples, target)

        threads = min(self._threads_for(pool), len(restarts))
        if threads <= 1:
            return [one(restart) for restart in restarts]
        with concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="craft-restart") as pool_of:
            futures = [pool_of.submit(one, restart) for restart in restarts]
            try:
                return [future.result() for future in futures]
            finally:
                for future in futures:
                    future.cancel()

    def _threads_for(self, data) -> int:
        """Threads for the runs of one fit on ``data``: ``n_jobs`` in memory (one on a Dask cluster, which spreads
        each pass), and with ``n_jobs=None`` one where the table holds fewer than :data:`THREADED_CELLS` cells."""
        if not isinstance(data, (EncodedData, _engine.InMemory)):
            return 1
        backend = _engine.as_backend(data)
        if self.n_jobs is None and backend.n_samples * backend.template.n_features < THREADED_CELLS:
            return 1
        return _thread_count(self.n_jobs)

    def _warm_run(self, backend: _engine.Backend, options: _engine.Options, warm: _WarmStart, seed,
                  target) -> tuple[_engine.RunResult, float] | None:
        """One run from the previous partition at the new parameters, and its λ; None where k is not found.

        The previous fit's statistics give its clusters recomputed under the
        new options (means, variances, level distributions and the selection
        at the new m, ρ, budget...), which start the first pass. λ is
        ``lam``, the default λ, farthest-first's, or with ``k`` and the
        search the exact-k search started at the previous ``lam_``, every
        run of it starting from that partition: usually the first λ tried
        gives k. Runs on every row (there is nothing to choose among).
        """
        start_pins = None
        if options.pinned is not None:
            start_pins = options.pinned.start(warm.statistics.counts.shape[0], backend.template.n_features)
        initial = _engine.clusters_from_statistics(backend.template, warm.statistics, options, start_pins)
        if self.lam is not None:
            lam = float(self.lam)
        elif self.noise:
            # The previous fit's noise threshold (its lam_): the refined fit finds this fit's own (_noise_fit).
            lam = warm.lam
        elif target is None:
            lam = _engine.default_lambda(backend, options)
        elif self.k_method == "farthest_first":
            lam = _engine.farthest_first_lambda(backend, target, options, np.random.default_rng(seed))
        else:
            lam, runs = self._search_lambda(backend, options, target, seed, start=warm.lam, initial=initial)
            result = next((run for tried, run in runs if tried == lam), None)
            if result is None or result.n_clusters != target:
                return None
            return result, lam
        lam = _checked_lambda(lam, self, target)
        run_options = _replace(options, lam=lam, max_clusters=_run_limit(backend.n_samples, target))
        result = self._bounded_run(backend, run_options, seed, 0, backend.n_samples, target, initial=initial)
        if result is None:
            return None
        return result, lam

    def _noise_fit(self, backend: _engine.Backend, options: _engine.Options,
                   rng: np.random.Generator) -> tuple[_engine.RunResult, float]:
        """``noise=True`` without ``lam``: the fit asked for, then trimmed at the noise threshold of its clusters.

        1. Two starts: the fit as asked with ``noise=False`` (``k``: the
           exact-k search; neither: the default λ), whose clusters are those
           the user asked for, a small real segment included; and the
           trimmed fit of seeds of its own (k craft++ seeds weighted by their
           trimmed cost at the default λ), which keeps a few far rows from
           making one of the k clusters.
        2. A robust core: the passes from each start, trimming every row
           costing more than the background's typical row (the default λ,
           the mean cost of a row under one cluster), so that noise absorbed
           in step 1 stops inflating the clusters' variances.
        3. The threshold of the clusters themselves
           (:func:`_engine.noise_threshold`: a row is noise when every
           cluster's own model draws it with probability below
           ``_engine.NOISE_ALPHA``), the passes run again from the core at
           it, and again from their clusters until it settles (at most
           ``NOISE_ROUNDS``), as the reweighting step of a robust estimator
           (MCD's) takes back the rows its core's model accepts.
        4. Of the two, the one of lower trimmed objective at the larger of
           their thresholds, settled again (step 3).

        The λ returned (``lam_``) is the one whose ``λ + D F0`` is that
        threshold: under ``noise=True`` it prices a noise row (and, in the
        objective, a cluster). ``docs/numerics.md`` (*The noise threshold*).
        """
        off = _replace(options, noise=False)
        result, _ = self._fit_runs(backend, off, rng)
        seed = int(rng.integers(np.iinfo(np.int32).max))
        floor = backend.template.n_features * options.terms.f0

        def at(threshold: float) -> _engine.Options:
            return _replace(options, lam=max(float(threshold) - floor, _MIN_NOISE_LAMBDA))

        background = at(_engine.default_lambda(backend, options))
        settled = float("nan")
        for refit in range(NOISE_REFITS + 1):
            try:
                result = self._run(backend, background, seed, 0, initial=result.clusters)
            except _engine.EveryRowNoise:
                pass  # the background's typical cost is beyond every row: no core to take, start from the fit
            threshold = None
            for _ in range(NOISE_ROUNDS):
                found = _engine.noise_threshold(backend.template, result.clusters, result.stats, options,
                                                np.random.default_rng(seed))
                if threshold is not None and abs(found - threshold) <= 1e-3 * abs(threshold):
                    break  # the clusters fitted at this threshold give it back: it has settled
                threshold = found
                result = self._run(backend, at(threshold), seed, 0, initial=result.clusters)
            assert threshold is not None
            settled = threshold
            kept = _rows_kept(backend, result, at(settled).threshold(backend.template.n_features), options.terms)
            if kept is None or refit == NOISE_REFITS:
                break  # (the last round is a trimmed fit of every row, never a refit on some)
            # A cluster of far rows (one of the k the fit asked for made of outliers) is dissolved and the k
            # clusters fitted again on the other rows, so that noise does not count among the clusters asked for.
            try:
                assert isinstance(backend, _engine.InMemory)  # _rows_kept keeps none on another backend
                result, _ = self._fit_runs(_engine.InMemory(backend.data.take(kept)), off, rng)
            except CraftInputError:
                break  # too few distinct rows left for k: keep the trimmed fit
        lam = at(settled).lam
        self._warn_about(result, self.k, lam)
        return result, lam

    def _warn_about(self, result: _engine.RunResult, target, lam: float) -> None:
        """Warn when the kept run missed the asked k or did not converge."""
        if target is not None and result.n_clusters != target:
            warnings.warn(
                f"k={target} clusters were not reachable (method {self.k_method!r}); the fit has "
                f"n_clusters_={result.n_clusters} with lam_={lam:.6g}.",
                UserWarning,
                stacklevel=4,
            )
        if not result.converged:
            warnings.warn(
                f"CRAFT did not converge in max_iter={self.max_iter} passes; raise max_iter.", ConvergenceWarning, stacklevel=4
            )

    def _checked_target(self, n_samples: int, n_distinct: int | None = None):
        """``k``, refused beyond the rows, :func:`cluster_limit` or the distinct rows (when known)."""
        if self.k is None:
            return None
        if self.k > n_samples:
            raise CraftInputError(f"k={self.k} exceeds the number of rows, n_samples={n_samples}.")
        limit = cluster_limit(n_samples)
        if self.k > limit:
            raise CraftInputError(
                f"k={self.k} is more clusters than a fit on {n_samples} rows may have: at most {limit} ({_LIMIT_RULE}); "
                "with more, most clusters hold a single row. "
                f"Ask for k <= {limit}."
            )
        if n_distinct is not None and self.k > n_distinct:
            raise CraftInputError(
                f"k={self.k} exceeds the {n_distinct} distinct rows of the table: identical rows always share a "
                f"cluster, so no lambda gives k clusters (the search would try dozens of fits). Ask for "
                f"k <= {n_distinct}."
            )
        return self.k

    def _bounded_run(self, data, options, seed, restart, n_samples: int, target, *, initial=None):
        """One restart; one that opens more than ``options.max_clusters`` is refused (λ given or default)
        or, where k is the target, dropped (it is far from k; another restart or the search's run stands)."""
        try:
            return self._run(data, options, seed, restart, initial=initial)
        except _engine.TooManyClusters as exceeded:
            if target is not None:
                return None
            raise self._too_many_clusters(exceeded.args[0], n_samples, options.lam) from None

    def _too_many_clusters(self, n_clusters: int | None, n_samples: int, lam: float) -> CraftInputError:
        """The error of a fit whose λ opens more clusters than :func:`cluster_limit` allows."""
        source = f"lam={lam:.3g}" if self.lam is not None else f"the lambda derived ({lam:.3g})"
        return CraftInputError(
            f"{source} opens more than {cluster_limit(n_samples)} clusters on {n_samples} rows (the most a fit may "
            f"have: {_LIMIT_RULE}): nearly every row would be a cluster of "
            "its own, and every pass would cost rows x clusters x features. "
            + ("Ask for a smaller k." if self.k is not None else "Raise lam, or give k instead.")
        )

    def _run(self, data, options, seed, restart, *, initial: _engine.Clusters | None = None):
        return _engine.run(
            data, options, np.random.default_rng(seed), restart=restart, callback=self._callback, initial=initial
        )

    def _search_lambda(
        self, data: EncodedData | _engine.Backend, options: _engine.Options, target: int, seed, *,
        start: float | None = None, initial: _engine.Clusters | None = None,
    ) -> tuple[float, list[tuple[float, _engine.RunResult]]]:
        """Lambda whose fit (first seed) has exactly ``target`` clusters, if one is found.

        Starts from the farthest-first lambda (or ``start``), brackets by
        doubling or halving (K falls as lambda grows, though not strictly),
        then bisects on log(lambda) (:class:`craft._lambda_search.SearchStep`).
        Every run starts from its seeding, or from ``initial`` (a warm
        start). Every evaluated fit is kept so the caller can reuse it; the
        kept λ is the best of them by :func:`_ranking`.

        With more than one thread (``n_jobs``, in memory), the fits the
        search would ask for next, for either outcome of the current one,
        run ahead on the spare threads (:class:`_FitsAhead`). Each fit is a
        function of its λ alone, and only the fits the sequential search asks
        for are kept, in its order: the result does not depend on the threads.
        """
        # A lambda that is far too small opens hundreds of clusters; knowing
        # that K exceeds the target is enough, so such runs stop early.
        capped = _replace(options, max_clusters=_run_limit(data.n_samples, target))

        def evaluate(lam: float, stop: threading.Event | None = None) -> tuple[int, _engine.RunResult | None]:
            try:
                return self._search_run(data, _replace(capped, lam=lam), seed, initial, stop)
            except _engine.TooManyClusters as exceeded:
                return exceeded.args[0], None

        if start is None:
            start = _engine.farthest_first_lambda(data, target, options, np.random.default_rng(seed))
        if not (np.isfinite(start) and start > 0):
            # No row at a positive distance (possible above m = 0.5, where F_Delta < 0):
            # the search only needs somewhere to start.
            start = _checked_lambda(_engine.default_lambda(data, options), self, None)
        threads = self._threads_for(data)
        tried: list[tuple[float, _engine.RunResult]] = []
        step = SearchStep("start", float(start))
        with _FitsAhead(evaluate, threads) as fits:
            while not step.done:
                fits.plan(step.lam, [following.lam for following in step.successors(target)])
                found, result = fits.result(step.lam)
                if result is not None:
                    tried.append((step.lam, result))
                step = step.after(found, target)
        if not tried:
            return step.lam, tried
        lam, _ = min(tried, key=lambda item: _ranking(item[1], target))
        return lam, tried

    def _search_run(self, data, options: _engine.Options, seed, initial, stop: threading.Event | None):
        """One run of the λ search: (K, result); a run run ahead stops at its next pass once ``stop`` is set."""
        callback = self._callback
        if stop is not None:
            def callback(record, report=self._callback):
                if stop.is_set():
                    raise _Abandoned
                if report is not None:
                    report(record)
        result = _engine.run(data, options, np.random.default_rng(seed), restart=0, callback=callback, initial=initial)
        return result.n_clusters, result

    def _store(self, result: _engine.RunResult, data: EncodedData, lam: float, options: _engine.Options, *,
               schema: Schema, encoder: Encoder, columns, **extra) -> None:
        """Set every fitted attribute at once, from a fit that has succeeded.

        ``extra`` holds a subclass's own fitted attributes (and may replace
        ``labels_``); nothing is assigned before all values are computed.
        """
        names = np.asarray(columns, dtype=object)
        engine_features = list(schema.numeric) + list(schema.categorical)
        position = {name: j for j, name in enumerate(str(c) for c in names)}
        mask = np.zeros((result.n_clusters, names.size), dtype=bool)
        used = [position[name] for name in engine_features]
        mask[:, used] = result.clusters.weights > 0.5
        pinned = np.zeros((result.n_clusters, names.size), dtype=np.int8)
        if result.pins is not None:
            pinned[:, used] = result.pins
        options = _replace(options, lam=lam)
        # The inspection surface, by the engine's one function (every backend passes here).
        inspection = _engine.inspect(data, result.clusters, result.stats, options, n_noise=result.n_noise, pins=result.pins)
        fitted = {
            "schema_": schema,
            "encoder_": encoder,
            "n_imputed_": dict(encoder.n_imputed_),
            "n_marginalised_": dict(encoder.n_marginalised_),
            "feature_names_in_": names,
            "n_features_in_": int(names.size),
            "engine_features_": engine_features,
            "lam_": lam,
            "options_": options,
            "clusters_": result.clusters,
            "n_clusters_": result.n_clusters,
            "n_noise_": result.n_noise,
            "objective_": result.objective,
            "n_iter_": result.n_iter,
            "converged_": result.converged,
            "history_": result.history,
            "rho_": options.terms.rho,
            "cluster_sizes_": result.stats.counts.astype(np.int64),
            "feature_mask_": mask,
            "pins_": pinned,
            "statistics_": result.stats,
            "selection_": inspection.selection,
            "objective_terms_": inspection.objective,
            **extra,
        }
        if "labels_" not in fitted:
            fitted["labels_"] = result.labels.astype(np.int64)
        for name, value in fitted.items():
            setattr(self, name, value)
        n_rows = int(result.stats.counts.sum()) + int(result.n_noise)
        if result.n_noise > NOISE_WARN_SHARE * n_rows:
            smallest = int(result.stats.counts.min()) if result.n_clusters else 0
            warnings.warn(noise_share_note(int(result.n_noise), n_rows, smallest), UserWarning, stacklevel=3)
        empty = np.flatnonzero(~inspection.selection.selected.any(axis=1))
        if empty.size:
            warnings.warn(
                f"cluster(s) {empty.tolist()} select no feature (budget={options.budget!r}): their distance to a "
                "row is its cost under the whole table's level frequencies alone, so nothing of their own places "
                "rows in them; craft.profiles.featureless_note(model) says it in full.",
                UserWarning,
                stacklevel=3,
            )

    def _check_fitted(self):
        if not hasattr(self, "clusters_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("This CRAFT instance is not fitted yet; call fit first.")

    def _more_tags(self):
        # scikit-learn < 1.6 reads tags from here (1.6+ reads __sklearn_tags__ below).
        return {"allow_nan": True, "X_types": ["2darray", "categorical", "string"]}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


# ----------------------------------------------------------------------

def warm_refit(model: CRAFT, X, **params) -> CRAFT:
    """A new model: ``model``'s parameters with ``params`` set, fitted warm on ``X``; ``model`` is left as it is.

    The quick answer to "what if m were 0.55?": one run from ``model``'s
    partition at the new parameters (``warm_start=True``, see
    :class:`CRAFT`), not the restarts. Deterministic, like every fit.
    Where ``X`` is not the table ``model`` was fitted on, the fit is cold
    and warns (``warm_started_`` is False).

    Parameters
    ----------
    model : CRAFT
        A fitted model (also a :class:`craft.distributed.DaskCRAFT`).
    X : table
        The table ``model`` was fitted on.
    **params
        Parameters to change, by their :meth:`set_params` names.

    Returns
    -------
    CRAFT
        The new fitted model, of ``model``'s class, with ``warm_start=True``.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9],
    ...                       "colour": ["red", "red", "red", "blue", "blue", "blue"]})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(table)
    >>> refit = warm_refit(model, table, m=0.6)
    >>> refit.warm_started_, refit.m, model.m
    (True, 0.6, 0.5)
    """
    if not hasattr(model, "statistics_"):
        raise CraftInputError("warm_refit needs a fitted model: fit it first (a warm fit starts from its partition).")
    refit = clone(model).set_params(warm_start=True, **params)
    # The fitted attributes are read, never changed in place (a fit stores new objects), so sharing them is safe.
    refit.__dict__.update({name: value for name, value in vars(model).items() if name.endswith("_") and not name.startswith("_")})
    return refit.fit(X)


def assignment_frame(data: EncodedData, clusters: _engine.Clusters, options: _engine.Options, index,
                     categorical=()) -> pd.DataFrame:
    """``CRAFT.assign``'s table for encoded rows: cluster, cost, margin, fits_no_cluster and the unknown cells.

    Both backends call it (``DaskCRAFT`` once per partition). The cluster and
    its cost are the compiled pass's (:func:`_engine.nearest_cluster`, what
    ``predict`` returns), the opening test is the pass's own
    (:func:`_engine.opening_candidates` at ``options.threshold``). The
    next-nearest distance is the same kernel's over the other clusters, run
    once per cluster on the rows it took (:func:`_engine.runner_up`). A
    row's distance to a cluster does not depend on which other clusters are
    present, so the margin is never negative. A model fitted with ``noise=True`` labels the
    rows that fit no cluster -1, as ``predict`` does; their cost and margin
    are still those of their nearest cluster. A row with no cell the clusters
    can judge (``nothing_known``: every cell missing or a level never seen in
    fit, :meth:`EncodedData.known_cells`) costs the same in every cluster:
    its margin is NaN and it fits no cluster, whatever its cost; its
    ``cluster`` stays ``predict``'s. ``categorical`` names the columns of
    ``data.codes`` for ``unseen_columns``.
    """
    best, labels = _engine.nearest_cluster(data, clusters, options.terms)
    unseen_frame = unseen_columns(data, categorical)
    nothing_known = data.known_cells() == 0
    opening = np.zeros(data.n_samples, dtype=bool)
    opening[_engine.opening_candidates(data, best, options.threshold(data.n_features))] = True
    second, _ = _engine.runner_up(data, clusters, options.terms, labels)
    margin = second - best
    cluster = np.where(opening, -1, labels) if options.noise else labels
    # A row with no cell the clusters can judge costs the same in every cluster: no margin, and it fits none.
    margin[nothing_known] = np.nan
    return pd.DataFrame(
        {"cluster": cluster.astype(np.int64), "cost": best, "margin": margin,
         "fits_no_cluster": opening | nothing_known, "nothing_known": nothing_known, **unseen_frame}, index=index
    )


def unseen_columns(data: EncodedData, categorical) -> dict:
    """Per row, the cells holding values never seen in fit: their number and their columns (comma-separated).

    ``categorical`` names the encoder's categorical columns, in code order.
    """
    unseen = data.unseen if data.unseen is not None else np.zeros(data.codes.shape, dtype=bool)
    names = np.asarray([str(c) for c in categorical], dtype=object)
    listed = np.full(data.n_samples, "", dtype=object)
    for row in np.flatnonzero(unseen.any(axis=1)):
        listed[row] = ", ".join(names[unseen[row]])
    return {"unseen_cells": unseen.sum(axis=1).astype(np.int64), "unseen_columns": listed}


def check_fitted_columns(table: pd.DataFrame, encoder: Encoder, fitted_columns) -> None:
    """Refuse a table for a fitted model, naming every missing, extra and differently typed column at once.

    Missing: a column the model uses (numeric or categorical) that the
    table lacks. Differently typed: a numeric column whose values are not
    numbers (text that is not a number, dates, durations). Extra: a column
    the fit never saw; extra columns alone are no error (they are left out,
    as the fit's ignored columns are), but are named with the others, since
    a renamed column is both missing and extra. A categorical column takes
    any values: levels unseen in fit follow the fit's rule
    (:meth:`craft.encoding.Encoder.transform`, ``docs/numerics.md``).
    """
    present = set(table.columns)
    missing = [name for name in [*encoder.numeric, *encoder.categorical] if name not in present]
    mistyped = []
    for name in encoder.numeric:
        dtype = table[name].dtype if name in present else None
        if dtype is None or (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)):
            continue
        try:  # the encoder's own reading of a numeric column, so that the two cannot disagree
            numeric_column(table[name], name)
        except CraftInputError as error:
            mistyped.append(str(error))
    if not missing and not mistyped:
        return
    known = {str(c) for c in fitted_columns}
    extra = [name for name in table.columns if name not in known]
    parts = [f"X lacks the fitted column(s) {missing}."] if missing else []
    parts += mistyped
    if extra:
        parts.append(f"X has column(s) the fit did not see (they would be left out): {extra}.")
    raise CraftInputError(" ".join(parts) + " Pass a table with the fitted columns and types.")


def _ranking(result: _engine.RunResult, target):
    """Sort key for runs: K nearest the target, then objective, then numeric normaliser (ties: the first run)."""
    distance = abs(result.n_clusters - target) if target is not None else 0
    # Objectives equal up to rounding are ties (a selected numeric feature adds
    # n_k/2 whatever the partition while above the variance floor), so they
    # are compared at 10 significant digits. So is the normaliser: two restarts
    # that reach one partition, numbered in two orders, differ there only in
    # the last bits, which differ again between backends (a Dask sum runs over
    # partitions); the first such restart is kept on every backend.
    return distance, float(f"{result.objective:.10g}"), float(f"{result.numeric_nll:.10g}")


def _run_limit(n_samples: int, target) -> int | None:
    """Most clusters a restart may open: :func:`cluster_limit`, or with a target k as many as the λ search allows.

    None where the limit is every row (small tables): a pass counts the
    clusters it opens before emptied ones are dropped, which may then
    exceed the rows without the fit being degenerate.
    """
    if target is not None:
        return max(2 * target, target + 10)
    limit = cluster_limit(n_samples)
    return None if limit >= n_samples else limit


class _Abandoned(Exception):
    """Raised in a fit run ahead by the λ search once the search has gone the other way."""


class _FitsAhead:
    """The λ search's fits, each run once, the next ones started on spare threads before they are asked for.

    ``evaluate(lam, stop)`` runs the fit at ``lam``. ``plan(lam, following)``
    runs the fit at ``lam`` and, on the other threads, the first of the fits
    the search may ask for next; fits started earlier that are neither are
    stopped (each at its next pass: its callback raises once its ``stop`` is
    set). ``result(lam)`` waits for a planned fit. With one thread nothing is
    started ahead: ``result`` runs the fit where it is asked for. An error of
    a fit is raised only where the search asks for that fit, as the
    sequential search would meet it.
    """

    def __init__(self, evaluate: Callable, threads: int):
        self._evaluate = evaluate
        self._threads = threads
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
        self._running: dict[float, tuple[concurrent.futures.Future, threading.Event]] = {}

    def __enter__(self) -> "_FitsAhead":
        return self

    def __exit__(self, *exc) -> None:
        for _, stop in self._running.values():
            stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def plan(self, lam: float, following: list[float]) -> None:
        if self._pool is None:
            return
        wanted = [lam, *following][: self._threads]
        for started, (future, stop) in list(self._running.items()):
            if started not in wanted:
                stop.set()
                future.cancel()
                del self._running[started]
        for value in wanted:
            if value not in self._running:
                stop = threading.Event()
                self._running[value] = (self._pool.submit(self._evaluate, value, stop), stop)

    def result(self, lam: float):
        planned = self._running.pop(lam, None)
        if planned is None:
            return self._evaluate(lam)
        return planned[0].result()


def _pairs_or_none(value) -> bool:
    """Whether ``value`` is None or a sequence of pairs of integers (row positions; their range is checked in fit)."""
    if value is None:
        return True
    if isinstance(value, (str, bytes, Mapping)):
        return False
    try:
        pairs = list(value)
    except TypeError:
        return False
    return all(
        not isinstance(pair, (str, bytes)) and len(pair) == 2
        and all(isinstance(row, numbers.Integral) and not isinstance(row, bool) for row in pair)
        for pair in pairs
    )


def _thread_count(n_jobs) -> int:
    """Threads for ``n_jobs``: the number given, or with None one per core this process may run on."""
    if n_jobs is not None:
        return int(n_jobs)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform (macOS, Windows)
        return os.cpu_count() or 1


def _same_encoding(previous: Encoder, encoder: Encoder) -> bool:
    """Whether two fitted encoders encode rows the same way: same columns, settings, centres, scales and levels."""
    if (previous.numeric, previous.categorical, previous.standardize, previous.missing) != (
        encoder.numeric, encoder.categorical, encoder.standardize, encoder.missing
    ):
        return False
    tables = ("center_", "scale_", "impute_", "fitted_eta0_", "fitted_var_")
    return all(np.array_equal(getattr(previous, name), getattr(encoder, name)) for name in tables) and [
        list(levels) for levels in previous.levels_
    ] == [list(levels) for levels in encoder.levels_]


def _check_callback(callback) -> None:
    """Refuse a ``fit(callback=...)`` that cannot be called, before any work."""
    if callback is not None and not callable(callback):
        raise CraftInputError(f"callback={callback!r} is invalid: it must be None or a callable.")


#: Rounds of :meth:`CRAFT._noise_fit`'s threshold at most (it settles in two or three on the planted tables).
NOISE_ROUNDS = 6
#: Refits of :meth:`CRAFT._noise_fit` on the rows of the clusters worth their price, at most.
NOISE_REFITS = 3
#: The least λ of a noise threshold below D F0 (λ must be > 0): the threshold is then D F0.
_MIN_NOISE_LAMBDA = 1e-9
#: Above this share of noise rows a fit with noise=True warns (docs/numerics.md, *The noise threshold*).
NOISE_WARN_SHARE = 0.10


def _rows_kept(backend, result: _engine.RunResult, threshold: float, terms) -> np.ndarray | None:
    """The rows of the clusters worth their price, when a cluster is not (None when every cluster is, or on Dask).

    A cluster whose rows cost more in it than as noise (``sum of d_nk >
    (n_k - 1) T``: the cluster itself costs ``T``, each noise row ``T``) is
    not worth keeping: a lone far row, or far rows that lie far from each
    other. Only in memory: the refit on the other rows needs them.
    """
    if not isinstance(backend, _engine.InMemory) or not isinstance(result.labels, np.ndarray):
        return None
    labels = np.asarray(result.labels)
    clustered = labels >= 0
    best, _ = _engine.nearest_cluster(backend.data, result.clusters, terms)
    sizes = np.bincount(labels[clustered], minlength=result.n_clusters)
    costs = np.bincount(labels[clustered], weights=best[clustered], minlength=result.n_clusters)
    failing = np.flatnonzero((sizes > 0) & (costs > (sizes - 1) * threshold))
    if not failing.size:
        return None
    # All but the largest such cluster when several fail: clusters of far rows are small, while a cluster that
    # merged two groups (it fails for being too wide) is found again by the refit once the far rows are out.
    dissolved = failing if failing.size == 1 else np.delete(failing, np.argmax(sizes[failing]))
    kept = np.flatnonzero(clustered & ~np.isin(labels, dissolved))
    return kept if kept.size > result.n_clusters else None


def noise_share_note(n_noise: int, n_rows: int, smallest: int) -> str:
    """The warning of a fit whose noise rows exceed :data:`NOISE_WARN_SHARE` of the table, in words."""
    larger = (f", more than the smallest cluster ({smallest:,} rows), so a real segment may be among them"
              if n_noise > smallest else "")
    return (f"noise=True left {n_noise:,} of {n_rows:,} rows ({n_noise / n_rows:.0%}) in no cluster, above "
            f"{NOISE_WARN_SHARE:.0%}{larger}: look at them (labels_ == -1) before reading them as outliers.")


def _replace(options: _engine.Options, **changes) -> _engine.Options:
    return dataclasses.replace(options, **changes)


def _checked_lambda(lam: float, model: CRAFT, target) -> float:
    """A derived lambda, refused unless finite and > 0 (the engine never sees another)."""
    if np.isfinite(lam) and lam > 0:
        return float(lam)
    if target is None:
        raise CraftInputError(
            f"The default lambda (the mean cost of a row under one cluster) is {lam:.6g} <= 0 for this "
            f"table at m={model.m!r}: every used column is constant; give lam > 0 or use other columns."
        )
    raise CraftInputError(
        f"Farthest-first found no row at a positive CRAFT distance from the first (for k={target}, m={model.m!r}): "
        "the rows are alike under this m; give lam > 0."
    )




def _as_table(X, *, min_rows: int = 1) -> pd.DataFrame:
    if sparse.issparse(X):
        raise CraftInputError("Sparse input is not supported: pass a dense array or a DataFrame.")
    if isinstance(X, pd.DataFrame):
        table = X
        if any(not isinstance(c, str) for c in table.columns):
            table = table.set_axis([str(c) for c in table.columns], axis=1)
    else:
        try:
            array = np.asarray(X)
        except Exception as error:  # noqa: BLE001 - any conversion failure is bad input
            raise CraftInputError(f"X cannot be read as a table: {error}.") from None
        if array.ndim != 2:
            raise CraftInputError(
                f"X must be 2-dimensional (rows x columns); got an array of shape {array.shape}. "
                "Reshape your data, e.g. X.reshape(-1, 1) for a single feature."
            )
        if np.iscomplexobj(array):
            raise CraftInputError("Complex data not supported: CRAFT clusters real numbers and categories.")
        table = pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])])
    if table.columns.duplicated().any():
        duplicated = sorted(set(table.columns[table.columns.duplicated()]))
        raise CraftInputError(f"Column names must be unique; duplicated: {duplicated[:5]}.")
    if table.shape[1] == 0:
        raise CraftInputError(
            f"The table has 0 feature(s) (shape={table.shape}) while a minimum of 1 is required."
        )
    if table.shape[0] < min_rows:
        raise CraftInputError(f"CRAFT needs at least {min_rows} rows; the table has n_samples={table.shape[0]}.")
    return table


def _schema_from_list(table: pd.DataFrame, categorical) -> Schema:
    columns = [str(c) for c in table.columns]
    try:
        names = list(categorical)
    except TypeError:
        raise CraftInputError(
            f"categorical={categorical!r} must be 'auto', a list of column names or positions, or a Schema."
        ) from None
    chosen = []
    for item in names:
        if isinstance(item, (numbers.Integral, np.integer)) and not isinstance(item, bool):
            if not -len(columns) <= int(item) < len(columns):
                raise CraftInputError(f"categorical column position {item} is out of range for {len(columns)} columns.")
            chosen.append(columns[item])
        elif str(item) in columns:
            chosen.append(str(item))
        else:
            raise CraftInputError(f"categorical names column {item!r}, which the table does not have.")
    numeric = tuple(c for c in columns if c not in chosen)
    categorical_set = set(chosen)
    reasons = {c: ("categorical: named by the caller" if c in categorical_set else "numeric: not named categorical") for c in columns}
    return Schema(
        numeric=numeric,
        categorical=tuple(c for c in columns if c in categorical_set),
        ignored=(),
        reasons=reasons,
    )
