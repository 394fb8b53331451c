"""What ``craft fit``, ``craft predict`` and ``craft app`` share: the checks of their options and columns, the
table read in memory or lazily for Dask, the Dask client, the library's own warnings."""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import warnings
from pathlib import Path

from .. import dask_io, datasets
from .._optional import missing
from ..estimator import CRAFT
from ..exceptions import CraftInputError
from ..io import read_info, read_table


_DEFAULTS = {name: p.default for name, p in inspect.signature(CRAFT.__init__).parameters.items() if name != "self"}


#: The folder of the package craft: a warning raised from a file under it is the library's own.
_PACKAGE = Path(__file__).resolve().parent.parent


def _library_messages(caught) -> list[str]:
    """The messages of the library's own warnings among ``caught`` (K not reached, no convergence, ignored
    columns), each once, in order; not its dependencies'."""
    return list(dict.fromkeys(str(w.message) for w in caught if Path(w.filename).resolve().is_relative_to(_PACKAGE)))


def _check_run_options(args, distributed: bool) -> None:
    """Options of ``fit`` and ``predict`` that contradict each other, refused before any work."""
    if args.sheet is not None and distributed:
        raise CraftInputError("--sheet reads an Excel workbook, which the Dask backend does not read: leave out "
                              "--local-workers/--scheduler, or save the sheet as CSV or Parquet.")
    if args.local_workers is not None and args.local_workers < 1:
        raise CraftInputError(f"--local-workers={args.local_workers} must be at least 1.")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise CraftInputError(f"--out {str(args.out)!r} exists and is not a folder.")


