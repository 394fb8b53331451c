"""The scikit-learn-style CRAFT estimator.

``CRAFT`` holds the parameters, fits (``fit``) and answers for new rows
(``predict``, ``assign``, ``explain``) and for the fit (the inspection
surface). What it delegates, each to a private module of one job:

* ``craft._params``: every parameter's rule and the fixed limits;
* ``craft._tables``: a table given to a method, coerced and checked;
* ``craft._runs``: the runs of one fit (λ from ``k``, restarts, warm and
  noise fits) and the run kept, on either backend;
* ``craft._threads``: the threads those runs use;
* ``craft._warm_start``: starting from the previous fit, and ``warm_refit``;
* ``craft._constraints``: pins and links in the engine's terms;
* ``craft._assignment``: new rows' cluster, cost, margin and explanation.

The names below that live there are imported here too, so that
``craft.estimator.<name>`` keeps working where it was used.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClusterMixin

from . import _engine
from ._assignment import Explanation as Explanation
from ._assignment import _explanation, assignment_frame as assignment_frame, unseen_columns as unseen_columns
from ._constraints import _linked_options, _pinned_options
from ._params import MAX_CLUSTERS as MAX_CLUSTERS
from ._params import MAX_ITER as MAX_ITER
from ._params import MAX_N_INIT as MAX_N_INIT
from ._params import MAX_THREADS as MAX_THREADS
from ._params import MIN_SMOOTHING as MIN_SMOOTHING
from ._params import _PARAMETER_RULES, _check_callback as _check_callback, _number as _number, _Rule as _Rule
from ._params import cluster_limit as cluster_limit
from ._random import as_generator
from ._runs import NOISE_WARN_SHARE as NOISE_WARN_SHARE
from ._runs import SEARCH_ROWS as SEARCH_ROWS
from ._runs import _checked_lambda as _checked_lambda
from ._runs import _FitRuns, _ranking as _ranking, _replace, _rows_kept as _rows_kept
from ._runs import noise_share_note as noise_share_note
from ._tables import as_table as as_table
from ._tables import _schema_from_list, check_fitted_columns as check_fitted_columns
from ._threads import THREADED_CELLS as THREADED_CELLS
from ._warm_start import _warm_start_from
from ._warm_start import warm_refit as warm_refit
from .encoding import Encoder, EncodedData
from .exceptions import CraftInputError
from .limits import check_columns
from .priors import prior_terms
from .schema import Schema, infer_schema


class CRAFT(ClusterMixin, _FitRuns, BaseEstimator):
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
        uses every core, where a pass's work reaches ``THREADED_CELLS``
        (150,000 cells, a numeric one counted as a quarter); below, one (the
        glue between the compiled steps holds Python's lock, so there
        threads cost more than they give). The result does not
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
        table = as_table(X, min_rows=2)
        # Columns only, before the per-column work a very wide table pays for (its cells are already in memory);
        # a fixed limit, so that the same call never depends on the machine's free memory.
        check_columns(table.shape[1], "X")
        schema = self._schema(table)
        encoder = Encoder(list(schema.numeric), list(schema.categorical), bool(self.standardize), self.missing)
        data = encoder.fit_transform(table)
        warm = _warm_start_from(self, encoder, data.n_samples, table.columns)
        options = _linked_options(self, _pinned_options(self, options, schema, warm), data.n_samples)
        with self._reporting(callback):
            best, lam = self._fit_runs(_engine.InMemory(data), options, as_generator(self.random_state), warm=warm)
        self._store(best, data, lam, options, schema=schema, encoder=encoder, columns=table.columns,
                    warm_started_=warm is not None and warm.used)
        return self

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
        _, data = self._new_rows(X, array_width=True)
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
        table, data = self._new_rows(X)
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
        table, data = self._new_rows(X)
        return _explanation(data, self.clusters_, self.options_.terms, self.engine_features_, self.feature_names_in_,
                            table.index)

    def _new_rows(self, X, *, array_width: bool = False) -> tuple[pd.DataFrame, EncodedData]:
        """``X`` as a table and encoded, for :meth:`predict`, :meth:`assign` and :meth:`explain` (fitted models only).

        ``array_width``: an array (not a DataFrame) of another width than the
        fit's is refused with its width, as :meth:`predict` does. Each note of
        the encoding (levels unseen in fit, a value read as a fitted level of
        another type) is a warning at the line that called the public method
        (``stacklevel=3``: this helper, the method, its caller).
        """
        self._check_fitted()
        table = as_table(X)
        if array_width and not isinstance(X, pd.DataFrame) and table.shape[1] != self.n_features_in_:
            raise CraftInputError(
                f"X has {table.shape[1]} features, but CRAFT is expecting {self.n_features_in_} features as input."
            )
        notes: list[str] = []
        data = self._encoded(table, notes)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=3)
        return table, data

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
        table = as_table(X)
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
