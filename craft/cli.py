"""The ``craft`` command: fit CRAFT on a file or a bundled dataset, in memory or on a Dask cluster.

Examples
--------
``craft fit wine --k 3 --out results/``
    Fit the bundled Wine data (its class column is the label) and write
    ``labels.csv``, ``masks.csv`` and ``summary.json`` into ``results/``.
``craft fit data.csv --m 0.4 --lam 25 --categorical colour,shape --label species --out results/``
    A file of your own; ``species`` is left out of the fit and used to score it.
``craft fit 'data/part-*.parquet' --local-workers 4 --lam 25 --out results/``
    The Dask backend on a local cluster of 4 worker processes; ``--scheduler
    tcp://host:8786`` uses a running cluster instead.
``craft datasets``
    The bundled datasets.
``craft app data.csv``
    The app (``pip install 'craft-explorer[app]'``) with ``data.csv`` loaded,
    on the first free port from 8501; ``--port`` and ``--no-browser`` as in
    ``streamlit run`` / ``jupyter lab``.

Exit status: 0 on success, 2 for invalid input (a bad option value, a
missing or unreadable file, a column that does not exist: the message is
printed on stderr, without a traceback), 1 for a missing optional package
(the message names the extra to install) or anything unexpected.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.util
import inspect
import json
import os
import socket
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__, dask_io, datasets, export, metrics
from ._optional import missing, require
from .estimator import CRAFT
from .exceptions import CraftInputError
from .io import PATH_COLUMN, read_info, read_table

#: The app's first port when --port is not given (Streamlit's) and how many after it are tried.
_APP_PORT, _APP_PORT_TRIES = 8501, 100
_DEFAULTS = {name: p.default for name, p in inspect.signature(CRAFT.__init__).parameters.items() if name != "self"}


def main(argv: list[str] | None = None) -> int:
    """Run the ``craft`` command line; return its exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 2 for invalid input (message on stderr), 1 for a
        missing optional package (the message names the extra to install)
        or an unexpected error, 130 when interrupted.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (already printed)
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args)
    except CraftInputError as error:
        print(f"craft: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:  # a missing optional package: the message names the extra
        print(f"craft: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("craft: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the command line reports, it does not crash
        if os.environ.get("CRAFT_DEBUG"):
            raise
        print(
            f"craft: unexpected error: {type(error).__name__}: {error} (set CRAFT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


# ----------------------------------------------------------------------
# The parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="craft",
        description="CRAFT: clustering of mixed numeric and categorical data with cluster-specific feature "
        "selection (Garg, Rudin and Jaakkola).",
        epilog="Exit status: 0 success, 2 invalid input (message on stderr), 1 unexpected error.",
    )
    parser.add_argument("--version", action="version", version=f"craft {__version__}")
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    listing = commands.add_parser("datasets", help="list the bundled datasets", description="List the bundled datasets.")
    listing.set_defaults(command="datasets", run=_run_datasets)

    app = commands.add_parser(
        "app",
        help="open the app (pip install 'craft-explorer[app]')",
        description="Start the CRAFT Explorer app and print its address; Ctrl+C stops it. Every browser tab "
        "opened on the address starts with DATA loaded (a link that names a dataset opens that one).",
    )
    app.set_defaults(command="app", run=_run_app, sheet=None, out=None, label=None)
    app.add_argument("data", metavar="DATA", nargs="?", default=None,
                     help="a table file (CSV/TSV/text, Parquet, Excel), opened as if uploaded on the Data page, or the "
                     "name of a bundled example (the app's list: the paper's synthetic sets and `craft datasets`). "
                     "Default: the app's own first example, the paper's Figure 1(a)")
    app.add_argument("--port", type=int, default=None,
                     help=f"the port to serve on; it must be free (default: the first free port from {_APP_PORT})")
    app.add_argument("--host", default="localhost",
                     help="the address to listen on (default localhost: this machine only; 0.0.0.0 serves every network)")
    app.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a browser tab")
    app_dask = _dask_options(app)
    app_dask.description = ("With --scheduler or --local-workers, DATA may be a folder of Parquet files, a glob of "
                            "CSV or Parquet files or one large file, read lazily by the workers as `craft fit` reads "
                            "it; the app fits on every row with DaskCRAFT and draws the views that need rows from a "
                            "uniform sample.")

    fit = commands.add_parser(
        "fit",
        help="fit CRAFT and write labels, masks and a summary",
        description="Fit CRAFT on DATA and write labels, feature masks and a JSON summary. Parameters not given "
        "take the library's defaults (see help(craft.CRAFT)).",
    )
    fit.set_defaults(command="fit", run=_run_fit)
    fit.add_argument(
        "data",
        metavar="DATA",
        help="a table file (CSV/TSV/text, Parquet, Excel) or the name of a bundled dataset (see `craft datasets`; "
        "its 'class' column becomes the label). With --scheduler or --local-workers: a file, a folder of Parquet "
        "files or a glob such as 'data/part-*.parquet' or 'logs/*.csv', read lazily by Dask.",
    )

    model = fit.add_argument_group("model (an option not given takes the library's default, shown)")
    model.add_argument("--m", type=float, help=f"fraction of features each cluster selects, in (0, 1) (default {_DEFAULTS['m']})")
    model.add_argument("--rho", type=float, help="prior variance of the selection probability (default: the paper's max(0.01, m(1-m)-0.01))")
    model.add_argument("--lam", type=float, help="cost of opening a cluster, lambda > 0; give at most one of --lam and --k "
                       "(default: the mean cost of a point under one global cluster)")
    model.add_argument("--k", type=int, help="desired number of clusters; lambda is then derived by --k-method")
    model.add_argument("--k-method", choices=("search", "farthest_first"), help=f"how lambda is derived from --k (default {_DEFAULTS['k_method']})")
    model.add_argument("--budget", choices=("fixed", "approximate"), help=f"feature budget per cluster (default {_DEFAULTS['budget']})")
    model.add_argument(
        "--rho-selection",
        choices=("paper", "shrink"),
        help=f"paper: each cluster ranks its own scores (rho does not change the selection); shrink: scores shrunk "
        f"towards the pooled ones by rho/(m(1-m)), so rho -> 0 selects one common set (default {_DEFAULTS['rho_selection']})",
    )
    model.add_argument("--eps-c", type=float, help="approximate budget: categorical gain threshold in (0, 1) (default 0.8)")
    model.add_argument("--eps-v", type=float, help="approximate budget: numeric variance threshold > 0 (default 0.5)")
    model.add_argument("--init", choices=("craft++", "random"), help=f"how the first pass starts (default {_DEFAULTS['init']})")
    model.add_argument("--n-init", help=f"restarts with different seeds, an integer or 'auto' (default {_DEFAULTS['n_init']})")
    model.add_argument("--max-iter", type=int, help=f"most passes per run (default {_DEFAULTS['max_iter']})")
    model.add_argument("--smoothing", type=float, help=f"pseudo-count towards the global level distribution (default {_DEFAULTS['smoothing']})")
    model.add_argument("--min-variance", type=float, help=f"variance floor, share of the global variance (default {_DEFAULTS['min_variance']})")
    model.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives the same result (default 0)")
    model.add_argument("--missing", choices=("marginalise", "impute"),
                       help=f"a missing cell: 'impute' (column mean; a level of its own) or 'marginalise' (adds nothing "
                       f"to its row's cost or its cluster's statistics) (default {_DEFAULTS['missing']})")
    model.add_argument("--no-standardize", dest="standardize", action="store_false", default=None, help="do not scale numeric columns to unit variance")
    model.add_argument("--noise", action="store_true", default=None,
                       help="label rows that fit no cluster (cost to every cluster above lambda + D F0) -1 and keep them "
                       "out of the clusters' statistics (needs --init craft++, the default)")

    columns = fit.add_argument_group("columns")
    columns.add_argument(
        "--categorical",
        default=None,
        help="comma-separated categorical columns; every other column is numeric. Default: inferred from the data "
        "(craft.infer_schema; with Dask, from the first partition), or a bundled dataset's recommended roles",
    )
    columns.add_argument("--ignore", default=None, help="comma-separated columns to leave out")
    columns.add_argument("--sheet", metavar="NAME", default=None,
                         help="the sheet of an Excel workbook to read (default: the first visible worksheet with data; "
                         "the sheet read is printed)")
    columns.add_argument(
        "--label",
        default=None,
        help="column of true classes: left out of the fit and used to score it (purity, NMI, ARI in summary.json). "
        "Default for a bundled dataset: 'class'",
    )

    output = fit.add_argument_group("output")
    output.add_argument("--out", type=Path, default=None,
                        help="folder for labels, masks.csv and summary.json (created if needed); without it only the summary is printed")
    output.add_argument("--format", choices=("csv", "parquet"), default="csv", help="format of the labels file, columns row and cluster (default csv)")
    output.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bar on stderr (default: when stderr is a terminal)")
    output.add_argument("--quiet", action="store_true", help="print nothing on success")

    output.add_argument("--save-model", metavar="PATH", type=Path, default=None,
                        help="write the fitted model to PATH (a zip of JSON and arrays, no code: `craft predict` and "
                        "craft.load read it)")

    dask_group = _dask_options(fit)
    dask_group.add_argument("--chunk-rows", type=int, default=65_536, help="most proposed rows the driver receives at once (default 65536)")
    dask_group.add_argument("--persist", action="store_true", help="keep the encoded partitions in cluster memory (faster when they fit)")

    predict = commands.add_parser(
        "predict",
        help="score a table with a saved model: each row's cluster, cost, margin and whether it fits no cluster",
        description="Place every row of DATA in the nearest cluster of the saved MODEL (never opening one) and "
        f"write {_ASSIGNMENTS} (row, cluster, cost, margin, fits_no_cluster, nothing_known, unseen_cells, unseen_columns, "
        f"in DATA's row order) and {_NO_CLUSTER} "
        "(the rows that fit no cluster, with their cells as read). See help(craft.CRAFT.assign).",
    )
    predict.set_defaults(command="predict", run=_run_predict, label=None)
    predict.add_argument("model", metavar="MODEL", help="a model file written by `craft fit --save-model` or model.save")
    predict.add_argument("data", metavar="DATA", help="the table to score, as for `craft fit` (a file, a bundled "
                         "dataset's name; with --scheduler or --local-workers also a folder of Parquet files or a glob)")
    predict.add_argument("--out", type=Path, required=True, help="folder for the two CSV files (created if needed)")
    predict.add_argument("--sheet", metavar="NAME", default=None, help="the sheet of an Excel workbook to read")
    predict.add_argument("--quiet", action="store_true", help="print nothing on success")
    _dask_options(predict)
    return parser


def _dask_options(command: argparse.ArgumentParser):
    """The options that choose and size a Dask cluster, shared by ``fit`` and ``predict``."""
    dask_group = command.add_argument_group("Dask backend (pip install 'craft-explorer[dask]')")
    where = dask_group.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", default=None, help="run on the Dask cluster at ADDRESS, e.g. tcp://10.0.0.1:8786")
    where.add_argument("--local-workers", metavar="N", type=int, default=None, help="start a local Dask cluster of N worker processes")
    dask_group.add_argument("--connect-timeout", type=float, default=20.0, help="seconds to wait for --scheduler (default 20)")
    dask_group.add_argument("--threads-per-worker", type=int, default=1, help="threads per local worker (default 1)")
    dask_group.add_argument("--memory-limit", default="auto", help="memory limit per local worker, e.g. 4GB (default auto: the machine's memory shared)")
    dask_group.add_argument("--partition-size", default="64MB", help="target size of a partition when Dask reads text files (default 64MB)")
    return dask_group


# ----------------------------------------------------------------------
# craft datasets


def _run_datasets(args) -> int:
    table = datasets.list_datasets()[["name", "rows", "features", "numeric", "categorical", "classes", "description"]]
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        print(table.to_string(index=False))
    return 0


# ----------------------------------------------------------------------
# craft fit


def _run_fit(args) -> int:
    started = time.perf_counter()
    categorical = _names(args.categorical, "--categorical")
    ignore = _names(args.ignore, "--ignore") or []
    distributed = args.scheduler is not None or args.local_workers is not None
    _check_run_options(args, distributed)
    outputs = [] if args.out is None else [(f"--out {str(args.out)!r}", args.out / name)
                                           for name in (f"labels.{args.format}", "masks.csv", "summary.json")]
    if args.save_model is not None:
        outputs.append(("--save-model", Path(args.save_model)))
    _check_outputs_are_not_inputs([args.data], outputs)
    progress = _progress_bar(args)
    given = {
        "m": args.m, "rho": args.rho, "lam": args.lam, "k": args.k, "k_method": args.k_method, "budget": args.budget,
        "rho_selection": args.rho_selection, "eps_c": args.eps_c, "eps_v": args.eps_v, "standardize": args.standardize,
        "missing": args.missing, "max_iter": args.max_iter,
        "n_init": _n_init(args.n_init) if args.n_init is not None else None, "init": args.init,
        "smoothing": args.smoothing, "min_variance": args.min_variance, "noise": args.noise,
    }
    parameters = {name: value for name, value in given.items() if value is not None}
    parameters["random_state"] = args.seed
    with progress as bar, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        callback = _callback(bar)
        if distributed:
            result = _fit_dask(args, parameters, categorical, ignore, callback)
        else:
            result = _fit_memory(args, parameters, categorical, ignore, callback)
    # The library's own warnings (K not reached, no convergence, ignored columns), not its dependencies'.
    messages = list(dict.fromkeys(str(w.message) for w in caught if Path(w.filename).parent.name == "craft"))
    model = result["model"]
    summary = _summary(args, parameters, model, result, messages, time.perf_counter() - started)
    if args.out is not None:
        _write_outputs(args, result, model, summary)
    if args.save_model is not None:
        _save_model(model, args.save_model)
    if not args.quiet:
        _report(model, result, messages, args.out)
        if args.save_model is not None:
            print(f"saved the model to {args.save_model}")
    return 0


def _save_model(model, path: Path) -> None:
    try:
        if path.parent != Path(""):
            path.parent.mkdir(parents=True, exist_ok=True)
        model.save(path)
    except OSError as error:
        raise CraftInputError(f"cannot write {str(path)!r}: {error.strerror or error}.") from None


def _check_run_options(args, distributed: bool) -> None:
    """Options of ``fit`` and ``predict`` that contradict each other, refused before any work."""
    if args.sheet is not None and distributed:
        raise CraftInputError("--sheet reads an Excel workbook, which the Dask backend does not read: leave out "
                              "--local-workers/--scheduler, or save the sheet as CSV or Parquet.")
    if args.local_workers is not None and args.local_workers < 1:
        raise CraftInputError(f"--local-workers={args.local_workers} must be at least 1.")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise CraftInputError(f"--out {str(args.out)!r} exists and is not a folder.")


def _write_outputs(args, result, model, summary: str) -> None:
    """labels, masks and summary into ``--out``; a disk fault is an input error that names the file."""
    target = args.out
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        target = args.out / f"labels.{args.format}"
        _write_labels(result["label_pieces"], target, args.format)
        target = args.out / "masks.csv"
        target.write_bytes(export.masks_csv(model))
        target = args.out / "summary.json"
        target.write_text(summary + "\n", encoding="utf-8")
    except OSError as error:
        raise CraftInputError(f"cannot write {str(target)!r}: {error.strerror or error}.") from None


def _n_init(value: str):
    if value == "auto":
        return "auto"
    try:
        return int(value)
    except ValueError:
        raise CraftInputError(f"--n-init={value!r} must be 'auto' or an integer >= 1.") from None


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


def _progress_bar(args):
    show = args.progress if args.progress is not None else (sys.stderr.isatty() and not args.quiet)
    if not show:
        return contextlib.nullcontext(None)
    try:
        from tqdm import tqdm
    except ImportError as error:
        if args.progress:  # asked for explicitly: say which extra brings it
            raise missing("tqdm", extra="cli", needed_for="craft fit --progress") from error
        return contextlib.nullcontext(None)  # the automatic bar on a terminal is a nicety
    return tqdm(desc="craft fit", unit="pass", file=sys.stderr, dynamic_ncols=True)


def _callback(bar):
    if bar is None:
        return None

    def update(record):
        bar.update(1)
        bar.set_postfix(run=record.restart, K=record.n_clusters, changed=record.n_changed, objective=f"{record.objective:.6g}", refresh=False)

    return update


# -- in memory --------------------------------------------------------


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


def _scores(y, labels: np.ndarray, label: str):
    """Purity, NMI and ARI over the rows that have a label, and how many they are.

    As the app's Evaluate page: a row without a value in the label column is left out of the scores,
    and a warning says how many.
    """
    y = pd.Series(np.asarray(y, dtype=object) if not isinstance(y, pd.Series) else y).reset_index(drop=True)
    keep = y.notna().to_numpy()
    n_labelled = int(keep.sum())
    if n_labelled == 0:
        raise CraftInputError(f"the label column {label!r} is empty: no row has a class to score the fit against.")
    if n_labelled < keep.size:
        warnings.warn(
            f"{keep.size - n_labelled:,} of {keep.size:,} rows have no value in the label column {label!r} and "
            f"are left out of the scores (purity, NMI, ARI on the {n_labelled:,} labelled rows).",
            stacklevel=2,
        )
    return metrics.evaluate(y[keep], labels[keep]), n_labelled


def _fit_memory(args, parameters, categorical, ignore, callback) -> dict:
    table, label, default_schema = _load_memory(args)
    X, roles = _roles(table, label, categorical, ignore, default_schema)
    y = table[label] if label else None
    model = CRAFT(categorical=roles, **parameters).fit(X, callback=callback)
    labels = np.asarray(model.labels_, dtype=np.int64)
    scores, n_labelled = _scores(y, labels, label) if y is not None else (None, None)
    pieces = [pd.DataFrame({"row": np.arange(labels.size, dtype=np.int64), "cluster": labels})]
    return {"model": model, "metrics": scores, "n_rows": int(labels.size), "label": label, "backend": "memory",
            "label_pieces": pieces, "labelled_rows": n_labelled}


# -- on a Dask cluster ----------------------------------------------------


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


def _fit_dask(args, parameters, categorical, ignore, callback) -> dict:
    try:
        return _fit_dask_read(args, parameters, categorical, ignore, callback)
    except (CraftInputError, ImportError, KeyboardInterrupt):
        raise
    except Exception as error:
        named = dask_io.damaged_parquet(args.data)
        if named is not None:
            raise named from error
        raise


def _fit_dask_read(args, parameters, categorical, ignore, callback) -> dict:
    import dask.dataframe as dd

    from .distributed import DaskCRAFT

    table, label, default_schema = _read_dask(args)
    if args.local_workers is not None:
        _check_memory_limit(args, table)
    with _dask_client(args) as client:
        if isinstance(table, pd.DataFrame):  # a bundled dataset: one partition per worker thread
            threads = max(1, sum(client.nthreads().values()))
            table = dd.from_pandas(table, npartitions=threads, sort=False)
        table = table.rename(columns=str) if any(not isinstance(c, str) for c in table.columns) else table
        X, roles = _roles(table, label, categorical, ignore, default_schema)
        model = DaskCRAFT(
            categorical=roles,
            chunk_rows=args.chunk_rows,
            persist=args.persist,
            **parameters,
        ).fit(X, callback=callback, client=client)
        pieces = []
        # Labels come back one partition at a time: the driver never holds them all.
        for piece in model.labels_.partitions:
            series = client.compute(piece).result()
            pieces.append(pd.DataFrame({"row": series.index.to_numpy(dtype=np.int64), "cluster": series.to_numpy()}))
        scores, n_labelled = None, None
        if label:
            # Scores need every row's class and cluster on the driver: 16 bytes a row.
            classes = client.compute(table[label]).result().reset_index(drop=True)
            scores, n_labelled = _scores(classes, np.concatenate([p["cluster"].to_numpy() for p in pieces]), label)
        return {
            "model": model,
            "metrics": scores,
            "n_rows": int(model.partition_sizes_.sum()),
            "label": label,
            "labelled_rows": n_labelled,
            "backend": "dask",
            "label_pieces": pieces,
            "n_partitions": int(model.partition_sizes_.size),
            "workers": len(client.scheduler_info().get("workers", {})),
        }


# ----------------------------------------------------------------------
# craft predict

_ASSIGNMENTS = "assignments.csv"
_NO_CLUSTER = "no_cluster.csv"
#: assign's columns, the cells it could not judge included (a row of nothing known fits no cluster; its margin is empty).
_ASSIGNED = ("cluster", "cost", "margin", "fits_no_cluster", "nothing_known", "unseen_cells", "unseen_columns")


def _run_predict(args) -> int:
    from .persist import load

    distributed = args.scheduler is not None or args.local_workers is not None
    _check_run_options(args, distributed)
    _check_outputs_are_not_inputs([args.model, args.data], [(f"--out {str(args.out)!r}", args.out / name)
                                                             for name in (_ASSIGNMENTS, _NO_CLUSTER)])
    model = load(args.model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = _predict_dask(args, model) if distributed else _predict_memory(args, model)
    if not args.quiet:
        n_rows, n_outside = counts
        print(f"{n_rows:,} rows scored against K={model.n_clusters_} clusters; {n_outside:,} fit no cluster")
        for message in dict.fromkeys(str(w.message) for w in caught if Path(w.filename).parent.name == "craft"):
            print(f"warning: {message}", file=sys.stderr)
        print(f"wrote {args.out / _ASSIGNMENTS}, {args.out / _NO_CLUSTER}")
    return 0


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


def _predict_memory(args, model) -> tuple[int, int]:
    """Score the table in memory; (rows, rows that fit no cluster)."""
    table, _, _ = _load_memory(args)
    info = read_info(table)
    if info is not None and info.duplicated_names:
        name = info.duplicated_names[0]
        copies = [c for c in table.columns if c == name or (c.startswith(f"{name}.") and c[len(name) + 1:].isdigit())]
        raise CraftInputError(
            f"{args.data!r} names more than one column {name!r} (read as {', '.join(map(repr, copies[:5]))}); the "
            f"model scores its columns by name, so which {name!r} is meant is not known: rename the columns so that "
            "each name is used once."
        )
    assigned = model.assign(table)
    rows = None
    if info is not None and info.blank_records:
        # Rows keep their numbers in DATA: the blank records the reader dropped are counted, not renumbered.
        rows = np.delete(np.arange(len(table) + len(info.blank_records), dtype=np.int64), list(info.blank_records))
    with _PredictWriter(args.out, table.columns) as writer:
        writer.write(assigned, table, 0, rows=rows)
    if info is not None and info.blank_rows > len(info.blank_records) and not args.quiet:
        lines = "blank row(s) of the sheet" if info.format == "excel" else "empty line(s)"
        print(f"note: row numbers count the rows read; the {info.blank_rows - len(info.blank_records):,} {lines} "
              f"of {args.data!r} are not rows and are not counted.", file=sys.stderr)
    return len(table), int(assigned["fits_no_cluster"].sum())


def _predict_dask(args, model) -> tuple[int, int]:
    """Score the table partition by partition; the driver holds one partition's result at a time."""
    import dask.dataframe as dd

    from .distributed import assign_partitions

    table, _, _ = _read_dask(args)
    if args.local_workers is not None:
        _check_memory_limit(args, table)
    with _dask_client(args) as client:
        if isinstance(table, pd.DataFrame):  # a bundled dataset: one partition per worker thread
            table = dd.from_pandas(table, npartitions=max(1, sum(client.nthreads().values())), sort=False)
        assigned = assign_partitions(model, table)
        n_rows = n_outside = 0
        with _PredictWriter(args.out, table.columns) as writer:
            for piece, part in zip(assigned.partitions, table.partitions, strict=True):
                scored = client.compute(piece).result()
                flagged = scored["fits_no_cluster"].to_numpy()
                # The partition's cells are read again only where some of its rows fit no cluster.
                cells = client.compute(part).result() if flagged.any() else None
                writer.write(scored, cells, n_rows)
                n_rows += len(scored)
                n_outside += int(flagged.sum())
    return n_rows, n_outside


class _PredictWriter:
    """The two CSV files of ``craft predict``, written a piece of rows at a time, in row order.

    Rows are numbered by their record in DATA (``row``, from 0; a blank
    record the reader drops keeps its number, so later rows keep theirs); in the
    file of rows that fit no cluster that column is named ``row_`` (``_``
    added while it clashes with a column of DATA) and the table's cells follow.
    """

    def __init__(self, out: Path, columns):
        self.out = out
        self.columns = [c for c in columns if c != PATH_COLUMN]
        self.position = "row"
        while self.position in self.columns:
            self.position += "_"
        self._files: dict = {}

    def __enter__(self) -> "_PredictWriter":
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            for name in (_ASSIGNMENTS, _NO_CLUSTER):
                self._files[name] = open(self.out / name, "wb")  # noqa: SIM115 - closed in __exit__
        except OSError as error:
            self.__exit__(None, None, None)
            raise CraftInputError(f"cannot write into {str(self.out)!r}: {error.strerror or error}.") from None
        self._append(_ASSIGNMENTS, pd.DataFrame(columns=["row", *_ASSIGNED]), header=True)
        self._append(_NO_CLUSTER, pd.DataFrame(columns=[self.position, *self.columns]), header=True)
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._files.values():
            handle.close()

    def write(self, scored: pd.DataFrame, cells: pd.DataFrame | None, start: int,
              rows: np.ndarray | None = None) -> None:
        """``scored`` (one piece of ``assign``), its rows numbered from ``start`` (or ``rows``, their numbers in
        DATA); the flagged rows' ``cells``."""
        if rows is None:
            rows = np.arange(start, start + len(scored), dtype=np.int64)
        self._append(_ASSIGNMENTS, pd.DataFrame({"row": rows, **{c: scored[c].to_numpy() for c in _ASSIGNED}}))
        flagged = np.flatnonzero(scored["fits_no_cluster"].to_numpy())
        if flagged.size and cells is not None:
            outside = cells.iloc[flagged][self.columns]
            outside.insert(0, self.position, rows[flagged])
            self._append(_NO_CLUSTER, outside)

    def _append(self, name: str, frame: pd.DataFrame, *, header: bool = False) -> None:
        try:
            self._files[name].write(export.to_csv_bytes(frame, header=header))
        except OSError as error:
            raise CraftInputError(f"cannot write {str(self.out / name)!r}: {error.strerror or error}.") from None


# ----------------------------------------------------------------------
# Output


def _write_labels(pieces, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        pa = require("pyarrow", extra="readers", needed_for="--format parquet")
        pq = require("pyarrow.parquet", package="pyarrow", extra="readers", needed_for="--format parquet")

        schema = pa.schema([("row", pa.int64()), ("cluster", pa.int64())])
        with pq.ParquetWriter(path, schema) as writer:
            for piece in pieces:
                writer.write_table(pa.Table.from_pandas(piece, schema=schema, preserve_index=False))
        return
    with open(path, "wb") as handle:
        handle.write(b"row,cluster\r\n")  # the shared writer's line end (RFC 4180)
        for piece in pieces:
            # Integers only: nothing a spreadsheet could run, but the shared writer keeps it so.
            handle.write(export.to_csv_bytes(piece).split(b"\n", 1)[1])


def _summary(args, parameters, model, result, messages, seconds) -> str:
    params = {name: value for name, value in model.get_params().items() if name != "categorical"}
    params = {name: value for name, value in params.items() if name in _DEFAULTS or name == "random_state"}
    result_block = {
        "n_clusters": int(model.n_clusters_),
        "objective": float(model.objective_),
        "lam": float(model.lam_),
        "rho": float(model.rho_),
        "n_iter": int(model.n_iter_),
        "converged": bool(model.converged_),
        "cluster_sizes": [int(s) for s in model.cluster_sizes_],
        "n_noise": int(model.n_noise_),
        "selected_features": [
            [str(name) for name, keep in zip(model.feature_names_in_, row, strict=True) if keep] for row in model.feature_mask_
        ],
        "seconds": round(seconds, 3),
        "warnings": messages,
    }
    dataset = {"source": str(args.data), "rows": result["n_rows"], "label": result["label"], "backend": result["backend"]}
    if result["labelled_rows"] is not None and result["labelled_rows"] < result["n_rows"]:
        dataset["labelled_rows"] = result["labelled_rows"]
    if result["backend"] == "dask":
        dataset["partitions"] = result["n_partitions"]
        dataset["workers"] = result["workers"]
    document = json.loads(export.params_json(params, dataset=dataset, schema=model.schema_, result=result_block))
    if result["metrics"] is not None:
        document["metrics"] = {key: (float(v) if key != "n_clusters" else int(v)) for key, v in result["metrics"].items()}
    return json.dumps(document, indent=2, ensure_ascii=False)


def _report(model, result, messages, out: Path | None) -> None:
    line = f"K={model.n_clusters_}  objective={model.objective_:.6g}  lambda={model.lam_:.6g}  passes={model.n_iter_}"
    if result["metrics"] is not None:
        m = result["metrics"]
        line += f"  purity={m['purity']:.3f}  NMI={m['nmi']:.3f}  ARI={m['ari']:.3f}"
    print(line)
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)
    if out is not None:
        written = sorted(str(path) for path in out.iterdir() if path.name.startswith(("labels.", "masks.", "summary.")))
        print("wrote " + ", ".join(written))


# ----------------------------------------------------------------------
# craft app


def _run_app(args) -> int:
    """Check DATA and the port, then serve the app in this process (Streamlit's server; returns when it stops)."""
    root = _app_root()
    for module, package in (("streamlit", "streamlit"), ("plotly", "plotly")):
        require(module, package=package, extra="app", needed_for="craft app")
    # The app imports its package `explorer` from the folder of app.py, as Streamlit runs it; the checks and the
    # warm-up import it from there too, so that the server and the sessions share one copy of each module.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from explorer import distributed_table, serve, services, state

    distributed = args.scheduler is not None or args.local_workers is not None
    if distributed:
        if args.data is None:
            raise CraftInputError("--scheduler and --local-workers need DATA: a folder of Parquet files, a glob of "
                                  "CSV or Parquet files, or a large file.")
        _check_run_options(args, distributed)
        table = dask_io.read_partitioned(args.data, partition_size=args.partition_size)
        if args.local_workers is not None:
            _check_memory_limit(args, table)
        start: str | None = distributed_table.SOURCE
    else:
        os.environ.pop(distributed_table.ENV, None)
        start = _app_data(args.data, services)
    port = _app_port(args.host, args.port)
    if start is None:
        os.environ.pop(state.START_DATA_ENV, None)
    else:
        os.environ[state.START_DATA_ENV] = start
    shown = "localhost" if args.host in ("localhost", "127.0.0.1", "0.0.0.0", "::", "") else args.host
    if ":" in shown:  # an IPv6 address goes in brackets in a URL (RFC 3986)
        shown = f"[{shown}]"
    print(f"CRAFT Explorer ({args.data or state.DEFAULT_DATASET}): http://{shown}:{port}  (starting; Ctrl+C stops it)", flush=True)
    # Without --no-browser, Streamlit decides: it opens a tab unless it finds no display (Linux without DISPLAY).
    headless = [] if args.browser else ["--server.headless", "true"]
    argv = ["--server.port", str(port), "--server.address", args.host, *headless, "--browser.gatherUsageStats", "false"]
    if not distributed:
        serve.main(argv)
        return 0
    # The cluster lives as long as the server: the app's sessions reach it at its scheduler's address.
    with _dask_client(args) as client:
        source = args.data if "://" in args.data or any(ch in args.data for ch in "*?[") else str(Path(args.data).resolve())
        os.environ[distributed_table.ENV] = distributed_table.Spec(
            source=source, scheduler=client.scheduler.address, partition_size=str(args.partition_size),
            connect_timeout=args.connect_timeout, local_workers=args.local_workers).to_env()
        print(f"Dask: {len(client.scheduler_info().get('workers', {}))} worker(s) at {client.scheduler.address}", flush=True)
        serve.main(argv)
    return 0


def _app_root() -> Path:
    """The folder of app.py that goes with this copy of craft: the clone it lies in, or the installed craft_app."""
    clone = Path(__file__).resolve().parent.parent
    if (clone / "app.py").is_file() and (clone / "explorer" / "serve.py").is_file():
        return clone
    spec = importlib.util.find_spec("craft_app")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    raise ImportError(f"craft app: the app's files (craft_app/app.py) are not installed beside craft at {clone}; "
                      f"reinstall: pip install --force-reinstall 'craft-explorer[app]'")


def _app_data(data: str | None, services) -> str | None:
    """What the sessions open with: None (the default example), an example's name, or a readable table's full path.

    A file is read here with the app's own reader (``explorer.services.load_upload``), so a table the app
    cannot cluster is refused before the server starts, with the message the Data page would show.
    """
    if data is None:
        return None
    path = Path(data)
    if not path.exists():
        if data in services.EXAMPLES:
            return data
        raise CraftInputError(f"{data!r} is neither a file nor a bundled example (examples: {', '.join(services.EXAMPLES)}).")
    _check_regular_file(path, in_memory=True)
    if path.is_dir():
        raise CraftInputError(f"{data!r} is a folder; the app opens one table file (CSV/TSV/text, Parquet, Excel), or a "
                              "folder of Parquet files on a Dask cluster: add --local-workers N or --scheduler ADDRESS.")
    try:
        content = path.read_bytes()
    except OSError as error:
        raise CraftInputError(f"cannot read {data!r}: {error.strerror or error}.") from None
    try:
        services.load_upload(content, path.name)
    except CraftInputError as error:
        raise CraftInputError(f"{data!r}: {error}") from None
    return str(path.resolve())


def _app_port(host: str, port: int | None) -> int:
    """``port`` when it is free (else an input error), or the first free port from :data:`_APP_PORT`."""
    if port is not None:
        if not 1 <= port <= 65535:
            raise CraftInputError(f"--port={port} must be between 1 and 65535.")
        if not _port_free(host, port):
            raise CraftInputError(f"port {port} is in use on {host}: give another --port, or leave --port out to take the "
                                  f"first free port from {_APP_PORT}.")
        return port
    for candidate in range(_APP_PORT, _APP_PORT + _APP_PORT_TRIES):
        if _port_free(host, candidate):
            return candidate
    raise CraftInputError(f"ports {_APP_PORT}-{_APP_PORT + _APP_PORT_TRIES - 1} are all in use on {host}: give a free one with --port.")


def _port_free(host: str, port: int) -> bool:
    """Whether the server could listen on ``host:port`` (every address the name has, as Tornado binds them)."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise CraftInputError(f"--host {host!r} is not an address of this machine: {error.strerror or error}.") from None
    bound = 0
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            # Tornado sets SO_REUSEADDR: a port left in TIME_WAIT is free for it, one with a listener is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRNOTAVAIL:  # e.g. ::1 of localhost without IPv6; Tornado skips it too
                    continue
                return False
            bound += 1
    if not bound:  # every address is another machine's: the server could listen on none of them
        raise CraftInputError(f"--host {host!r} is not an address of this machine (none of its addresses can be "
                              "listened on); give one of this machine's addresses, e.g. localhost or 0.0.0.0.")
    return True
