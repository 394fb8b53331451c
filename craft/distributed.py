"""Dask backend: CRAFT on a partitioned table with a ``dask.distributed`` cluster.

:class:`DaskCRAFT` takes the same parameters as :class:`craft.CRAFT` and fits
a ``dask.dataframe.DataFrame`` (partitioned Parquet or CSV, or anything dask
reads) without ever holding the table in one process. It gives the same
result as the in-memory engine for the same data, parameters and seed: the
estimator's restarts and λ search (``CRAFT._fit_runs``) and the engine's
own loop (:func:`craft._engine.run`) drive the partitions through the
backend interface (:class:`craft._engine.Backend`; ``_Partitions`` here,
``_engine.InMemory`` for one table), the engine's functions run on every
partition, and only the steps that the paper's pass makes in row order run
on the driver. This module keeps only what is about partitions.

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

import copy
import dataclasses
import functools
import inspect
import itertools
import operator
import uuid

import numpy as np
import pandas as pd

from . import _engine
from .encoding import EncodedData, Encoder, _level_sort_key, check_observed
from ._random import as_generator
from ._assignment import assignment_frame
from ._constraints import _pinned_options
from ._params import _check_callback, _number, _Rule
from ._tables import check_fitted_columns
from ._warm_start import _warm_start_from
from .estimator import CRAFT
from ._optional import missing
from .exceptions import CraftInputError
from .priors import PriorTerms

try:
    import dask
    import dask.dataframe as dd
    from dask import delayed
    from dask.local import get_sync
    from dask.optimization import cull
    from distributed import Client, Future, default_client
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("dask[dataframe,distributed]", extra="dask", needed_for="craft.distributed") from error

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

# Partial results are added in groups of this many, in partition order, on the workers.
_FAN_IN = 8


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


# ----------------------------------------------------------------------
# Partitions as self-contained sources


@dataclasses.dataclass
class _Source:
    """How to produce one partition: its task graph, culled to that partition, run on the worker."""

    graph: dict
    key: object

    @classmethod
    def of(cls, partition) -> "_Source":
        graph, _ = cull(dict(partition.__dask_graph__()), [partition.key])
        return cls(graph, partition.key)

    def __call__(self) -> pd.DataFrame:
        return get_sync(self.graph, self.key)  # type: ignore[arg-type]  # a dask key; dask's annotation is narrower


def _data(source, encoder: Encoder) -> EncodedData:
    """The encoded partition: kept in memory (``persist``) or read and encoded now."""
    if isinstance(source, EncodedData):
        return source
    return encoder.transform(source())


def _on_partition(function, source, encoder, *args):
    return function(_data(source, encoder), *args)


def _on_table(function, source, *args):
    return function(source(), *args)


class _Partitions:
    """The partitions of one fit, in global row order, and the ways to map over them.

    ``sources[p]`` is a future of partition ``p``: a :class:`_Source` that
    reads it (encoded again by each task) or, with ``persist``, the encoded
    partition itself. Tasks are submitted as futures (no graph optimisation
    per call); per-partition state (labels, distances) stays in worker memory
    as futures, next to its partition; the driver holds only what the
    methods return.
    """

    def __init__(self, client: Client, table, *, chunk_rows: int):
        self.client = client
        self.chunk_rows = chunk_rows
        self.lookahead = max(1, sum(client.nthreads().values()))
        # Keys unique across clients that share a scheduler; a counter within the fit.
        self._name = f"craft-{uuid.uuid4().hex[:16]}"
        self._count = itertools.count()
        self.sources = [self.keep(_Source.of(part), name="source") for part in table.to_delayed()]
        self.n_partitions = len(self.sources)
        self._encoder = None

    def fit_encoder(self, numeric: list, categorical: list, standardize: bool, missing: str, *, persist: bool) -> Encoder:
        """Learn the encoder with two reductions; then the partitions are encoded with it."""
        describe = self._submit_all(
            _on_table, self._constant(_describe), self.sources, self._constant(numeric), self._constant(categorical),
            name="describe",
        )
        description = self.reduce(describe, _combine_descriptions)
        self.sizes = description.n_rows
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.n_samples = int(self.sizes.sum())
        encoder = _encoder_from(description, numeric, categorical, standardize, missing)
        moments = self._submit_all(
            _on_table, self._constant(_moments), self.sources, self._constant(numeric), self._constant(categorical),
            self._constant(encoder.impute_), name="moments",
        )
        _finish_encoder(encoder, self.reduce(moments, _combine_moments), description.observed)
        self._encoder = self.keep(encoder, name="encoder")
        if persist:
            self.sources = self._submit_all(_data, self.sources, self._constant(self._encoder), name="encoded")
        # No rows, but the global tables (eta_0, variances, level offsets) that the driver's updates read.
        self.template = encoder.template()
        return encoder

    @property
    def n_features(self) -> int:
        return self.template.n_features

    # -- submitting ----------------------------------------------------
    def _keys(self, name: str, n: int) -> list[str]:
        return [f"{name}-{self._name}-{next(self._count)}" for _ in range(n)]

    def _submit_all(self, function, *per_partition, name=None) -> list:
        """``function(*(arg[p] for arg in per_partition))`` for every partition, as futures."""
        keys = self._keys(name or function.__name__, self.n_partitions)
        return self.client.map(function, *per_partition, key=keys, pure=False)

    def keep(self, value, *, name: str):
        """A future of ``value`` that the cluster can recompute.

        Not ``client.scatter``: scattered data lives only on the worker that
        holds it and is lost with that worker ("already forgotten"). A task
        that returns the value carries the value in its definition, so the
        scheduler reruns it on another worker, and the tasks that depend on
        it (a partition read from its source, then its labels) are
        recomputed from the source partitions.
        """
        (key,) = self._keys(name, 1)
        return self.client.submit(_identity, value, key=key, pure=False)

    def _constant(self, value) -> list:
        return [value] * self.n_partitions

    def map(self, function, *per_partition, context=None) -> list:
        """``function(data_p, *(arg[p] for arg in per_partition), context)`` on every partition.

        Every argument is a list with one item per partition. ``context`` is
        sent once and shared by all tasks. Returns one future per partition.
        """
        shared = self.keep(context, name="context") if context is not None else None
        return self._submit_all(
            _on_partition, self._constant(function), self.sources, self._constant(self._encoder), *per_partition,
            self._constant(shared), name=function.__name__,
        )

    def submit(self, function, p: int, *args):
        """``function(data_p, *args)`` for one partition; a future."""
        (key,) = self._keys(function.__name__, 1)
        return self.client.submit(_on_partition, function, self.sources[p], self._encoder, *args, key=key, pure=False)

    def apply(self, function, *args):
        """``function(*args)`` on a worker (arguments may be futures); a future."""
        (key,) = self._keys(function.__name__, 1)
        return self.client.submit(function, *args, key=key, pure=False)

    def pick(self, futures: list, index: int) -> list:
        """Item ``index`` of every tuple future, computed where the tuple lives."""
        keys = self._keys(f"item{index}", len(futures))
        return self.client.map(operator.getitem, futures, [index] * len(futures), key=keys, pure=False)

    def reduce(self, futures: list, combine):
        """``combine`` over the futures' values in order, in a fixed tree on the workers; the result."""
        return self.tree(futures, combine).result()

    def tree(self, futures: list, combine):
        """The future of a fixed reduction tree (the same sums whatever the scheduling)."""
        level = list(futures)
        while True:  # at least one combine, which also unpacks a single partition's result
            groups = [level[i : i + _FAN_IN] for i in range(0, len(level), _FAN_IN)]
            keys = self._keys(combine.__name__, len(groups))
            level = [self.client.submit(combine, *group, key=key, pure=False) for group, key in zip(groups, keys, strict=True)]
            if len(level) == 1:
                return level[0]

    def gather(self, futures):
        return self.client.gather(futures)

    # -- rows ----------------------------------------------------------
    def owner(self, rows):
        """Partition of every global row (empty partitions are skipped)."""
        return np.searchsorted(self.starts + self.sizes, rows, side="right")

    def rows(self, rows) -> EncodedData:
        """The encoded rows (global indices, increasing), gathered on the driver."""
        rows = np.asarray(rows, dtype=np.int64)
        owner = self.owner(rows)
        futures = [self.submit(_take, int(p), rows[owner == p] - self.starts[p]) for p in np.unique(owner)]
        return _concat(self.template, self.gather(futures))

    def sample(self, n_rows: int, rng: np.random.Generator) -> EncodedData:
        """A uniform sample of ``n_rows`` rows (in row order), gathered on the driver; the in-memory draw."""
        return self.rows(np.sort(rng.choice(self.n_samples, size=n_rows, replace=False)))

    def label_series(self, labels: list):
        """The labels futures as a dask Series indexed by global row position."""
        pieces = [delayed(_label_piece, pure=False)(future, int(start)) for future, start in zip(labels, self.starts, strict=True)]
        meta = pd.Series(np.zeros(0, dtype=np.int64), name="cluster")
        divisions = None
        if (self.sizes > 0).all():
            divisions = tuple(int(s) for s in self.starts) + (self.n_samples - 1,)
        return dd.from_delayed(pieces, meta=meta, divisions=divisions, verify_meta=False)

    # -- the engine's backend interface (see craft._engine.InMemory) ----
    def seed_row(self, row: int):
        owner = int(self.owner(row))
        return owner, row - int(self.starts[owner]), self.rows([row])

    def lower(self, state, seed, weights: np.ndarray, opts: _engine.Options, floor: float):
        """Each partition lowers its rows' best distances with the seed's cluster (one map)."""
        owner, local_row, seed_data = seed
        n = self.n_partitions
        states = self.map(_seed_update, state[0] if state is not None else [None] * n, [p == owner for p in range(n)],
                          [(local_row, seed_data)] * n, context=_SeedContext(weights, opts, floor))
        totals = self.gather(self.pick(states, 1))
        return (states, totals), int(sum(count for count, _, _ in totals))

    def draw(self, state, uniform: float, floor: float):
        """The engine's proportional draw, its cumulative sum carried from partition to partition."""
        states, totals = state
        starts, carry = [], 0.0
        for count, total, _ in totals:
            starts.append(carry)
            if count:
                carry = carry + total
        target = uniform * carry
        owner = next((p for p, (count, total, _) in enumerate(totals) if count and starts[p] + total > target), None)
        if owner is None:  # the end of the cumulative sum: the last row beyond
            owner = max(p for p, (count, _, _) in enumerate(totals) if count)
        row, data = self.submit(_seed_resolve, owner, states[owner], starts[owner], target, floor).result()
        return owner, row, data

    def farthest(self, state):
        """The first partition's farthest row among the partitions holding the maximum, as np.argmax."""
        _, totals = state
        values = np.array([value for _, _, (value, _, _) in totals])
        owner = int(np.argmax(values))
        _, _, (value, row, data) = totals[owner]
        return (owner, row, data), float(value)

    def initial_labels(self) -> list:
        return [None] * self.n_partitions  # the engine starts from all zeros

    def assign(self, clusters: _engine.Clusters, opts: _engine.Options, rng: np.random.Generator, labels: list):
        proposed, summary, clusters = _assignment_pass(self, clusters, opts, rng, labels)
        settled, stats, n_changed, kept = _compact(self, proposed, summary, labels)
        return settled, stats, n_changed, clusters.n_clusters, kept

    def nearest(self, clusters: _engine.Clusters, opts: _engine.Options, labels: list):
        outputs = self.map(_final_partition, labels, context=_FinalContext(clusters, opts))
        summary = self.reduce(outputs, _combine_summaries)
        return _compact(self, self.pick(outputs, 1), summary, labels)

    def kept_labels(self, labels: list) -> None:
        return None  # the labels stay on the workers

    def one_cluster_statistics(self) -> _engine.Statistics:
        return self.reduce(self.map(_one_cluster_summary), _combine_summaries).stats

    def nearest_cost_total(self, clusters: _engine.Clusters, terms: PriorTerms) -> float:
        return float(np.sum(self.gather(self.map(_cost_sum, context=_NearestContext(clusters, terms)))))

    def distinct_rows(self, at_most: int) -> int:
        """Each partition keeps its ``at_most`` smallest distinct row digests, and so does every sum of the tree:
        the count is exact below ``at_most``, and a truncated piece already holds ``at_most``."""
        return self.reduce(self.map(_distinct_digests, context=at_most), _union_digests).digests.size


