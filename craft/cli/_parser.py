"""The ``craft`` command's parser: every command, its options and their help; and ``craft datasets``, a table printed."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .. import __version__, datasets
from ._app import _APP_PORT, _run_app
from ._common import _DEFAULTS
from ._fit import _run_fit
from ._predict import _ASSIGNMENTS, _NO_CLUSTER, _run_predict


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


def _run_datasets(args) -> int:
    table = datasets.list_datasets()[["name", "rows", "features", "numeric", "categorical", "classes", "description"]]
    with pd.option_context("display.max_colwidth", 70, "display.width", 200):
        print(table.to_string(index=False))
    return 0
