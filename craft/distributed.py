"""Dask backend: CRAFT on a partitioned table with a ``dask.distributed`` cluster.

:class:`DaskCRAFT` takes the same parameters as :class:`craft.CRAFT` and fits
a ``dask.dataframe.DataFrame`` (partitioned Parquet or CSV, or anything dask
reads) without ever holding the table in one process. It gives the same
result as the in-memory engine for the same data, parameters and seed: the
estimator's restarts and λ search (``CRAFT._fit_runs``) and the engine's
own loop (:func:`craft._engine.run`) drive the partitions through the
backend interface (:class:`craft._engine.Backend`;
``craft._dask_backend._Partitions`` here, ``_engine.InMemory`` for one
table), the engine's functions run on every partition
(``craft._partition_tasks``), and only the steps that the paper's pass makes
in row order run on the driver. This module holds the estimator, scoring a
dask table with a fitted model (:func:`assign_partitions`) and the checks of
its input; the three modules keep only what is about partitions.

How a run maps onto the cluster (``docs/distributed.md`` has the details):

* **Encoding.** Two reductions learn the encoder (imputation means, centres,
  scales, level sets and counts, variances); every task then encodes its
  partition with :meth:`craft.encoding.Encoder.transform`. By default the
  partitions are read and encoded again in every map, so a worker's memory
  is bounded by the partitions it is working on, not by the data
  (``persist=True`` keeps the encoded partitions in cluster memory instead).
* **The pass.** Each partition computes every row's distance to the
  clusters that exist when the pass starts (the compiled kernel), its
  nearest cluster, and the sufficient statistics of that assignment. Rows
  farther than ``lambda + D F0`` from every cluster are the only ones that
  can open a cluster. As in OCC DP-means (Pan et al., NIPS 2013), workers
  *propose* them, screened against the clusters opened so far, and the
  driver *validates* them in global row order with the engine's
  :class:`~craft._engine.OpeningWalk`, which draws each new cluster's
  features from the same random stream as the in-memory pass. The driver
  receives proposals in chunks of at most ``chunk_rows`` rows. A second map
  then gives every row its final label (``OpeningWalk.assign``) and the
  statistics, which are summed in a fixed tree on the workers.
* **Updates** (means, variances, level distributions, selection, objective)
  run on the driver from the reduced statistics, with the engine's
  functions.
* **Restarts and the λ search** are ``CRAFT``'s own. Above
  ``craft.estimator.SEARCH_ROWS`` rows they run on the in-memory sample's
  rows, gathered on the driver, and the kept run's clusters then start the
  passes over the partitions.

What is not bit-for-bit equal: sums are formed per partition and then added,
so the encoder's centres and scales and the statistics can differ from the
in-memory ones in the last bits. Labels, masks and K agree unless two
distances tie to within rounding; the objective agrees to about 1e-12
relative.

Examples
--------
>>> from distributed import Client                     # doctest: +SKIP
>>> import dask.dataframe as dd                        # doctest: +SKIP
>>> from craft.distributed import DaskCRAFT            # doctest: +SKIP
>>> client = Client()                                  # doctest: +SKIP
>>> table = dd.read_parquet("data/part-*.parquet")     # doctest: +SKIP
>>> model = DaskCRAFT(m=0.5, lam=20.0, categorical=["colour"]).fit(table)  # doctest: +SKIP
>>> model.labels_.compute()                            # doctest: +SKIP
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from . import _engine
from ._optional import missing
from .exceptions import CraftInputError

try:
    import dask
    import dask.dataframe as dd
    from distributed import Client, default_client
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("dask[dataframe,distributed]", extra="dask", needed_for="craft.distributed") from error

from ._assignment import assignment_frame
from ._constraints import _pinned_options
from ._dask_backend import _Partitions
from ._params import _check_callback, _number, _Rule
from ._random import as_generator
from ._tables import check_fitted_columns
from ._warm_start import _warm_start_from
from .encoding import Encoder
from .estimator import CRAFT

__all__ = ["DaskCRAFT", "assign_partitions"]

_DASK_RULES = {
    "chunk_rows": _number(1, None, low_open=False, integer=True),
    "persist": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    # The labels stay on the workers (labels_ is a dask Series), so no record can carry them.
    "history_labels": _Rule(lambda value: value is False or value is np.False_, "False: a dask fit's labels stay "
                            "on the workers, so its history_ records carry none"),
    # Linked rows are placed one unit after another in one process; CRAFT takes them.
    "must_link": _Rule(lambda value: not value, "None: links are placed in one process (fit CRAFT in memory)"),
    "cannot_link": _Rule(lambda value: not value, "None: links are placed in one process (fit CRAFT in memory)"),
}

# CRAFT's defaults, so that the two estimators cannot drift apart.
_DEFAULTS = {name: p.default for name, p in inspect.signature(CRAFT.__init__).parameters.items() if name != "self"}


class DaskCRAFT(CRAFT):
    """CRAFT on a ``dask.dataframe.DataFrame`` with a ``dask.distributed`` cluster.

    The same estimator as :class:`craft.CRAFT` (every parameter below that
    ``CRAFT`` has means the same), fitted partition by partition. For the
    same data, parameters and ``random_state`` the fit equals the in-memory
    one at every size: same labels, masks and K, λ and objective equal to
    rounding (see the module documentation for why the last bits can
    differ).

    Parameters
    ----------
    m, rho, lam, k, k_method, budget, rho_selection, eps_c, eps_v, standardize, max_iter, n_init, init, smoothing, \
    min_variance, random_state, noise, warm_start, n_jobs, pins
        As in :class:`craft.CRAFT`, and run by the same code
        (``CRAFT._fit_runs``). Up to ``craft.estimator.SEARCH_ROWS``
        (50,000) rows every run passes over the partitions. Above, the λ
        search and the restarts (when there is a choice to make: several
        runs, or a search run at the λ found) run on the same uniform sample
        of that many rows as in memory, gathered on the driver, and the kept
        run's clusters then start the passes over the partitions.
        ``k_method="farthest_first"``, the default λ and a single run at a
        given λ pass over the partitions at any size.
    categorical : "auto", list of str or int, or Schema, default="auto"
        As in :class:`craft.CRAFT`, except that ``"auto"`` infers the schema
        from the *first partition* only. Name the categorical columns (or
        pass a :class:`craft.Schema`) when the first partition may not show
        every column's nature.
    chunk_rows : int, default=65536
        Most rows of proposed openers that the driver receives at once; also
        how many proposals a partition keeps from its first map. The driver
        holds at most ``(1 + n_threads) * chunk_rows`` proposed rows at a
        time (``n_threads``: worker threads of the cluster).
    persist : bool, default=False
        Keep the encoded partitions in cluster memory for the whole fit
        (fast when the cluster's memory holds about ``8 (2 P + Q)`` bytes per
        row for P numeric and Q categorical features). False reads and
        encodes each partition again in every map, so memory is bounded by
        partitions, not by the data.
    must_link, cannot_link : None
        Only None: links name rows, and the pass places linked rows one
        unit after another in one process (``CRAFT`` takes them).
    history_labels : False
        Only False: the labels stay on the workers, so ``history_`` records
        carry none (the parameter is :class:`craft.CRAFT`'s).

    Attributes
    ----------
    labels_ : dask.dataframe.Series of int64
        Cluster of every row, 0..K-1 (-1 for noise under ``noise=True``), indexed by the global row position
        0..N-1 (partition by partition, in order). Its pieces live in the
        cluster's memory: compute or persist it before closing the client.
    partition_sizes_ : ndarray of shape (n_partitions,)
        Rows per partition.
    n_clusters_, n_noise_, feature_mask_, objective_, history_, n_iter_, converged_, warm_started_, pins_, lam_, rho_, schema_, \
    encoder_, options_, clusters_, selection_, statistics_, objective_terms_, engine_features_, cluster_sizes_, \
    n_imputed_, n_marginalised_, feature_names_in_, n_features_in_
        As in :class:`craft.CRAFT` (``encoder_`` fitted partition by
        partition on the whole table); ``history_`` records carry no labels.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd                 # doctest: +SKIP
    >>> from distributed import Client                            # doctest: +SKIP
    >>> client = Client(processes=False)                          # doctest: +SKIP
    >>> table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9],
    ...                       "colour": ["red", "red", "red", "blue", "blue", "blue"]})  # doctest: +SKIP
    >>> model = DaskCRAFT(k=2, k_method="search", random_state=0).fit(
    ...     dd.from_pandas(table, npartitions=2))                  # doctest: +SKIP
    >>> model.labels_.compute().tolist()                          # doctest: +SKIP
    [0, 0, 0, 1, 1, 1]
    """

    def __init__(
        self,
        m=_DEFAULTS["m"],
        *,
        rho=_DEFAULTS["rho"],
        lam=_DEFAULTS["lam"],
        k=_DEFAULTS["k"],
        k_method=_DEFAULTS["k_method"],
        budget=_DEFAULTS["budget"],
        rho_selection=_DEFAULTS["rho_selection"],
        eps_c=_DEFAULTS["eps_c"],
        eps_v=_DEFAULTS["eps_v"],
        categorical=_DEFAULTS["categorical"],
        standardize=_DEFAULTS["standardize"],
        missing=_DEFAULTS["missing"],
        max_iter=_DEFAULTS["max_iter"],
        n_init=_DEFAULTS["n_init"],
        init=_DEFAULTS["init"],
        smoothing=_DEFAULTS["smoothing"],
        min_variance=_DEFAULTS["min_variance"],
        random_state=_DEFAULTS["random_state"],
        history_labels=_DEFAULTS["history_labels"],
        noise=_DEFAULTS["noise"],
        warm_start=_DEFAULTS["warm_start"],
        n_jobs=_DEFAULTS["n_jobs"],
        pins=_DEFAULTS["pins"],
        must_link=_DEFAULTS["must_link"],
        cannot_link=_DEFAULTS["cannot_link"],
        chunk_rows=65_536,
        persist=False,
    ):
        super().__init__(
            m=m,
            rho=rho,
            lam=lam,
            k=k,
            k_method=k_method,
            budget=budget,
            rho_selection=rho_selection,
            eps_c=eps_c,
            eps_v=eps_v,
            categorical=categorical,
            standardize=standardize,
            missing=missing,
            max_iter=max_iter,
            n_init=n_init,
            init=init,
            smoothing=smoothing,
            min_variance=min_variance,
            random_state=random_state,
            history_labels=history_labels,
            noise=noise,
            warm_start=warm_start,
            n_jobs=n_jobs,
            pins=pins,
            must_link=must_link,
            cannot_link=cannot_link,
        )
        self.chunk_rows = chunk_rows
        self.persist = persist

    # ------------------------------------------------------------------
    def fit(self, X, y=None, *, callback=None, client=None):
        """Cluster the rows of a dask DataFrame.

        Parameters
        ----------
        X : dask.dataframe.DataFrame or pandas.DataFrame
            The table; a pandas DataFrame is split into one partition per
            worker thread.
        y : ignored
        callback : callable or None, default=None
            As in :meth:`craft.CRAFT.fit`: called on the driver with every
            iteration's record; not kept by the fitted model.
        client : distributed.Client, optional
            The cluster to run on; by default the current client
            (``distributed.default_client()``).

        Returns
        -------
        self

        Raises
        ------
        CraftInputError
            For invalid parameters or data (the same messages as
            ``CRAFT.fit``), or when no client is available.
        """
        # As CRAFT.fit: locals first, every fitted attribute stored at the end.
        options = self._validated_options()
        _check_callback(callback)
        client = _client(client)
        table = _as_dask_table(X, client)
        schema = self._schema(_schema_sample(table, client, self.categorical))
        numeric, categorical = list(schema.numeric), list(schema.categorical)
        parts = _Partitions(client, table[numeric + categorical], chunk_rows=int(self.chunk_rows))
        encoder = parts.fit_encoder(numeric, categorical, bool(self.standardize), self.missing, persist=bool(self.persist))
        if parts.n_samples < 2:
            raise CraftInputError(f"CRAFT needs at least 2 rows; the table has n_samples={parts.n_samples}.")

        warm = _warm_start_from(self, encoder, parts.n_samples, table.columns)
        options = _pinned_options(self, options, schema, warm)
        with self._reporting(callback):
            best, lam = self._fit_runs(parts, options, as_generator(self.random_state), warm=warm)
        self._store(best, parts.template, lam, options, schema=schema, encoder=encoder, columns=table.columns,
                    labels_=parts.label_series(best.labels), partition_sizes_=parts.sizes.copy(),
                    warm_started_=warm is not None and warm.used)
        return self

    def fit_predict(self, X, y=None, *, callback=None, client=None):
        """Fit and return ``labels_`` (a dask Series)."""
        return self.fit(X, callback=callback, client=client).labels_

    def predict(self, X):
        """Nearest fitted cluster of every row; never opens a cluster.

        Parameters
        ----------
        X : dask.dataframe.DataFrame or pandas.DataFrame
            Must have the fitted columns (``engine_features_``).

        Returns
        -------
        dask.dataframe.Series or ndarray
            A dask Series of int64 with ``X``'s index (one task per
            partition) for a dask DataFrame; for a pandas DataFrame the
            in-memory ``CRAFT.predict``.
        """
        if not _is_dask_frame(X):
            return super().predict(X)
        self._check_fitted()
        X = _checked_frame(self, X)
        meta = pd.Series(np.zeros(0, dtype=np.int64), name="cluster", index=X._meta.index)
        return X.map_partitions(
            _predict_partition, self.encoder_, self.clusters_, self.options_, meta=meta, align_dataframes=False
        )

    def assign(self, X):
        """Each row's cluster, cost, margin and whether it fits no cluster (:meth:`craft.CRAFT.assign`).

        Parameters
        ----------
        X : dask.dataframe.DataFrame or pandas.DataFrame

        Returns
        -------
        dask.dataframe.DataFrame or pandas.DataFrame
            For a dask DataFrame, a dask DataFrame with ``X``'s index and
            partitions (:func:`assign_partitions`); for a pandas DataFrame
            the in-memory ``CRAFT.assign``.
        """
        if not _is_dask_frame(X):
            return super().assign(X)
        return assign_partitions(self, X)

    # ------------------------------------------------------------------
    def _validated_options(self) -> _engine.Options:
        for name, rule in _DASK_RULES.items():
            value = getattr(self, name)
            if not rule.check(value):
                raise CraftInputError(f"Parameter {name}={value!r} is invalid: it must be {rule.text}.")
        return super()._validated_options()


def assign_partitions(model: CRAFT, X):
    """:meth:`craft.CRAFT.assign` of a dask DataFrame, one task per partition, with any fitted model.

    A model read by :func:`craft.load` (in memory, whichever backend fitted
    it) scores a table beyond memory this way; ``DaskCRAFT.assign`` is this
    function. The columns are checked on the driver first (names and dtypes,
    every problem in one message), and each partition's values again as it
    is encoded.

    Parameters
    ----------
    model : craft.CRAFT
        A fitted model.
    X : dask.dataframe.DataFrame

    Returns
    -------
    dask.dataframe.DataFrame
        Columns ``cluster``, ``cost``, ``margin``, ``fits_no_cluster``,
        ``nothing_known``, ``unseen_cells``, ``unseen_columns``
        (:meth:`craft.CRAFT.assign`), with ``X``'s index and partitions.
    """
    model._check_fitted()
    X = _checked_frame(model, X)
    meta = pd.DataFrame({"cluster": np.zeros(0, dtype=np.int64), "cost": np.zeros(0), "margin": np.zeros(0),
                         "fits_no_cluster": np.zeros(0, dtype=bool), "nothing_known": np.zeros(0, dtype=bool),
                         "unseen_cells": np.zeros(0, dtype=np.int64), "unseen_columns": np.zeros(0, dtype=object)},
                        index=X._meta.index)
    return X.map_partitions(_scored_partition, model.encoder_, model.clusters_, model.options_,
                            list(model.feature_names_in_), meta=meta, align_dataframes=False)


def _checked_frame(model: CRAFT, X):
    """``X`` with text column names, refused (as in memory) when its columns do not fit the model."""
    if any(not isinstance(c, str) for c in X.columns):
        X = X.rename(columns=str)
    check_fitted_columns(X._meta, model.encoder_, model.feature_names_in_)
    return X


def _scored_partition(table: pd.DataFrame, encoder: Encoder, clusters: _engine.Clusters, options: _engine.Options,
                      fitted_columns: list) -> pd.DataFrame:
    table = table.rename(columns=str)
    check_fitted_columns(table, encoder, fitted_columns)
    return assignment_frame(encoder.transform(table), clusters, options, table.index, encoder.categorical)


# ----------------------------------------------------------------------
# Input


def _client(client) -> Client:
    if client is not None:
        return client
    try:
        return default_client()
    except ValueError:
        raise CraftInputError(
            "DaskCRAFT needs a dask.distributed Client: create one first (Client() for a local cluster, "
            "Client('tcp://scheduler:8786') for a running one) or pass client=."
        ) from None


def _is_dask_frame(X) -> bool:
    return dask.is_dask_collection(X) and hasattr(X, "columns") and hasattr(X, "map_partitions")


def _as_dask_table(X, client: Client):
    if isinstance(X, pd.DataFrame):
        threads = max(1, sum(client.nthreads().values()))
        X = dd.from_pandas(X, npartitions=max(1, min(threads, len(X) // 2 or 1)), sort=False)
    elif not _is_dask_frame(X):
        raise CraftInputError(f"X must be a dask.dataframe.DataFrame (or a pandas DataFrame); got {type(X).__name__}.")
    if any(not isinstance(c, str) for c in X.columns):
        X = X.rename(columns=str)
    columns = pd.Index(X.columns)
    if columns.duplicated().any():
        duplicated = sorted(set(columns[columns.duplicated()]))
        raise CraftInputError(f"Column names must be unique; duplicated: {duplicated[:5]}.")
    if len(columns) == 0:
        raise CraftInputError(f"The table has 0 feature(s) (npartitions={X.npartitions}) while a minimum of 1 is required.")
    return X


def _schema_sample(table, client: Client, categorical) -> pd.DataFrame:
    """The rows the schema is read from: for "auto" the first partition with 2 rows or more, else none."""
    if not (isinstance(categorical, str) and categorical == "auto"):
        return table._meta
    sample = table._meta
    for p in range(table.npartitions):
        sample = client.compute(table.partitions[p]).result()
        if len(sample) >= 2:
            break
    return sample


def _predict_partition(table: pd.DataFrame, encoder: Encoder, clusters: _engine.Clusters, opts: _engine.Options) -> pd.Series:
    table = table.rename(columns=str)
    _, labels = _engine.nearest_or_noise(encoder.transform(table), clusters, opts)
    return pd.Series(labels.astype(np.int64), index=table.index, name="cluster")