@dataclasses.dataclass
class _Digests:
    digests: np.ndarray  # sorted, distinct, at most at_most of them
    at_most: int


def _distinct_digests(data: EncodedData, at_most: int) -> _Digests:
    return _Digests(_engine.distinct_digests(data)[:at_most], at_most)


def _union_digests(*pieces: _Digests) -> _Digests:
    at_most = pieces[0].at_most
    return _Digests(_engine.unique_sorted(np.concatenate([piece.digests for piece in pieces]))[:at_most], at_most)


def _identity(value):
    return value


def _take(data: EncodedData, rows: np.ndarray) -> EncodedData:
    return data.take(rows)


def _concat(template: EncodedData, pieces: list) -> EncodedData:
    if not pieces:
        return template
    observed = None
    if any(piece.observed is not None for piece in pieces):
        observed = np.vstack([
            np.ones(piece.numeric.shape, dtype=bool) if piece.observed is None else piece.observed for piece in pieces
        ])
    return dataclasses.replace(
        template,
        numeric=np.vstack([piece.numeric for piece in pieces]),
        observed=observed,
        codes=np.vstack([piece.codes for piece in pieces]),
    )


def _label_piece(labels: np.ndarray, start: int) -> pd.Series:
    return pd.Series(labels.astype(np.int64), index=pd.RangeIndex(start, start + labels.size), name="cluster")


