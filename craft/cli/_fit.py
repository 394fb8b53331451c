"""``craft fit``: fit CRAFT in memory or on a Dask cluster, and write labels, masks, a summary and the model."""

from __future__ import annotations

import contextlib
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .. import dask_io, export, metrics
from .._optional import missing, require
from ..estimator import CRAFT
from ..exceptions import CraftInputError
from ._common import (_DEFAULTS, _check_memory_limit, _check_outputs_are_not_inputs, _check_run_options, _dask_client,
                      _library_messages, _load_memory, _names, _read_dask, _roles)


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
    messages = _library_messages(caught)
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

    from ..distributed import DaskCRAFT

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
