"""``craft predict``: score a table with a saved model, in memory or partition by partition, into two CSV files."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .. import export
from ..exceptions import CraftInputError
from ..io import PATH_COLUMN, read_info
from ._common import _check_memory_limit, _check_outputs_are_not_inputs, _check_run_options, _dask_client, _library_messages, _load_memory, _read_dask


_ASSIGNMENTS = "assignments.csv"
_NO_CLUSTER = "no_cluster.csv"
#: assign's columns, the cells it could not judge included (a row of nothing known fits no cluster; its margin is empty).
_ASSIGNED = ("cluster", "cost", "margin", "fits_no_cluster", "nothing_known", "unseen_cells", "unseen_columns")


def _run_predict(args) -> int:
    from ..persist import load

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
        for message in _library_messages(caught):
            print(f"warning: {message}", file=sys.stderr)
        print(f"wrote {args.out / _ASSIGNMENTS}, {args.out / _NO_CLUSTER}")
    return 0


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

    from ..distributed import assign_partitions

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