# ----------------------------------------------------------------------
# The encoder, learnt with two reductions


@dataclasses.dataclass
class _Description:
    """Pass 1 of the encoder: rows per partition, observed numeric sums, level counts."""

    n_rows: np.ndarray  # (partitions covered,)
    observed: np.ndarray  # (P,) non-missing numeric cells
    totals: np.ndarray  # (P,) their sums
    levels: list  # per categorical column: {level: count}
    n_missing: np.ndarray  # (Q,) missing categorical cells


def _describe(table: pd.DataFrame, numeric: list, categorical: list) -> _Description:
    raw = Encoder(numeric, categorical)._numeric_block(table)
    missing = np.isnan(raw)
    levels, n_missing = [], []
    for name in categorical:
        column = table[name]
        counts = column.value_counts(dropna=True, sort=False)
        counts = counts[counts > 0]  # a category dtype lists its unused categories too
        levels.append(dict(zip(counts.index.tolist(), counts.to_numpy(dtype=np.int64).tolist(), strict=True)))
        n_missing.append(int(column.isna().sum()))
    return _Description(
        n_rows=np.array([len(table)], dtype=np.int64),
        observed=(~missing).sum(axis=0),
        totals=np.where(missing, 0.0, raw).sum(axis=0),
        levels=levels,
        n_missing=np.array(n_missing, dtype=np.int64),
    )


