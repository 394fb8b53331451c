"""Dask backend: CRAFT on a partitioned table with a ``dask.distributed`` cluster.

:class:`DaskCRAFT` takes the same parameters as :class:`craft.CRAFT` and fits
a ``dask.dataframe.DataFrame`` (partitioned Parquet or CSV, or anything dask
reads) without ever holding the table in one process. It gives the same
result as the in-memory engine for the same data, parameters and seed: the
iterations reuse the engine's own functions (:mod:`craft._engine`) on every
partition, and only the steps that the paper's pass makes in row order run
on the driver.

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
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from . import _engine
from .encoding import EncodedData, Encoder, _level_sort_key
from .estimator import CRAFT, _generator, _number, _positive, _ranking, _replace, _Rule
from .exceptions import CraftInputError
from .priors import PriorTerms

try:
    import dask
    import dask.dataframe as dd
    from dask import delayed
    from distributed import Client, default_client
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "craft.distributed needs dask[dataframe,distributed]; install it with "
        "`pip install 'craft-explorer[dask]'`."
    ) from error

__all__ = ["DaskCRAFT"]

_DASK_RULES = {
    "chunk_rows": _number(1, None, low_open=False, integer=True),
    "persist": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "search_rows": _number(2, None, low_open=False, integer=True),
}

# Partial results are added in groups of this many, in partition order, on the workers.
_FAN_IN = 8


class DaskCRAFT(CRAFT):
    """CRAFT on a ``dask.dataframe.DataFrame`` with a ``dask.distributed`` cluster.

    The same estimator as :class:`craft.CRAFT` (every parameter below that
    ``CRAFT`` has means the same), fitted partition by partition. For the
    same data, parameters and ``random_state`` the fit equals the in-memory
    one: same labels, masks and K, objective equal to rounding (see the
    module documentation for why the last bits can differ).

    Parameters
    ----------
    m, rho, lam, k, budget, eps_c, eps_v, standardize, max_iter, n_init, init, smoothing, min_variance, random_state, callback
        As in :class:`craft.CRAFT`.
    k_method : {"search", "farthest_first"}, default="search"
        ``"farthest_first"`` runs the paper's heuristic on the whole data, one
        map over the partitions per round. ``"search"`` looks for the lambda
        that gives ``k`` clusters on a uniform sample of ``search_rows`` rows
        held by the driver (the in-memory search, with the encoding of the
        whole data), then fits the whole data at that lambda; with at most
        ``search_rows`` rows the sample is the data and the result equals
        the in-memory one.
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
    search_rows : int, default=100000
        Size of the row sample of ``k_method="search"``.

    Attributes
    ----------
    labels_ : dask.dataframe.Series of int64
        Cluster of every row, 0..K-1, indexed by the global row position
        0..N-1 (partition by partition, in order). Its pieces live in the
        cluster's memory: compute or persist it before closing the client.
    partition_sizes_ : ndarray of shape (n_partitions,)
        Rows per partition.
    n_clusters_, feature_mask_, objective_, history_, n_iter_, converged_, lam_, rho_, schema_, engine_features_, cluster_sizes_, n_imputed_, feature_names_in_, n_features_in_
        As in :class:`craft.CRAFT`; ``history_`` records carry no labels.

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
        m=0.5,
        rho=None,
        lam=None,
        k=None,
        k_method="search",
        budget="fixed",
        eps_c=None,
        eps_v=None,
        categorical="auto",
        standardize=True,
        max_iter=100,
        n_init=4,
        init="craft++",
        smoothing=1.0,
        min_variance=0.01,
        random_state=None,
        callback=None,
        chunk_rows=65_536,
        persist=False,
        search_rows=100_000,
    ):
        super().__init__(
            m=m,
            rho=rho,
            lam=lam,
            k=k,
            k_method=k_method,
            budget=budget,
            eps_c=eps_c,
            eps_v=eps_v,
            categorical=categorical,
            standardize=standardize,
            max_iter=max_iter,
            n_init=n_init,
            init=init,
            smoothing=smoothing,
            min_variance=min_variance,
            random_state=random_state,
            callback=callback,
        )
        self.chunk_rows = chunk_rows
        self.persist = persist
        self.search_rows = search_rows

    # ------------------------------------------------------------------
    def fit(self, X, y=None, *, client=None):
        """Cluster the rows of a dask DataFrame.

        Parameters
        ----------
        X : dask.dataframe.DataFrame or pandas.DataFrame
            The table; a pandas DataFrame is split into one partition per
            worker thread.
        y : ignored
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
        options = self._validated_options()
        client = _client(client)
        table = _as_dask_table(X, client)
        self.schema_ = self._schema(_schema_sample(table, client, self.categorical))
        numeric, categorical = list(self.schema_.numeric), list(self.schema_.categorical)
        used = table[numeric + categorical]
        encoder, sizes = _fit_encoder(client, used, numeric, categorical, bool(self.standardize))
        if sizes.sum() < 2:
            raise CraftInputError(f"CRAFT needs at least two rows; the table has n_samples={int(sizes.sum())}.")
        self.encoder_ = encoder
        self.n_imputed_ = dict(encoder.n_imputed_)
        self.feature_names_in_ = np.asarray(table.columns, dtype=object)
        self.n_features_in_ = len(table.columns)
        self.engine_features_ = numeric + categorical
        self.partition_sizes_ = sizes

        parts = _Partitions(client, used, encoder, sizes, chunk_rows=int(self.chunk_rows), persist=bool(self.persist))
        rng = _generator(self.random_state)
        seeds = rng.integers(np.iinfo(np.int32).max, size=self.n_init)
        best = self._fit_runs(parts, options, seeds)
        self._store(best, parts.template, options)
        self.labels_ = parts.label_series(best.labels)
        return self

    def fit_predict(self, X, y=None, *, client=None):
        """Fit and return ``labels_`` (a dask Series)."""
        return self.fit(X, client=client).labels_

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
        columns = [str(c) for c in X.columns]
        missing = [name for name in self.engine_features_ if name not in columns]
        if missing:
            raise CraftInputError(f"X lacks the fitted column(s) {missing[:5]}.")
        if columns != list(X.columns):
            X = X.rename(columns=str)
        meta = pd.Series(np.zeros(0, dtype=np.int64), name="cluster", index=X._meta.index)
        return X.map_partitions(
            _predict_partition, self.encoder_, self.clusters_, self.options_.terms, meta=meta, align_dataframes=False
        )

    # ------------------------------------------------------------------
    def _validated_options(self) -> _engine.Options:
        for name, rule in _DASK_RULES.items():
            value = getattr(self, name)
            if not rule.check(value):
                raise CraftInputError(f"Parameter {name}={value!r} is invalid: it must be {rule.text}.")
        return super()._validated_options()

    def _fit_runs(self, data, options, seeds):
        if isinstance(data, EncodedData):  # pragma: no cover - DaskCRAFT.fit always passes partitions
            return super()._fit_runs(data, options, seeds)
        parts: _Partitions = data
        options = _replace(options, keep_labels=False)
        target = self.k
        if target is not None and target > parts.n_samples:
            raise CraftInputError(f"k={target} exceeds the number of rows, n_samples={parts.n_samples}.")
        if self.lam is not None:
            lam = float(self.lam)
        elif target is None:
            lam = _default_lambda(parts, options)
        elif self.k_method == "farthest_first":
            lam = _farthest_first_lambda(parts, target, options, np.random.default_rng(seeds[0]))
        else:
            sample = parts.sample(int(self.search_rows), np.random.default_rng(seeds[0]))
            lam, _ = self._search_lambda(sample, options, target, seeds[0])
        lam = _positive(lam)
        options = _replace(options, lam=lam)
        best, best_key = None, None
        for restart, seed in enumerate(seeds):
            result = self._run(parts, options, seed, restart)
            key = _ranking(result, target)
            # The first of equal runs is kept, as min() does in CRAFT.
            if best is None or key < best_key:
                best, best_key = result, key
        if target is not None and best.n_clusters != target:
            warnings.warn(
                f"k={target} clusters were not reachable (method {self.k_method!r}); the fit has "
                f"n_clusters_={best.n_clusters} with lam_={lam:.6g}.",
                UserWarning,
                stacklevel=3,
            )
        if not best.converged:
            warnings.warn(
                f"CRAFT did not converge in max_iter={self.max_iter} passes; raise max_iter.", ConvergenceWarning, stacklevel=3
            )
        self.lam_ = lam
        return best

    def _run(self, data, options, seed, restart):
        if isinstance(data, EncodedData):  # the λ search on the driver's sample
            return super()._run(data, options, seed, restart)
        return _run_partitions(data, options, np.random.default_rng(seed), restart=restart, callback=self.callback)

    def _store(self, result, data, options):
        # CRAFT._store wants labels as an array; the Dask labels are set by fit.
        super()._store(dataclasses.replace(result, labels=np.zeros(0, dtype=np.int64)), data, options)


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
        raise CraftInputError("The table has no columns.")
    return X


def _schema_sample(table, client: Client, categorical) -> pd.DataFrame:
    """The rows the schema is read from: the first partition for "auto", else no rows."""
    if isinstance(categorical, str) and categorical == "auto":
        return client.compute(table.partitions[0]).result()
    return table._meta


# ----------------------------------------------------------------------
# The encoder, learnt with two reductions


@dataclasses.dataclass
class _Description:
    """Pass 1 of the encoder, per partition: rows, observed sums, level counts."""

    n_rows: np.ndarray  # (n_partitions,) rows of each partition covered
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
        counts = counts[counts > 0]  # category dtype lists unused categories too
        levels.append(dict(zip(counts.index.tolist(), counts.to_numpy(dtype=np.int64).tolist())))
        n_missing.append(int(column.isna().sum()))
    return _Description(
        n_rows=np.array([len(table)], dtype=np.int64),
        observed=(~missing).sum(axis=0),
        totals=np.where(missing, 0.0, raw).sum(axis=0),
        levels=levels,
        n_missing=np.array(n_missing, dtype=np.int64),
    )


def _combine_descriptions(*parts: _Description) -> _Description:
    levels = [dict() for _ in parts[0].levels]
    for part in parts:
        for merged, counts in zip(levels, part.levels):
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


def _fit_encoder(client: Client, table, numeric: list, categorical: list, standardize: bool) -> tuple[Encoder, np.ndarray]:
    """An :class:`Encoder` with the attributes ``fit_transform`` would learn on the whole table."""
    raws = table.to_delayed()
    description = _tree_reduce(
        client, [delayed(_describe, pure=False)(raw, numeric, categorical) for raw in raws], _combine_descriptions
    )
    sizes = description.n_rows
    n_rows = int(sizes.sum())
    encoder = Encoder(numeric, categorical, standardize)
    observed = description.observed
    encoder.n_imputed_ = {name: int(n_rows - n) for name, n in zip(numeric, observed) if n_rows - n}
    encoder.impute_ = np.divide(description.totals, observed, out=np.zeros(len(numeric)), where=observed > 0)
    moments = _tree_reduce(
        client, [delayed(_moments, pure=False)(raw, numeric, categorical, encoder.impute_) for raw in raws], _combine_moments
    )
    variance = moments.m2 / max(n_rows, 1)
    if standardize:
        encoder.center_ = moments.total / max(n_rows, 1)
        spread = np.sqrt(variance)
        encoder.scale_ = np.where(spread > 0, spread, 1.0)
    else:
        encoder.center_ = np.zeros(len(numeric))
        encoder.scale_ = np.ones(len(numeric))
    # The variance of the encoded columns: (filled - centre) / scale.
    encoder.fitted_var_ = variance / (encoder.scale_ * encoder.scale_)
    encoder.levels_ = [sorted(counts, key=_level_sort_key) for counts in description.levels]
    encoder.has_missing_level_ = [bool(n) for n in description.n_missing]
    eta_counts = []
    for levels, counts, n_missing in zip(encoder.levels_, description.levels, description.n_missing):
        eta_counts.extend(counts[level] for level in levels)
        if n_missing:
            eta_counts.append(int(n_missing))
    encoder.fitted_eta0_ = np.array(eta_counts, dtype=np.int64) / max(n_rows, 1)
    return encoder, sizes


def _encode(table: pd.DataFrame, encoder: Encoder) -> EncodedData:
    return encoder.transform(table)


def _predict_partition(table: pd.DataFrame, encoder: Encoder, clusters: _engine.Clusters, terms: PriorTerms) -> pd.Series:
    table = table.rename(columns=str)
    _, labels = _engine.nearest_cluster(encoder.transform(table), clusters, terms)
    return pd.Series(labels.astype(np.int64), index=table.index, name="cluster")


# ----------------------------------------------------------------------
# The partitions of one fit


class _Partitions:
    """The encoded partitions of one fit, in global row order, and the ways to map over them.

    ``parts[p]`` is a Delayed that yields partition ``p`` encoded (read and
    encoded again by each map unless ``persist``). Per-partition state
    (labels, distances) lives in worker memory as futures; the driver holds
    only what each method returns.
    """

    def __init__(self, client: Client, table, encoder: Encoder, sizes: np.ndarray, *, chunk_rows: int, persist: bool):
        self.client = client
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.n_samples = int(self.sizes.sum())
        self.n_partitions = self.sizes.size
        self.chunk_rows = chunk_rows
        self.lookahead = max(1, sum(client.nthreads().values()))
        self._encoder = client.scatter(encoder, broadcast=True, hash=False)
        parts = [delayed(_encode, pure=False)(raw, self._encoder) for raw in table.to_delayed()]
        self.parts = client.persist(parts) if persist else parts
        empty = {name: pd.Series([], dtype=np.float64) for name in encoder.numeric}
        empty.update({name: pd.Series([], dtype=object) for name in encoder.categorical})
        # No rows, but the global tables (eta_0, variances, level offsets) the driver's updates read.
        self.template = encoder.transform(pd.DataFrame(empty))

    @property
    def n_features(self) -> int:
        return self.template.n_features

    def map(self, function, *per_partition, context=None, nout=1) -> list:
        """``function(data_p, *(arg[p] for arg in per_partition), context)`` on every partition.

        Returns one future (or a tuple of ``nout`` futures) per partition.
        ``context`` is scattered once and shared by all tasks.
        """
        shared = self.client.scatter(context, hash=False) if context is not None else None
        tasks = []
        for p in range(self.n_partitions):
            args = [arg[p] for arg in per_partition]
            call = delayed(function, pure=False, nout=nout if nout > 1 else None)
            tasks.append(call(self.parts[p], *args, shared))
        return self._compute(tasks, nout)

    def apply(self, function, *per_partition, nout=1) -> list:
        """``function(*(arg[p] for arg in per_partition))`` for every partition (no data read)."""
        call = delayed(function, pure=False, nout=nout if nout > 1 else None)
        tasks = [call(*[arg[p] for arg in per_partition]) for p in range(self.n_partitions)]
        return self._compute(tasks, nout)

    def submit(self, function, p: int, *args, nout=1):
        """``function(data_p, *args)`` for one partition; a future (or tuple of futures)."""
        call = delayed(function, pure=False, nout=nout if nout > 1 else None)
        return self._compute([call(self.parts[p], *args)], nout)[0]

    def _compute(self, tasks: list, nout: int) -> list:
        if nout == 1:
            return self.client.compute(tasks)
        flat = self.client.compute([task[i] for task in tasks for i in range(nout)])
        return [tuple(flat[p * nout : (p + 1) * nout]) for p in range(len(tasks))]

    def reduce(self, futures: list, combine):
        return _tree_reduce(self.client, futures, combine)

    def gather(self, futures):
        return self.client.gather(futures)

    def locate(self, row: int) -> tuple[int, int]:
        """Partition and local index of global ``row``."""
        p = int(np.searchsorted(self.starts, row, side="right") - 1)
        while self.sizes[p] == 0:  # empty partitions share their start with the next one
            p += 1
        return p, int(row - self.starts[p])

    def local_rows(self, row: int) -> list[int]:
        """Per partition, the local index of global ``row`` there, or -1."""
        p, local = self.locate(row)
        rows = [-1] * self.n_partitions
        rows[p] = local
        return rows

    def rows(self, rows: np.ndarray) -> EncodedData:
        """The encoded rows (global indices, increasing) gathered on the driver."""
        rows = np.asarray(rows, dtype=np.int64)
        owner = np.searchsorted(self.starts + self.sizes, rows, side="right")
        futures = []
        for p in np.unique(owner):
            local = rows[owner == p] - self.starts[p]
            futures.append(self.submit(_take, int(p), local))
        return _concat(self.template, self.gather(futures))

    def sample(self, n_rows: int, rng: np.random.Generator) -> EncodedData:
        """All rows if there are at most ``n_rows``, else a uniform sample of ``n_rows`` (in row order)."""
        if self.n_samples <= n_rows:
            return self.rows(np.arange(self.n_samples))
        return self.rows(np.sort(rng.choice(self.n_samples, size=n_rows, replace=False)))

    def label_series(self, labels: list):
        """The labels futures as a dask Series indexed by global row position."""
        pieces = [delayed(_label_piece, pure=False)(future, int(start)) for future, start in zip(labels, self.starts)]
        meta = pd.Series(np.zeros(0, dtype=np.int64), name="cluster")
        divisions = None
        if (self.sizes > 0).all():
            divisions = tuple(int(s) for s in self.starts) + (self.n_samples - 1,)
        return dd.from_delayed(pieces, meta=meta, divisions=divisions, verify_meta=False)


def _tree_reduce(client: Client, items: list, combine):
    """``combine`` over ``items`` (futures or Delayed) in order, in groups of ``_FAN_IN``, on the workers."""
    level = list(items)
    while len(level) > 1:
        level = [delayed(combine, pure=False)(*level[i : i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
    (root,) = level
    return client.compute(root).result() if hasattr(root, "dask") else root.result()


def _take(data: EncodedData, rows: np.ndarray) -> EncodedData:
    return data.take(rows)


def _concat(template: EncodedData, pieces: list) -> EncodedData:
    if not pieces:
        return template
    return dataclasses.replace(
        template,
        numeric=np.vstack([piece.numeric for piece in pieces]),
        numeric_sq=np.vstack([piece.numeric_sq for piece in pieces]),
        codes=np.vstack([piece.codes for piece in pieces]),
    )


def _label_piece(labels: np.ndarray, start: int) -> pd.Series:
    return pd.Series(labels.astype(np.int64), index=pd.RangeIndex(start, start + labels.size), name="cluster")


# ----------------------------------------------------------------------
# Per-partition steps (run on the workers)


@dataclasses.dataclass
class _Summary:
    """Sufficient statistics of a labelling and how many labels changed; added across partitions."""

    stats: _engine.Statistics
    n_changed: int


def _summary(data: EncodedData, labels: np.ndarray, n_clusters: int, previous) -> _Summary:
    stats = _engine.statistics(data, labels, n_clusters)
    before = 0 if previous is None else previous
    return _Summary(stats, int(np.count_nonzero(labels != before)))


def _combine_summaries(*parts: _Summary) -> _Summary:
    first = parts[0].stats
    return _Summary(
        _engine.Statistics(
            functools.reduce(np.add, [part.stats.counts for part in parts[1:]], first.counts.copy()),
            functools.reduce(np.add, [part.stats.sums for part in parts[1:]], first.sums.copy()),
            functools.reduce(np.add, [part.stats.sums_sq for part in parts[1:]], first.sums_sq.copy()),
            functools.reduce(np.add, [part.stats.level_counts for part in parts[1:]], first.level_counts.copy()),
        ),
        sum(part.n_changed for part in parts),
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
    terms: PriorTerms
    threshold: float
    chunk_rows: int


def _pass_partition(data: EncodedData, previous, ctx: _PassContext):
    """First map of a pass: nearest old cluster, candidates, speculative statistics, first proposals."""
    best_old, labels = _engine.nearest_cluster(data, ctx.clusters, ctx.terms)
    candidates = np.flatnonzero(best_old > ctx.threshold)
    # These statistics are the pass's if no partition has a candidate.
    summary = _summary(data, labels, ctx.clusters.n_clusters, previous)
    keep = candidates[: ctx.chunk_rows]
    proposal = _Proposal(keep, data.take(keep), best_old[keep])
    return summary, int(candidates.size), best_old, labels.astype(np.int32), proposal


@dataclasses.dataclass
class _WalkContext:
    opened: _engine.Clusters
    terms: PriorTerms
    threshold: float
    chunk_rows: int


def _screen(proposal: _Proposal, ctx: _WalkContext) -> _Proposal:
    """The proposals still beyond the threshold once the clusters opened so far are counted."""
    best = np.minimum(proposal.best_old, _engine.nearest_cluster(proposal.data, ctx.opened, ctx.terms)[0])
    keep = np.flatnonzero(best > ctx.threshold)
    return _Proposal(proposal.rows[keep], proposal.data.take(keep), proposal.best_old[keep])


def _propose(data: EncodedData, best_old: np.ndarray, position: int, ctx: _WalkContext):
    """Up to ``chunk_rows`` candidates from the ``position``-th on, screened against ``ctx.opened``.

    Returns the proposal and the position of the first candidate not yet examined.
    """
    candidates = np.flatnonzero(best_old > ctx.threshold)
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


def _assign_partition(data: EncodedData, labels, best_old, previous, row_offset, ctx: _AssignContext):
    """Second map of a pass that opened clusters: final labels (old and new clusters) and statistics."""
    labels, _ = ctx.walk.assign(data, labels.astype(np.int64), best_old, ctx.clusters, row_offset=int(row_offset))
    return _summary(data, labels, ctx.n_clusters, previous), labels.astype(np.int32)


def _relabel(labels: np.ndarray, previous, mapping: np.ndarray):
    new = mapping[labels].astype(np.int32)
    before = 0 if previous is None else previous
    return new, int(np.count_nonzero(new != before))


@dataclasses.dataclass
class _NearestContext:
    clusters: _engine.Clusters
    terms: PriorTerms


def _final_partition(data: EncodedData, previous, ctx: _NearestContext):
    """Assignment to the nearest cluster, without opening (the end of an unconverged run)."""
    _, labels = _engine.nearest_cluster(data, ctx.clusters, ctx.terms)
    return _summary(data, labels, ctx.clusters.n_clusters, previous), labels.astype(np.int32)


def _labelling_summary(data: EncodedData, ctx) -> _Summary:
    """Statistics of the one-cluster labelling (default lambda)."""
    return _summary(data, np.zeros(data.n_samples, dtype=np.int64), 1, None)


def _cost_sum(data: EncodedData, ctx: _NearestContext) -> float:
    return float(_engine.nearest_cluster(data, ctx.clusters, ctx.terms)[0].sum())


# Seeding and farthest-first: a per-row "best distance so far" lives on the workers.


@dataclasses.dataclass
class _SeedContext:
    """A new seed cluster, built on every worker from the seed row's data and the driver's v."""

    row_data: object  # EncodedData of one row, or a future of it
    weights: np.ndarray
    smoothing: float
    terms: PriorTerms
    threshold: float


def _beyond_total(best: np.ndarray, threshold: float) -> tuple[int, float]:
    beyond = np.flatnonzero(best > threshold)
    if beyond.size == 0:
        return 0, 0.0
    return int(beyond.size), float(np.cumsum(best[beyond])[-1])


def _seed_update(data: EncodedData, best, local_row: int, seed_data: EncodedData, ctx: _SeedContext):
    """``best = min(best, d(x, seed))``, the seed's own row excluded; then the rows beyond and their total."""
    seed = _engine.new_clusters(seed_data, np.array([0]), ctx.weights, ctx.smoothing)
    distance = _engine.nearest_cluster(data, seed, ctx.terms)[0]
    best = distance if best is None else np.minimum(best, distance)
    if local_row >= 0:
        best[local_row] = -np.inf
    return best, _beyond_total(best, ctx.threshold)


