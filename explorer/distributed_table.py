"""A table on a Dask cluster, explored like any table: ``craft app DATA --local-workers N`` / ``--scheduler ADDRESS``.

The command line checks and opens DATA with the library's reader
(:func:`craft.dask_io.read_partitioned`, the reader of ``craft fit
--backend dask``), starts or reaches the cluster, and hands the app the
source and the scheduler's address in :data:`ENV`. Here, once per server
process, :func:`open_table` connects a client, counts the rows of every
part and draws a uniform sample of :data:`SAMPLE_ROWS` rows.

What each view is computed from:

* **Every row, on the cluster** (:class:`craft.distributed.DaskCRAFT`, the
  same ``_fit_runs`` as in memory): the fit itself, the cluster sizes
  (``cluster_sizes_``), the masks, the profiles and the cards' v-tests and
  level shares (all read from ``statistics_``, sums over every row), the
  objective and λ, and the metrics against a label column
  (:func:`full_metrics`: a contingency table summed over the parts,
  :func:`craft.metrics.evaluate_counts`).
* **A uniform sample** (:data:`SAMPLE_ROWS` rows drawn without replacement
  with a fixed seed): every view that needs rows: the data heatmap, the
  projection, paragons and border rows, the rule, stability and the null.
  The app's ``labels_`` of the shown model are the fitted labels of the
  sample's rows (gathered from the cluster by their row positions, not
  predicted again), so these views show the fit's own labels.

Warm starts: Tune & see's provisional answers (a warm refit in memory) are
not drawn for a cluster table, since they would be fits of the sample shown
as the table's; every value is fitted on the cluster and then cached by the
same keys as in memory, so a slider's revisit is immediate.
"""

from __future__ import annotations

import copy
import weakref
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from craft import CraftInputError, dask_io, infer_schema, metrics
from craft.schema import Schema

from .services.fitting import FitOutcome
from .services.loading import LoadedData
from .services.params import FitParams
from .services.roles import fitted_table
from .state import CLUSTER_TABLE

#: The environment variable through which ``craft app`` hands the app a cluster table (JSON: ``source``,
#: ``scheduler``, ``partition_size``, ``connect_timeout``).
ENV = "CRAFT_APP_DASK"
#: The dataset picker's option for the cluster table (also the start data ``craft app`` names).
SOURCE = CLUSTER_TABLE
#: Rows of the uniform sample the row-level views use: bounded, so the app's own memory is bounded by the
#: sample, not by the table (20,000 rows × 40 columns: about 10 MB as numbers).
SAMPLE_ROWS = 20_000
#: The sample's seed: the same table gives the same sample in every session and every run.
SAMPLE_SEED = 0
#: Most share of the workers' memory limits that the encoded table may take to be kept there during a fit.
PERSIST_SHARE = 0.5
#: The kind of :class:`~explorer.services.loading.LoadedData` of a cluster table.
KIND = "distributed"

#: What each kind of view is computed from, said on every page of a cluster table.
EXACT_VIEWS = ("cluster sizes", "masks", "profiles", "the cards' v-tests and level shares", "the objective and λ",
               "metrics against a label column")
SAMPLE_VIEWS = ("the data heatmap", "the projection", "paragons and border rows", "the rule", "stability",
                "the null", "Compare's methods, What-if's refits and Teach's steps")