def _combine_descriptions(*parts: _Description) -> _Description:
    levels: list[dict] = [dict() for _ in parts[0].levels]
    for part in parts:
        for merged, counts in zip(levels, part.levels, strict=True):
            for level, count in counts.items():
                merged[level] = merged.get(level, 0) + count
    return _Description(
        n_rows=np.concatenate([part.n_rows for part in parts]),
        observed=functools.reduce(np.add, [part.observed for part in parts]),
        totals=functools.reduce(np.add, [part.totals for part in parts]),
        levels=levels,
        n_missing=functools.reduce(np.add, [part.n_missing for part in parts]),
    )


@dataclasses.dataclass
class _Moments:
    """Pass 2: count, sum and centred sum of squares of the imputed numeric columns."""

    n: int
    total: np.ndarray
    m2: np.ndarray


def _moments(table: pd.DataFrame, numeric: list, categorical: list, impute: np.ndarray) -> _Moments:
    raw = Encoder(numeric, categorical)._numeric_block(table)
    filled = np.where(np.isnan(raw), impute[None, :], raw)
    n = filled.shape[0]
    total = filled.sum(axis=0)
    if n == 0:
        return _Moments(0, total, np.zeros_like(total))
    return _Moments(n, total, ((filled - total / n) ** 2).sum(axis=0))