def _names(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    names = [name.strip() for name in value.split(",")]
    if any(not name for name in names):
        raise CraftInputError(f"{option}={value!r} has an empty column name; separate names by single commas.")
    return names


def _check_columns(columns, names, option: str) -> None:
    unknown = [name for name in names if name not in columns]
    if unknown:
        shown = ", ".join(repr(c) for c in list(columns)[:10])
        raise CraftInputError(f"{option} names column(s) {unknown[:5]} that the data does not have; its columns are {shown}.")


def _roles(table, label, categorical, ignore, default_schema):
    """The features (the table without the label) and the ``categorical`` argument of the estimator."""
    if label:
        _check_columns(table.columns, [label], "--label")
        for option, names in (("--ignore", ignore), ("--categorical", categorical or [])):
            if label in names:
                raise CraftInputError(
                    f"{option} names {label!r}, the --label column (left out of the fit and used to score it); "
                    f"remove it from {option}, or choose another --label."
                )
    _check_columns(table.columns, ignore, "--ignore")
    X = table.drop(columns=[label]) if label else table
    if categorical is not None:
        X = X.drop(columns=ignore) if ignore else X
        _check_columns(X.columns, categorical, "--categorical")
        return X, categorical
    if default_schema is not None:  # a bundled dataset: its recommended roles
        return X, default_schema.override(ignored=ignore) if ignore else default_schema
    return (X.drop(columns=ignore) if ignore else X), "auto"


def _load_memory(args):
    """The table, the label column's values (or None) and the schema choice for the in-memory fit."""
    path = Path(args.data)
    bundled = not path.exists() and args.data in set(datasets.list_datasets()["name"])
    if bundled:
        X, y = datasets.load(args.data)
        table = X.assign(**{datasets.TARGET: y}) if datasets.TARGET not in X.columns else X
        label = args.label or datasets.TARGET
        default_schema = datasets.dataset_schema(args.data)
    else:
        if not path.exists():
            raise CraftInputError(
                f"{args.data!r} is neither a file nor a bundled dataset (bundled: "
                f"{', '.join(datasets.list_datasets()['name'])})."
            )
        _check_regular_file(path, in_memory=True)
        table = read_table(path, sheet=args.sheet)
        info = read_info(table)
        assert info is not None  # read_table records how it read every table
        if args.sheet is not None and info.format != "excel":
            raise CraftInputError(f"--sheet {args.sheet!r}: {str(path)!r} is not an Excel workbook; leave --sheet out.")
        for note in info.notes() if not args.quiet else ():
            print(f"note: {note}", file=sys.stderr)
        label = args.label
        default_schema = None
    return table, label, default_schema


_check_regular_file = dask_io.check_regular_file


@contextlib.contextmanager
def _dask_client(args):
    try:
        from distributed import Client, LocalCluster
    except ImportError as error:
        raise missing("dask[distributed]", extra="dask", needed_for="--scheduler and --local-workers") from error
    if args.scheduler is not None:
        try:
            client = Client(args.scheduler, timeout=f"{args.connect_timeout}s")
        except (OSError, TimeoutError) as error:
            raise CraftInputError(f"cannot reach the Dask scheduler at {args.scheduler!r}: {error}") from None
        with client:
            yield client
        return
    # Numba's threads in every worker process would oversubscribe the cores (and OpenMP threads spin
    # while they wait): give each worker its share unless the user chose.
    share = max(1, (os.cpu_count() or 1) // (args.local_workers * max(1, args.threads_per_worker)))
    chosen = os.environ.get("NUMBA_NUM_THREADS")
    os.environ.setdefault("NUMBA_NUM_THREADS", str(share))
    try:
        cluster = _local_cluster(LocalCluster, args)
    except CraftInputError:
        raise
    except ValueError as error:  # e.g. an unreadable --memory-limit
        raise CraftInputError(f"cannot start a local Dask cluster: {error}") from None
    finally:
        if chosen is None:
            os.environ.pop("NUMBA_NUM_THREADS", None)
    with cluster, Client(cluster) as client:
        yield client


#: Starts of a local cluster tried before its failure is reported: a worker process lost while it starts
#: (killed, or out of memory for a moment) is most often a passing fault, so the start is tried once more.
_CLUSTER_STARTS = 2


def _local_cluster(LocalCluster, args):
    """A started local cluster, its start retried once; a second failure is one line (exit 2), not a traceback.

    The workers' own logs are silenced below CRITICAL: a task's failure (a damaged Parquet part, say)
    reaches the driver as its exception, which the command reports in one line, and the worker's
    ``Compute Failed`` traceback on stderr would only bury that line.
    """
    import logging

    failure: Exception | None = None
    for _ in range(_CLUSTER_STARTS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return LocalCluster(
                    n_workers=args.local_workers,
                    threads_per_worker=args.threads_per_worker,
                    memory_limit=args.memory_limit,
                    dashboard_address=None,
                    silence_logs=logging.CRITICAL,
                )
        except ValueError:
            raise
        except (RuntimeError, OSError, TimeoutError) as error:  # "Nanny failed to start worker process", ...
            failure = error
    raise CraftInputError(
        f"cannot start a local Dask cluster of {args.local_workers} worker(s): a worker process failed while it "
        f"started, {_CLUSTER_STARTS} times ({type(failure).__name__}: {' '.join(str(failure).split())[:160]}); check "
        "the machine's free memory and process limits, or use fewer --local-workers."
    )


def _read_dask(args):
    """The table (lazy, or a bundled dataset in memory), the label column and the default schema for the Dask fit.

    Called before any cluster starts, so that a bad path fails fast.
    """
    source = args.data
    pattern = any(ch in source for ch in "*?[") or "://" in source
    if not Path(source).exists() and not pattern:
        if source in set(datasets.list_datasets()["name"]):
            X, y = datasets.load(source)
            return X.assign(**{datasets.TARGET: y}), args.label or datasets.TARGET, datasets.dataset_schema(source)
        raise CraftInputError(f"{source!r} is neither a file, a folder, a glob nor a bundled dataset.")
    return dask_io.read_partitioned(source, partition_size=args.partition_size), args.label, None


def _check_memory_limit(args, table) -> None:
    """The library's check (:func:`craft.dask_io.check_memory_limit`) of ``--memory-limit``."""
    dask_io.check_memory_limit(args.memory_limit, args.data, table, partition_size=args.partition_size)


def _check_outputs_are_not_inputs(inputs: list[str], outputs: list[tuple[str, Path]]) -> None:
    """Refuse an output file that is one of the inputs (the same file, by any path or link), before any work.

    ``outputs`` pairs each file with the option that places it. ``craft predict`` opens its files before it
    reads DATA, so writing over DATA would read a truncated file; ``craft fit`` would replace the data.
    """
    for option, target in outputs:
        for given in inputs:
            try:
                same = target.exists() and os.path.exists(given) and os.path.samefile(target, given)
            except OSError:
                same = False
            if same:
                raise CraftInputError(
                    f"{option} would overwrite the input {given!r} with {target.name}: give another {option.split()[0]}."
                )