@dataclass
class Spec:
    """What ``craft app`` hands the app (:data:`ENV`)."""

    source: str
    scheduler: str
    partition_size: str = "64MB"
    connect_timeout: float = 20.0
    local_workers: int | None = None

    def to_env(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_env(cls, text: str) -> "Spec":
        return cls(**json.loads(text))


@dataclass
class ClusterTable:
    """A table opened on a cluster: the lazy frame, where it runs, its parts and the uniform sample.

    Attributes
    ----------
    spec : Spec
    client : distributed.Client
    table : dask.dataframe.DataFrame
        Every column, read lazily by the workers.
    part_rows : ndarray of int64
        Rows of every part, in order.
    sample_rows : ndarray of int64
        Global row positions (0..N-1, part by part) of the sample, ascending.
    sample : DataFrame
        Those rows, every column (its index: their row positions).
    schema : Schema
        Roles inferred from the first part with 2 rows or more, as ``craft fit --backend dask`` and
        ``DaskCRAFT(categorical="auto")`` infer them.
    workers : list of dict
        ``address``, ``threads`` and ``memory_limit`` (bytes) of every worker when the table was opened.
    key : str
        Names the table for the caches: the source, its files' sizes and times, and the sample.
    """

    spec: Spec
    client: Any
    table: Any
    part_rows: np.ndarray
    sample_rows: np.ndarray
    sample: pd.DataFrame
    schema: Schema
    workers: list = field(default_factory=list)
    key: str = ""

    @property
    def n_rows(self) -> int:
        return int(self.part_rows.sum())

    def where(self) -> str:
        """One sentence: the scheduler, the workers and their memory, the rows and parts."""
        memory = sum(int(w["memory_limit"] or 0) for w in self.workers)
        threads = sum(int(w["threads"]) for w in self.workers)
        local = f" (a local cluster of {self.spec.local_workers} worker processes)" if self.spec.local_workers else ""
        return (f"Runs on the Dask scheduler {self.spec.scheduler}{local}: {len(self.workers)} worker(s), {threads} "
                f"thread(s), {memory / 2**30:,.1f} GiB of worker memory in all. The table: {self.n_rows:,} rows in "
                f"{self.part_rows.size:,} part(s), {len(self.sample.columns):,} columns, read from "
                f"{self.spec.source!r}.")

    def computed_from(self) -> str:
        """What every view of this table is computed from (said on every page)."""
        return (f"From every row ({self.n_rows:,}, on the cluster): {', '.join(EXACT_VIEWS)}. From a uniform sample "
                f"of {len(self.sample):,} rows: {', '.join(SAMPLE_VIEWS)}, and any count of rows a view shows. No "
                f"provisional warm refit is drawn while a value is fitted (it would be a fit of the sample): each "
                f"value is fitted on every row once, then cached.")


_LOCK = threading.Lock()
_OPEN: dict[str, ClusterTable] = {}


def spec_from_env() -> Spec | None:
    """The cluster table ``craft app`` asked for, or None."""
    text = os.environ.get(ENV)
    return Spec.from_env(text) if text else None


def connect(scheduler: str, timeout: float = 20.0):
    """A client of the scheduler at ``scheduler``; an unreachable one is a :class:`CraftInputError`."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise CraftInputError(f"cannot reach the Dask scheduler at {scheduler!r}: {error}") from None


def open_table(spec: Spec, client=None) -> ClusterTable:
    """The table of ``spec``, opened once per process (later calls return the same one).

    Parameters
    ----------
    spec : Spec
    client : distributed.Client, optional
        The cluster to use; by default one connected to ``spec.scheduler``.

    Raises
    ------
    CraftInputError
        An unreachable scheduler, or DATA refused by :func:`craft.dask_io.read_partitioned`, or a part that
        cannot be read (:func:`craft.dask_io.damaged_parquet` names it).
    """
    name = json.dumps([spec.source, spec.scheduler])
    with _LOCK:
        found = _OPEN.get(name)
        if found is not None:
            return found
        table = dask_io.read_partitioned(spec.source, partition_size=spec.partition_size)
        if any(not isinstance(c, str) for c in table.columns):
            table = table.rename(columns=str)
        client = client if client is not None else connect(spec.scheduler, spec.connect_timeout)
        try:
            opened = _open(spec, client, table)
        except (CraftInputError, ImportError):
            raise
        except Exception as error:  # noqa: BLE001 - a part a worker cannot read, a lost worker
            raise _failure(spec, error, "opening the table") from None
        _OPEN[name] = opened
        return opened


def _open(spec: Spec, client, table) -> ClusterTable:
    import dask

    # Rows per part of the whole frame: a frame of fewer columns may have fewer, fused parts (Dask fuses the
    # parts of a Parquet read that keeps a small share of the columns), so positions are always counted on the
    # frame they index.
    parts = table.to_delayed()
    part_rows = np.asarray(client.compute([dask.delayed(len)(part) for part in parts], sync=True), dtype=np.int64)
    n_rows = int(part_rows.sum())
    if n_rows < 2:
        raise CraftInputError(f"{spec.source!r} has {n_rows} row(s); clustering needs at least 2 rows (items).")
    rng = np.random.default_rng(SAMPLE_SEED)
    size = min(SAMPLE_ROWS, n_rows)
    rows = np.sort(rng.choice(n_rows, size=size, replace=False)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(part_rows)[:-1]])
    owner = np.searchsorted(starts, rows, side="right") - 1
    pieces = [dask.delayed(_take)(part, rows[owner == p] - starts[p])
              for p, part in enumerate(parts) if np.any(owner == p)]
    sample = pd.concat(client.compute(pieces, sync=True), ignore_index=True) if pieces else table._meta
    sample.index = pd.RangeIndex(len(sample))
    first = next((p for p, n in enumerate(part_rows) if n >= 2), 0)
    schema = infer_schema(client.compute(table.partitions[first]).result())
    info = client.scheduler_info().get("workers", {})
    workers = [{"address": address, "threads": w.get("nthreads", 0), "memory_limit": w.get("memory_limit", 0)}
               for address, w in sorted(info.items())]
    return ClusterTable(spec, client, table, part_rows, rows, sample, schema, workers, _table_key(spec, part_rows))


def _take(part: pd.DataFrame, positions: np.ndarray) -> pd.DataFrame:
    return part.iloc[positions]


def _table_key(spec: Spec, part_rows: np.ndarray) -> str:
    """The source's files (names, sizes, modification times) and parts: a changed file is another table."""
    files = dask_io.parquet_files(spec.source) if "://" not in spec.source else []
    stamp = [(str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.exists()]
    text = repr((spec.source, stamp, part_rows.tolist(), SAMPLE_ROWS, SAMPLE_SEED))
    return "dask:" + hashlib.sha256(text.encode()).hexdigest()[:20]


def loaded_data(opened: ClusterTable) -> LoadedData:
    """The app's view of a cluster table: the sample as its table, the roles inferred as ``DaskCRAFT`` does."""
    name = Path(opened.spec.source.rstrip("/")).name or opened.spec.source
    return LoadedData(
        key=opened.key, name=name, kind=KIND, table=opened.sample, schema=opened.schema, label=None,
        description=f"A table on a Dask cluster: {opened.n_rows:,} rows in {opened.part_rows.size:,} part(s); the app "
                    f"holds a uniform sample of {len(opened.sample):,} rows.",
        label_reason="no label column is guessed for a cluster table: pick one below.",
    )


def session_data() -> LoadedData:
    """The cluster table ``craft app`` named, for a session (opened once per process)."""
    spec = spec_from_env()
    if spec is None:
        raise CraftInputError("No table on a Dask cluster: start the app with `craft app DATA --local-workers N` or "
                              "`--scheduler ADDRESS`, or pick another dataset.")
    return loaded_data(open_table(spec))


def table_of_frame(table) -> ClusterTable | None:
    """The opened cluster table whose sample is ``table`` (the same object), or None."""
    return next((t for t in list(_OPEN.values()) if t.sample is table), None)


def table_of(data: LoadedData) -> ClusterTable | None:
    """The opened cluster table behind ``data``, or None for any other table."""
    if data.kind != KIND:
        return None
    return next((t for t in _OPEN.values() if t.key == data.key), None)


def _failure(spec: Spec, error: BaseException, doing: str) -> CraftInputError:
    """A failure on the cluster in one sentence: a damaged part named, a lost worker or scheduler said."""
    named = dask_io.damaged_parquet(spec.source)
    if named is not None:
        return named
    kind = type(error).__name__
    try:
        detail = " ".join(str(error).split())[:200]
    except Exception:  # noqa: BLE001 - an exception whose text cannot be formed still has a name
        detail = "no details"
    if kind in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError", "StreamClosedError") \
            or isinstance(error, (OSError, TimeoutError)):
        return CraftInputError(f"the cluster failed while {doing}: a worker or the scheduler at {spec.scheduler} was "
                               f"lost ({kind}: {detail}). Check the cluster and try again; the page keeps working.")
    return CraftInputError(f"the cluster failed while {doing} ({kind}: {detail}).")


def fit(opened: ClusterTable, schema: Schema, params: FitParams, callback=None) -> FitOutcome:
    """Fit :class:`~craft.distributed.DaskCRAFT` on every row; the shown model carries the sample's labels.

    Returns a :class:`~explorer.services.fitting.FitOutcome` whose model is a copy of the fitted ``DaskCRAFT`` with
    ``labels_`` the fitted labels of the sample's rows (every other attribute: the fit's, from every row). A
    failure on the cluster (a damaged part, a lost worker) is the outcome's error, not an exception.
    """
    from craft.distributed import DaskCRAFT

    _, used = fitted_table(opened.sample.iloc[:0], schema)
    columns = list(used.used)
    if params.size_by == "k" and params.k > opened.n_rows:
        return FitOutcome(None, error=f"k = {params.k} clusters cannot be found in {opened.n_rows:,} rows.")
    # The encoded table stays in the workers' memory for the whole fit when it takes at most PERSIST_SHARE of it
    # (8 bytes a cell, numeric cells twice: DaskCRAFT's ``persist``); else every pass reads and encodes the parts
    # again. The answer is the same either way; only the time differs.
    encoded = 8 * (2 * len(used.numeric) + len(used.categorical)) * opened.n_rows
    memory = sum(int(w["memory_limit"] or 0) for w in opened.workers)
    model = DaskCRAFT(categorical=used, persist=bool(memory) and encoded <= PERSIST_SHARE * memory,
                      **params.estimator_kwargs())
    start = time.perf_counter()
    try:
        model.fit(opened.table[columns], callback=callback, client=opened.client)
        labels = sample_labels(opened, model)
    except CraftInputError as error:
        return FitOutcome(None, error=str(error))
    except Exception as error:  # noqa: BLE001 - the cluster's failures are the page's message
        if type(error).__name__ == "FitCancelled":
            raise
        return FitOutcome(None, error=str(_failure(opened.spec, error, "fitting")))
    shown = copy.copy(model)
    shown.labels_ = labels
    _FULL_LABELS[shown] = model.labels_
    notes = [f"Fitted with DaskCRAFT on all {opened.n_rows:,} rows ({opened.part_rows.size:,} parts) in "
             f"{time.perf_counter() - start:.1f} s; the views that need rows show a uniform sample of "
             f"{labels.size:,} rows with their fitted labels."]
    if params.size_by == "k" and model.n_clusters_ != params.k:
        notes.append(f"k = {params.k} clusters were not reached: the fit has K = {model.n_clusters_} with "
                     f"λ = {model.lam_:.4g}.")
    if not model.converged_:
        notes.append(f"The fit did not converge in max_iter = {params.max_iter} passes; raise max iterations.")
    return FitOutcome(shown, notes=notes, seconds=time.perf_counter() - start)


#: The fitted labels of every row (a dask Series on the cluster) of each shown model, for Export.
_FULL_LABELS: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def full_labels(model):
    """Every row's fitted label (a dask Series, indexed by row position) of a model :func:`fit` returned."""
    return _FULL_LABELS.get(model)


def sample_labels(opened: ClusterTable, model) -> np.ndarray:
    """The fitted labels (``model.labels_``, on the cluster) of the sample's rows, in the sample's order."""
    import dask

    # The fit's parts (``partition_sizes_``): its frame of the fitted columns may be fused differently.
    sizes = np.asarray(model.partition_sizes_, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    owner = np.searchsorted(starts, opened.sample_rows, side="right") - 1
    pieces = [dask.delayed(_take_series)(part, opened.sample_rows[owner == p] - starts[p])
              for p, part in enumerate(model.labels_.to_delayed()) if np.any(owner == p)]
    gathered = opened.client.compute(pieces, sync=True)
    return np.concatenate([np.asarray(piece, dtype=np.int64) for piece in gathered]) if gathered else \
        np.zeros(0, dtype=np.int64)


def _take_series(part: pd.Series, positions: np.ndarray) -> np.ndarray:
    return part.to_numpy()[positions]


def full_metrics(opened: ClusterTable, model, label: str) -> dict:
    """Purity, NMI and ARI of the fit against ``label`` over every labelled row, from a contingency table
    summed over the parts (the driver holds classes × clusters counts, never the rows).

    Rows without a value in the label column are left out, as the Evaluate page does in memory.
    """
    import dask.dataframe as dd

    labels = full_labels(model)
    labels = model.labels_ if labels is None else labels
    # Both columns indexed by row position with known divisions, so Dask aligns them part by part (their parts
    # need not match: a frame of fewer columns may be fused differently).
    classes = _positioned(opened, opened.table[label], dd)
    clusters = _positioned(opened, labels, dd)
    joined = dd.concat([classes.rename("y"), clusters.rename("k")], axis=1)
    meta = pd.Series([], dtype=np.int64, index=pd.MultiIndex.from_arrays([[], []], names=["y", "k"]))
    pieces = joined.map_partitions(_crosstab, meta=meta)
    counts = opened.client.compute(pieces).result()
    counts = counts.groupby(level=[0, 1]).sum().unstack(level=0, fill_value=0)  # clusters x classes
    if counts.empty:
        raise CraftInputError(f"the label column {label!r} is empty: no row has a class to score the fit against.")
    return metrics.evaluate_counts(counts.to_numpy(dtype=np.int64))


#: Scores of every row already computed: (fit key, label) -> scores; a few fits' worth.
_METRICS: dict = {}
_METRICS_KEPT = 32


def metrics_of(opened: ClusterTable, model, label: str, fit_key: str) -> dict:
    """:func:`full_metrics`, kept per fit and label column (a revisit does not pass over the table again)."""
    key = (fit_key, label)
    if key not in _METRICS:
        try:
            scores = full_metrics(opened, model, label)
        except CraftInputError:
            raise
        except Exception as error:  # noqa: BLE001 - a lost worker, a damaged part: the page's message
            raise _failure(opened.spec, error, "scoring against the label column") from None
        while len(_METRICS) >= _METRICS_KEPT:
            _METRICS.pop(next(iter(_METRICS)))
        _METRICS[key] = scores
    return _METRICS[key]


def _positioned(opened: ClusterTable, series, dd):
    """``series`` re-indexed by global row position (0..N-1), with the divisions of its own parts."""
    import dask

    parts = series.to_delayed()
    rows = np.asarray(opened.client.compute([dask.delayed(len)(p) for p in parts], sync=True), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]])
    kept = [p for p, n in enumerate(rows) if n > 0]
    pieces = [dask.delayed(_at)(parts[p], int(starts[p])) for p in kept]
    divisions = [int(starts[p]) for p in kept] + [int(rows.sum()) - 1]
    return dd.from_delayed(pieces, meta=series._meta, divisions=divisions, verify_meta=False)


def _at(part: pd.Series, start: int) -> pd.Series:
    return pd.Series(part.to_numpy(), index=pd.RangeIndex(start, start + len(part)), name=part.name)


def _crosstab(joined: pd.DataFrame) -> pd.Series:
    frame = joined.dropna(subset=["y"])
    return frame.groupby([frame["y"].astype(str), frame["k"].astype(np.int64)]).size()


def write_labels(opened: ClusterTable, model, folder: str) -> int:
    """Write every row's label as a Parquet folder (columns ``row`` and ``cluster``), each part by a worker.

    ``folder`` is a path the workers can write (on a remote cluster: on their file system, or a URL such as
    ``s3://…`` that Dask writes). Returns the number of rows written.
    """
    labels = full_labels(model)
    if labels is None:
        raise CraftInputError("this model holds no labels of the cluster table: fit it again.")
    frame = labels.rename("cluster").to_frame()
    frame = frame.assign(row=frame.index.to_series().astype(np.int64))[["row", "cluster"]]
    try:
        opened.client.compute(frame.to_parquet(folder, write_index=False, compute=False)).result()
    except Exception as error:  # noqa: BLE001 - a folder the workers cannot write, a lost worker
        raise _failure(opened.spec, error, f"writing the labels into {folder!r}") from None
    return int(np.asarray(model.partition_sizes_).sum())


def score_folder(opened: ClusterTable, model, source: str, folder: str) -> int:
    """Score the table at ``source`` (read and checked as any cluster table) with ``model`` and write ``assign``'s
    columns (row, cluster, cost, margin, fits_no_cluster, nothing_known, unseen_cells, unseen_columns) as a
    Parquet folder, each part by a worker, as ``craft predict --local-workers`` scores a table. Returns its rows.
    """
    from craft.distributed import assign_partitions

    table = dask_io.read_partitioned(source, partition_size=opened.spec.partition_size)
    if any(not isinstance(c, str) for c in table.columns):
        table = table.rename(columns=str)
    try:
        assigned = assign_partitions(model, table)
        rows = np.asarray(opened.client.compute([_length(p) for p in assigned.to_delayed()], sync=True))
        starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        numbered = assigned.map_partitions(_numbered, starts, meta=_numbered(assigned._meta, starts))
        opened.client.compute(numbered.to_parquet(folder, write_index=False, compute=False)).result()
    except CraftInputError:
        raise
    except Exception as error:  # noqa: BLE001 - a damaged part, a folder the workers cannot write, a lost worker
        named = dask_io.damaged_parquet(source)
        if named is not None:
            raise named from None
        raise _failure(opened.spec, error, f"scoring {source!r}") from None
    return int(rows.sum())


def _length(part):
    """A task that counts the rows of one part."""
    import dask

    return dask.delayed(len)(part)


def _numbered(part: pd.DataFrame, starts: np.ndarray, partition_info=None) -> pd.DataFrame:
    """``part`` with its rows' positions in the whole table first (``row``, from 0, part by part)."""
    start = int(starts[partition_info["number"]]) if partition_info is not None else 0
    out = part.reset_index(drop=True)
    out.insert(0, "row", np.arange(start, start + len(out), dtype=np.int64))
    # The names of the unseen columns are text: typed so, or Arrow would guess the type of an object column.
    out["unseen_columns"] = out["unseen_columns"].astype("string")
    return out