def _combine_moments(*parts: _Moments) -> _Moments:
    # Chan, Golub and LeVeque's pairwise update, in partition order.
    result = parts[0]
    for part in parts[1:]:
        if part.n == 0:
            continue
        if result.n == 0:
            result = part
            continue
        n = result.n + part.n
        delta = part.total / part.n - result.total / result.n
        result = _Moments(n, result.total + part.total, result.m2 + part.m2 + delta * delta * (result.n * part.n / n))
    return result


def _encoder_from(description: _Description, numeric: list, categorical: list, standardize: bool, missing: str) -> Encoder:
    """The levels, level frequencies and imputation values that ``Encoder.fit_transform`` learns."""
    n_rows = int(description.n_rows.sum())
    encoder = Encoder(numeric, categorical, standardize, missing)
    observed = description.observed
    n_missing = {name: int(n_rows - n) for name, n in zip(numeric, observed, strict=True) if n_rows - n}
    n_missing.update((name, int(n)) for name, n in zip(categorical, description.n_missing, strict=True) if n)
    encoder.n_imputed_ = {} if encoder.marginalise else {name: n for name, n in n_missing.items() if name in numeric}
    encoder.n_marginalised_ = n_missing if encoder.marginalise else {}
    if encoder.marginalise:
        check_observed(numeric + categorical, [int(n) for n in observed] + [n_rows - int(n) for n in description.n_missing])
    encoder.impute_ = np.divide(description.totals, observed, out=np.zeros(len(numeric)), where=observed > 0)
    encoder.levels_ = [sorted(counts, key=_level_sort_key) for counts in description.levels]
    encoder.has_missing_level_ = [bool(n) and not encoder.marginalise for n in description.n_missing]
    eta0: list[float] = []
    for levels, seen, n_missing_q in zip(encoder.levels_, description.levels, description.n_missing, strict=True):
        # As Encoder.fit_transform: over the observed cells when they are marginalised.
        total = n_rows - int(n_missing_q) if encoder.marginalise else n_rows
        eta0.extend(seen[level] / max(total, 1) for level in levels)
        if n_missing_q and not encoder.marginalise:
            eta0.append(int(n_missing_q) / max(total, 1))
    encoder.fitted_eta0_ = np.array(eta0, dtype=np.float64)
    return encoder


def _finish_encoder(encoder: Encoder, moments: _Moments, observed: np.ndarray) -> None:
    """Centres, scales and the variance of the encoded columns, from the imputed columns' moments.

    Imputed cells sit at the column's observed mean, so they add nothing to
    the centred sum of squares: the observed cells' variance (marginalised
    missing cells) is the same sum over the observed count.
    """
    n_rows = moments.n
    variance = moments.m2 / np.maximum(observed if encoder.marginalise else n_rows, 1)
    if encoder.standardize:
        encoder.center_ = moments.total / max(n_rows, 1)
        spread = np.sqrt(variance)
        encoder.scale_ = np.where(spread > 0, spread, 1.0)
    else:
        encoder.center_ = np.zeros(len(encoder.numeric))
        encoder.scale_ = np.ones(len(encoder.numeric))
    encoder.fitted_var_ = variance / (encoder.scale_ * encoder.scale_)


def _predict_partition(table: pd.DataFrame, encoder: Encoder, clusters: _engine.Clusters, opts: _engine.Options) -> pd.Series:
    table = table.rename(columns=str)
    _, labels = _engine.nearest_or_noise(encoder.transform(table), clusters, opts)
    return pd.Series(labels.astype(np.int64), index=table.index, name="cluster")


# ----------------------------------------------------------------------
# Per-partition steps (run on the workers)


@dataclasses.dataclass
class _Summary:
    """Sufficient statistics of a labelling, labels changed, candidates per partition; added across partitions."""

    stats: _engine.Statistics
    n_changed: int
    n_candidates: np.ndarray  # (partitions covered,)


def _summary(data: EncodedData, labels: np.ndarray, n_clusters: int, previous, n_candidates: int = 0) -> _Summary:
    stats = _engine.statistics(data, labels, n_clusters)
    before = 0 if previous is None else previous
    return _Summary(stats, int(np.count_nonzero(labels != before)), np.array([n_candidates], dtype=np.int64))