def _seed_resolve(data: EncodedData, best: np.ndarray, start: float, target: float, threshold: float):
    """The row that ``sample_proportional`` picks here, with the cumulative sum carried in ``start``."""
    beyond = np.flatnonzero(best > threshold)
    cumulative = start + np.cumsum(best[beyond])
    index = min(int(np.searchsorted(cumulative, target, side="right")), beyond.size - 1)
    row = int(beyond[index])
    return row, data.take(np.array([row]))


def _farthest_update(data: EncodedData, best, local_row: int, seed_data: EncodedData, ctx: _SeedContext):
    """Farthest-first: ``best = min(best, d(x, expected cluster))``; then this partition's farthest row."""
    best, _ = _seed_update(data, best, local_row, seed_data, ctx)
    if best.size == 0:
        return best, (-np.inf, -1, None)
    i = int(np.argmax(best))
    return best, (float(best[i]), i, data.take(np.array([i])))


# ----------------------------------------------------------------------
# Driver side: the engine's run, one map at a time


def _initial_clusters(parts: _Partitions, opts: _engine.Options, rng: np.random.Generator) -> _engine.Clusters:
    """:func:`craft._engine.initial_clusters` over the partitions, same random draws."""
    first = int(rng.integers(parts.n_samples))
    v = (rng.random(parts.n_features) < opts.terms.m).astype(np.float64)
    clusters = _engine.new_clusters(parts.rows([first]), np.array([0]), v, opts.smoothing)
    if opts.init == "random":
        return clusters
    threshold = opts.threshold(parts.n_features)
    seed_data = parts.rows([first])
    outputs = parts.map(
        _seed_update,
        [None] * parts.n_partitions,
        parts.local_rows(first),
        [seed_data] * parts.n_partitions,
        context=_SeedContext(None, v, opts.smoothing, opts.terms, threshold),
        nout=2,
    )
    while True:
        best = [output[0] for output in outputs]
        totals = parts.gather([output[1] for output in outputs])
        n_beyond = np.array([count for count, _ in totals])
        if n_beyond.sum() == 0:
            return clusters
        uniform = rng.random()
        # The engine's cumulative sum, carried from partition to partition.
        starts, carry = [], 0.0
        for count, total in totals:
            starts.append(carry)
            if count:
                carry = carry + total
        target = uniform * carry
        owner = next((p for p, (count, total) in enumerate(totals) if count and starts[p] + total > target), None)
        if owner is None:  # at the end of the cumulative sum: the last row beyond
            owner = int(np.flatnonzero(n_beyond)[-1])
        resolved = parts.submit(_seed_resolve, owner, best[owner], starts[owner], target, threshold, nout=2)
        probability = opts.terms.selection_probability(clusters.weights.mean(axis=0))
        v = (rng.random(parts.n_features) < probability).astype(np.float64)
        local_row, seed_data = resolved
        local_rows = [local_row if p == owner else -1 for p in range(parts.n_partitions)]
        outputs = parts.map(
            _seed_update,
            best,
            local_rows,
            [seed_data] * parts.n_partitions,
            context=_SeedContext(None, v, opts.smoothing, opts.terms, threshold),
            nout=2,
        )
        seed = _engine.new_clusters(seed_data.result(), np.array([0]), v, opts.smoothing)
        clusters = clusters.stack(seed)
        _engine._check_cluster_budget(clusters.n_clusters, opts)