def _combine_summaries(*pieces) -> _Summary:
    parts = [piece[0] if isinstance(piece, tuple) else piece for piece in pieces]
    first = parts[0].stats
    rest = [part.stats for part in parts[1:]]
    return _Summary(
        _engine.Statistics(
            functools.reduce(np.add, [stats.counts for stats in rest], first.counts.copy()),
            functools.reduce(np.add, [stats.numeric_counts for stats in rest], first.numeric_counts.copy()),
            functools.reduce(np.add, [stats.sums for stats in rest], first.sums.copy()),
            functools.reduce(np.add, [stats.sums_sq for stats in rest], first.sums_sq.copy()),
            functools.reduce(np.add, [stats.level_counts for stats in rest], first.level_counts.copy()),
        ),
        sum(part.n_changed for part in parts),
        np.concatenate([part.n_candidates for part in parts]),
    )


@dataclasses.dataclass
class _Proposal:
    """Rows of one partition proposed as openers: local indices, their data, distance to the old clusters."""

    rows: np.ndarray
    data: EncodedData
    best_old: np.ndarray


@dataclasses.dataclass
class _PassContext:
    clusters: _engine.Clusters
    opts: _engine.Options
    threshold: float
    chunk_rows: int


def _pass_partition(data: EncodedData, previous, ctx: _PassContext):
    """First map of a pass: nearest old cluster, candidates, speculative statistics, first proposals.

    Returns ``(summary, best_old, labels, proposal)``; the statistics are the
    pass's if no partition has a candidate. Under ``noise=True`` the
    candidates are labelled noise (:func:`craft._engine.nearest_or_noise`)
    and none is proposed: that pass opens no cluster.
    """
    best_old, labels = _engine.nearest_or_noise(data, ctx.clusters, ctx.opts)
    candidates = np.zeros(0, dtype=np.int64) if ctx.opts.noise else _engine.opening_candidates(data, best_old, ctx.threshold)
    summary = _summary(data, labels, ctx.clusters.n_clusters, previous, candidates.size)
    keep = candidates[: ctx.chunk_rows]
    return summary, best_old, labels.astype(np.int32), _Proposal(keep, data.take(keep), best_old[keep])


@dataclasses.dataclass
class _WalkContext:
    opened: _engine.Clusters | None
    terms: PriorTerms
    threshold: float
    chunk_rows: int


def _screen(proposal: _Proposal, ctx: _WalkContext) -> _Proposal:
    """The proposals still beyond the threshold once the clusters opened so far are counted."""
    if ctx.opened is None:
        return proposal
    best = np.minimum(proposal.best_old, _engine.nearest_cluster(proposal.data, ctx.opened, ctx.terms)[0])
    keep = np.flatnonzero(best > ctx.threshold)
    return _Proposal(proposal.rows[keep], proposal.data.take(keep), proposal.best_old[keep])


def _propose(data: EncodedData, best_old: np.ndarray, position: int, ctx: _WalkContext):
    """Up to ``chunk_rows`` candidates from the ``position``-th on, screened against ``ctx.opened``.

    Returns the proposal and the position of the first candidate not yet examined.
    """
    candidates = _engine.opening_candidates(data, best_old, ctx.threshold)
    kept, n_kept = [], 0
    while position < candidates.size and n_kept < ctx.chunk_rows:
        window = candidates[position : position + ctx.chunk_rows]
        best = best_old[window]
        if ctx.opened is not None:
            best = np.minimum(best, _engine.nearest_cluster(data, ctx.opened, ctx.terms, rows=window)[0])
        keep = window[best > ctx.threshold]
        room = ctx.chunk_rows - n_kept
        if keep.size > room:
            keep = keep[:room]
            position += int(np.searchsorted(window, keep[-1])) + 1
        else:
            position += window.size
        kept.append(keep)
        n_kept += keep.size
    rows = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    return _Proposal(rows, data.take(rows), best_old[rows]), position


@dataclasses.dataclass
class _AssignContext:
    walk: _engine.OpeningWalk
    clusters: _engine.Clusters
    n_clusters: int


def _assign_partition(data: EncodedData, state, previous, row_offset, ctx: _AssignContext):
    """Second map of a pass that opened clusters: final labels (old and new clusters) and statistics."""
    _, best_old, labels, _ = state
    labels, _ = ctx.walk.assign(data, labels.astype(np.int64), best_old, ctx.clusters, row_offset=int(row_offset))
    return _summary(data, labels, ctx.n_clusters, previous), labels.astype(np.int32)


def _relabel(labels: np.ndarray, previous, present: np.ndarray):
    new = _engine.renumber(labels, present).astype(np.int32)
    before = 0 if previous is None else previous
    return new, int(np.count_nonzero(new != before))


@dataclasses.dataclass
class _NearestContext:
    clusters: _engine.Clusters
    terms: PriorTerms


@dataclasses.dataclass
class _FinalContext:
    clusters: _engine.Clusters
    opts: _engine.Options


def _final_partition(data: EncodedData, previous, ctx: _FinalContext):
    """Assignment to the nearest cluster, without opening (the end of an unconverged run); noise stays noise."""
    _, labels = _engine.nearest_or_noise(data, ctx.clusters, ctx.opts)
    return _summary(data, labels, ctx.clusters.n_clusters, previous), labels.astype(np.int32)


def _one_cluster_summary(data: EncodedData, ctx) -> _Summary:
    """Statistics of the labelling with every row in one cluster (default lambda)."""
    return _summary(data, np.zeros(data.n_samples, dtype=np.int64), 1, None)


def _cost_sum(data: EncodedData, ctx: _NearestContext) -> float:
    return float(_engine.nearest_cluster(data, ctx.clusters, ctx.terms)[0].sum())


# Seeding and farthest-first: a per-row "best distance so far" lives on the workers.


@dataclasses.dataclass
class _SeedContext:
    """A new seed cluster, built on every worker from the seed row's data and the driver's v."""

    weights: np.ndarray
    opts: _engine.Options
    floor: float  # rows whose best distance exceeds this may be drawn next


def _beyond_total(best: np.ndarray, floor: float) -> tuple[int, float]:
    beyond = np.flatnonzero(best > floor)
    if beyond.size == 0:
        return 0, 0.0
    return int(beyond.size), float(np.cumsum(best[beyond])[-1])


def _lower(data: EncodedData, state, owner: bool, seed: tuple, ctx: _SeedContext) -> np.ndarray:
    """``min(best, d(x, seed))``, the seed's own row set to -inf where this partition holds it.

    ``seed`` is ``(local row in its partition, EncodedData of that row)``.
    """
    local_row, seed_data = seed
    cluster = _engine.new_clusters(seed_data, np.array([0]), ctx.weights, ctx.opts)
    distance = _engine.nearest_cluster(data, cluster, ctx.opts.terms)[0]
    best = np.minimum(distance, ctx.opts.seeding_cap(data.n_features)) if state is None else np.minimum(state[0], distance)
    if owner:
        best[local_row] = -np.inf
    best[~_engine.has_observed_cell(data)] = -np.inf
    return best


def _seed_update(data: EncodedData, state, owner: bool, seed: tuple, ctx: _SeedContext):
    """Lower the best distances with the new seed; then how many rows lie beyond the floor, their
    total (craft++'s draw) and the farthest row (farthest-first)."""
    best = _lower(data, state, owner, seed, ctx)
    count, total = _beyond_total(best, ctx.floor)
    if best.size == 0:
        return best, (count, total, (-np.inf, -1, None))
    i = int(np.argmax(best))
    return best, (count, total, (float(best[i]), i, data.take(np.array([i]))))


def _seed_resolve(data: EncodedData, state, start: float, target: float, floor: float):
    """The row that ``sample_proportional`` picks here, with the cumulative sum carried in ``start``."""
    best = state[0]
    beyond = np.flatnonzero(best > floor)
    cumulative = start + np.cumsum(best[beyond])
    index = min(int(np.searchsorted(cumulative, target, side="right")), beyond.size - 1)
    row = int(beyond[index])
    return row, data.take(np.array([row]))