def _farthest_first_lambda(parts: _Partitions, k: int, opts: _engine.Options, rng: np.random.Generator) -> float:
    """:func:`craft._engine.farthest_first_lambda`, one map over the partitions per round."""
    start = int(rng.integers(parts.n_samples))
    weights = np.full(parts.n_features, opts.terms.m)
    context = _SeedContext(None, weights, opts.smoothing, opts.terms, np.inf)
    seed_data = parts.rows([start])
    outputs = parts.map(
        _farthest_update,
        [None] * parts.n_partitions,
        parts.local_rows(start),
        [seed_data] * parts.n_partitions,
        context=context,
        nout=2,
    )
    lam = 0.0
    for _ in range(k):
        best = [output[0] for output in outputs]
        farthest = parts.gather([output[1] for output in outputs])
        values = np.array([value for value, _, _ in farthest])
        owner = int(np.argmax(values))  # the first partition holding the global maximum, as np.argmax
        lam = float(values[owner])
        if not np.isfinite(lam) or lam <= 0:
            break
        _, local_row, seed_data = farthest[owner]
        local_rows = [local_row if p == owner else -1 for p in range(parts.n_partitions)]
        outputs = parts.map(
            _farthest_update, best, local_rows, [seed_data] * parts.n_partitions, context=context, nout=2
        )
    return lam