# ----------------------------------------------------------------------
# Driver side: the partition-specific steps of the engine's pass, one map at a
# time. The run itself (seeding, passes, updates, objective, history, the last
# assignment) and the λ heuristics are craft._engine's, which drive
# _Partitions through the engine's backend interface.


def _assignment_pass(parts: _Partitions, clusters: _engine.Clusters, opts: _engine.Options, rng, previous):
    """:func:`craft._engine.assignment_pass` over the partitions.

    Returns the labels (futures), their summary and the clusters (old, then opened).
    """
    threshold = opts.threshold(parts.n_features)
    states = parts.map(_pass_partition, previous, context=_PassContext(clusters, opts, threshold, parts.chunk_rows))
    summary = parts.reduce(states, _combine_summaries)
    n_candidates = summary.n_candidates
    if n_candidates.sum() == 0:
        return parts.pick(states, 2), summary, clusters
    walk = _walk(parts, clusters, opts, rng, n_candidates, states)
    light = copy.copy(walk)
    light.rng = None  # type: ignore[assignment]  # the workers only assign; the random stream stays on the driver
    n_total = clusters.n_clusters + len(walk.rows)
    outputs = parts.map(
        _assign_partition, states, previous, list(parts.starts), context=_AssignContext(light, clusters, n_total)
    )
    summary = parts.reduce(outputs, _combine_summaries)
    assert walk.opened is not None  # the first candidate is beyond every old cluster, so it opened one
    return parts.pick(outputs, 1), summary, clusters.stack(walk.opened)


def _walk(parts: _Partitions, clusters, opts, rng, n_candidates, states) -> _engine.OpeningWalk:
    """The ordered walk: proposals are screened on the workers, validated here in global row order.

    The first proposals of the next ``lookahead`` partitions are screened
    while the driver validates the current one, against the clusters opened
    when they were requested (OCC: a stale screen only lets more rows
    through; the walk checks every row against all clusters opened so far).
    The driver so holds at most ``1 + lookahead`` proposals of at most
    ``chunk_rows`` rows.
    """
    walk = _engine.OpeningWalk(clusters, opts, rng)
    threshold = opts.threshold(parts.n_features)
    todo = [p for p in range(parts.n_partitions) if n_candidates[p] > 0]
    pending: dict[int, Future] = {}
    shared = {"n_opened": -1, "future": None}

    def context():
        n_opened = 0 if walk.opened is None else walk.opened.n_clusters
        if shared["n_opened"] != n_opened:
            ctx = _WalkContext(walk.opened, opts.terms, threshold, parts.chunk_rows)
            shared["future"] = parts.keep(ctx, name="walk-context")
            shared["n_opened"] = n_opened
        return shared["future"]

    def visit(p, proposal: _Proposal):
        if proposal.rows.size:
            walk.visit(proposal.data, parts.starts[p] + proposal.rows, proposal.best_old)

    for index, p in enumerate(todo):
        for q in todo[index : index + 1 + parts.lookahead]:
            if q not in pending:
                proposal = parts.apply(operator.getitem, states[q], 3)
                pending[q] = parts.apply(_screen, proposal, context())
        visit(p, pending.pop(p).result())
        position = min(int(n_candidates[p]), parts.chunk_rows)
        while position < n_candidates[p]:
            best_old = parts.apply(operator.getitem, states[p], 1)
            proposal, position = parts.submit(_propose, p, best_old, position, context()).result()
            visit(p, proposal)
    return walk


def _compact(parts: _Partitions, labels: list, summary: _Summary, previous: list):
    """:func:`craft._engine.compact_kept` over the partitions: drop empty clusters, renumber in order.

    Returns ``(labels, statistics, n_changed, kept)``, ``kept`` the numbers of the clusters kept.
    """
    stats = summary.stats
    present = stats.counts > 0
    if present.all():
        return labels, stats, summary.n_changed, np.arange(present.size)
    outputs = parts._submit_all(_relabel, labels, previous, parts._constant(present))
    n_changed = int(sum(parts.gather(parts.pick(outputs, 1))))
    stats = _engine.Statistics(*(getattr(stats, field.name)[present] for field in dataclasses.fields(stats)))
    return parts.pick(outputs, 0), stats, n_changed, np.flatnonzero(present)