def _default_lambda(parts: _Partitions, opts: _engine.Options) -> float:
    """:func:`craft._engine.default_lambda`: the mean cost of a point under one global cluster."""
    summary = parts.reduce(parts.map(_labelling_summary), _combine_summaries)
    clusters = _engine.clusters_from_statistics(parts.template, summary.stats, opts)
    sums = parts.gather(parts.map(_cost_sum, context=_NearestContext(clusters, opts.terms)))
    return float(np.sum(sums) / parts.n_samples)


def _assignment_pass(parts: _Partitions, clusters: _engine.Clusters, opts: _engine.Options, rng, previous):
    """:func:`craft._engine.assignment_pass` over the partitions.

    Returns the labels (futures), their summary and the clusters (old, then opened).
    """
    threshold = opts.threshold(parts.n_features)
    outputs = parts.map(
        _pass_partition, previous, context=_PassContext(clusters, opts.terms, threshold, parts.chunk_rows), nout=5
    )
    summaries, counts, best_old, labels, proposals = (list(column) for column in zip(*outputs))
    summary_future = parts.client.compute(_tree_delayed(summaries, _combine_summaries))
    n_candidates, summary = parts.gather([counts, summary_future])
    if sum(n_candidates) == 0:
        return labels, summary, clusters
    del summary, summary_future
    walk = _walk(parts, clusters, opts, rng, n_candidates, best_old, proposals)
    del proposals
    light = copy.copy(walk)
    light.rng = None  # the workers only assign; the driver's stream stays here
    n_total = clusters.n_clusters + len(walk.rows)
    outputs = parts.map(
        _assign_partition,
        labels,
        best_old,
        previous,
        list(parts.starts),
        context=_AssignContext(light, clusters, n_total),
        nout=2,
    )
    summaries, labels = (list(column) for column in zip(*outputs))
    summary = parts.reduce(summaries, _combine_summaries)
    return labels, summary, clusters.stack(walk.opened)


def _tree_delayed(items: list, combine):
    level = list(items)
    while len(level) > 1:
        level = [delayed(combine, pure=False)(*level[i : i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
    (root,) = level
    return root if hasattr(root, "dask") else delayed(lambda value: value, pure=False)(root)


def _walk(parts: _Partitions, clusters, opts, rng, n_candidates, best_old, proposals) -> _engine.OpeningWalk:
    """The ordered walk: proposals are screened on the workers, validated here in global row order.

    The first proposals of the next ``lookahead`` partitions are screened
    while the driver validates the current one, against the clusters opened
    when they were requested (OCC: a stale screen only lets more rows
    through; the walk checks every row against all clusters opened so far).
    """
    walk = _engine.OpeningWalk(clusters, opts, rng)
    threshold = opts.threshold(parts.n_features)
    todo = [p for p in range(parts.n_partitions) if n_candidates[p] > 0]
    pending: dict[int, object] = {}
    context = {"n_opened": -1, "future": None}

    def walk_context():
        n_opened = 0 if walk.opened is None else walk.opened.n_clusters
        if context["n_opened"] != n_opened:
            context["future"] = parts.client.scatter(
                _WalkContext(walk.opened, opts.terms, threshold, parts.chunk_rows), hash=False
            )
            context["n_opened"] = n_opened
        return context["future"]

    def first_request(p):
        if walk.opened is None:
            return proposals[p]
        return parts.client.compute(delayed(_screen, pure=False)(proposals[p], walk_context()))

    def visit(p, proposal: _Proposal):
        if proposal.rows.size:
            walk.visit(proposal.data, parts.starts[p] + proposal.rows, proposal.best_old)

    for index, p in enumerate(todo):
        for q in todo[index : index + 1 + parts.lookahead]:
            if q not in pending:
                pending[q] = first_request(q)
        visit(p, pending.pop(p).result())
        position = min(n_candidates[p], parts.chunk_rows)
        while position < n_candidates[p]:
            proposal, position = parts.submit(_propose, p, best_old[p], position, walk_context(), nout=2)
            position = position.result()
            visit(p, proposal.result())
    return walk


def _compact(parts: _Partitions, labels: list, summary: _Summary, previous: list):
    """:func:`craft._engine.compact` over the partitions: drop empty clusters, renumber in order."""
    stats = summary.stats
    present = stats.counts > 0
    if present.all():
        return labels, stats, summary.n_changed
    mapping = np.cumsum(present) - 1
    outputs = parts.apply(_relabel, labels, previous, [mapping] * parts.n_partitions, nout=2)
    labels = [output[0] for output in outputs]
    n_changed = int(sum(parts.gather([output[1] for output in outputs])))
    stats = _engine.Statistics(stats.counts[present], stats.sums[present], stats.sums_sq[present], stats.level_counts[present])
    return labels, stats, n_changed


def _run_partitions(parts: _Partitions, opts: _engine.Options, rng, *, restart: int = 0, callback=None) -> _engine.RunResult:
    """:func:`craft._engine.run` over the partitions; ``labels`` is a list of futures, one per partition."""
    template = parts.template
    clusters = _initial_clusters(parts, opts, rng)
    labels = [None] * parts.n_partitions  # the engine starts from all zeros
    history: list[_engine.IterationRecord] = []
    converged = False
    stats = None
    for iteration in range(1, opts.max_iter + 1):
        n_before = clusters.n_clusters
        proposed, summary, clusters = _assignment_pass(parts, clusters, opts, rng, labels)
        n_opened = clusters.n_clusters - n_before
        labels, stats, n_changed = _compact(parts, proposed, summary, labels)
        n_clusters = stats.counts.shape[0]
        clusters = _engine.clusters_from_statistics(template, stats, opts)
        value, _ = _engine.objective(template, clusters, stats, opts)
        record = _engine.IterationRecord(
            iteration=iteration,
            objective=value,
            n_clusters=n_clusters,
            n_changed=n_changed,
            n_opened=n_opened,
            feature_mask=clusters.weights > 0.5,
            labels=None,
            restart=restart,
            lam=opts.lam,
        )
        history.append(record)
        if callback is not None:
            callback(record)
        if n_changed == 0:
            converged = True
            break
    if not converged:
        # A last assignment without opening keeps labels_ equal to predict(X).
        outputs = parts.map(_final_partition, labels, context=_NearestContext(clusters, opts.terms), nout=2)
        summary = parts.reduce([output[0] for output in outputs], _combine_summaries)
        final = [output[1] for output in outputs]
        final, final_stats, n_changed = _compact(parts, final, summary, labels)
        if final_stats.counts.shape[0] != clusters.n_clusters or n_changed:
            labels, stats = final, final_stats
            clusters = _engine.clusters_from_statistics(template, stats, opts)
    value, nll = _engine.objective(template, clusters, stats, opts)
    return _engine.RunResult(labels, clusters, stats, value, nll, len(history), converged, history)
