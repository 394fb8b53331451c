"""Reading a partitioned table for the Dask backend, with the checks made before any worker reads it.

:func:`read_partitioned` opens a Parquet file or folder, a glob of Parquet
or text files (CSV/TSV/text), or one large text file, as a lazy
``dask.dataframe.DataFrame``. Before Dask reads a row it refuses, with a
:class:`~craft.exceptions.CraftInputError` that names the file:

* a pipe, a device or a socket (:func:`check_regular_file`);
* a Parquet file whose footer cannot be read (a truncated copy), one that
  names a column twice, and a folder whose files do not share one schema
  (:func:`check_parquet_footers`);
* a text table wider than this machine takes, and a later file whose header
  is not the first file's (:func:`check_text_width`).

A damaged *page* shows only when a worker reads it, in an error that names no
file: :func:`damaged_parquet` names it afterwards. :func:`check_memory_limit`
refuses a worker memory limit below what one partition needs.

``craft fit``/``craft predict``/``craft app`` with ``--scheduler`` or
``--local-workers`` read through this module; so can a user of
:class:`craft.distributed.DaskCRAFT`::

    table = read_partitioned("data/")           # checks, then a lazy frame
    model = DaskCRAFT(k=4).fit(table, client=client)
"""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path

import pandas as pd

from ._optional import require
from .exceptions import CraftInputError
from .io import PATH_COLUMN, typed_part
from .limits import available_memory, env_int, check_table_shape

__all__ = ["PARQUET_SUFFIXES", "TEXT_SEPARATORS", "check_memory_limit", "check_parquet_footers", "check_regular_file",
           "check_text_width", "damaged_parquet", "is_partitioned_source", "parquet_files", "partition_bytes",
           "read_partitioned"]

PARQUET_SUFFIXES = (".parquet", ".pq")
#: The text formats Dask reads, with their delimiter (None: guessed by the Python engine).
TEXT_SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t", ".txt": None}

#: Memory of a Dask worker process once it has imported craft, pandas and pyarrow (measured: about 400 MB).
WORKER_BASE_BYTES = 400 * 2**20
#: A partition read as pandas objects and encoded, against its bytes on disk (text cells become Python
#: objects; the encoded copy is 8 bytes a cell more).
PARTITION_EXPANSION = 4
#: Dask pauses a worker at 80 % of its memory limit (``distributed.worker.memory.pause``).
PAUSE_SHARE = 0.8


def is_partitioned_source(source: str) -> bool:
    """Whether ``source`` names something only the Dask backend reads: a folder, a glob or a URL."""
    return any(ch in source for ch in "*?[") or "://" in source or Path(source).is_dir()


def check_regular_file(path: Path, *, in_memory: bool) -> None:
    """Refuse a FIFO, a device or a socket (reading one may never end, or never stop), and a file too large.

    Parameters
    ----------
    path : Path
    in_memory : bool
        The file is to be parsed in one process's memory: the limit is then a
        quarter of the free memory (``CRAFT_MAX_FILE_MB`` overrides it), as a
        text table parsed in memory takes a few times its size in bytes. The
        Dask backend reads a file in partitions and has no such limit.

    Raises
    ------
    CraftInputError
        Naming the file and what to do.
    """
    try:
        info = path.stat()
    except OSError as error:
        raise CraftInputError(f"cannot read {str(path)!r}: {error.strerror or error}.") from None
    if stat.S_ISDIR(info.st_mode):
        return  # read_table names a folder; the Dask backend reads a folder of Parquet files
    if not stat.S_ISREG(info.st_mode):
        raise CraftInputError(
            f"cannot read {str(path)!r}: it is not a regular file (a pipe, a device or a socket); copy the data "
            f"into a file and give its path."
        )
    if not in_memory:
        return
    limit = env_int("CRAFT_MAX_FILE_MB", available_memory() // 4, scale=2**20)
    if info.st_size > limit:
        raise CraftInputError(
            f"cannot read {str(path)!r}: it is {info.st_size:,} bytes; this machine reads at most {limit:,} bytes "
            f"into memory (a quarter of its free memory; CRAFT_MAX_FILE_MB sets another limit). Use the Dask "
            f"backend (--local-workers N) for a larger file, or take a sample of its rows."
        )


def read_partitioned(source: str, *, partition_size: str | int = "64MB"):
    """Open ``source`` lazily as a ``dask.dataframe.DataFrame``, after the checks of this module.

    Parameters
    ----------
    source : str
        A Parquet file or a folder of them, a text file (.csv, .tsv, .tab,
        .txt), a glob of either (``"logs/*.csv"``), or a URL Dask reads
        (then only Dask's own checks apply).
    partition_size : str or int, default="64MB"
        Target bytes of a partition of a text file (``dd.read_csv``'s
        ``blocksize``); a Parquet file's partitions are its own.

    Returns
    -------
    dask.dataframe.DataFrame
        Nothing read yet but the footers (Parquet) or the first partition
        (text: typed as :func:`craft.io.read_table` types a table, every cell
        read as written and only empty ones missing).

    Raises
    ------
    CraftInputError
        A path that does not exist, a format the backend does not read, or
        any failure of the checks above, naming the file.
    """
    dd = require("dask.dataframe", package="dask[dataframe]", extra="dask", needed_for="reading a partitioned table")
    path = Path(source)
    pattern = any(ch in source for ch in "*?[") or "://" in source
    if not pattern and not path.exists():
        raise CraftInputError(f"{source!r} is neither a file, a folder nor a glob.")
    if path.exists():
        check_regular_file(path, in_memory=False)
    suffix = ".parquet" if path.is_dir() else Path(source.rstrip("/")).suffix.lower()
    if suffix not in PARQUET_SUFFIXES and suffix not in TEXT_SEPARATORS:
        raise CraftInputError(
            f"{source!r}: the Dask backend reads Parquet (.parquet, .pq, or a folder of them) and text tables "
            f"(.csv, .tsv, .tab, .txt); convert other formats first."
        )
    if pattern and "://" not in source and not glob.glob(source):
        raise CraftInputError(f"{source!r} matches no file.")
    if suffix in PARQUET_SUFFIXES and "://" not in source:
        check_parquet_footers(source)
    elif "://" not in source:
        check_text_width(source, TEXT_SEPARATORS[suffix])
    try:
        if suffix in PARQUET_SUFFIXES:
            table = dd.read_parquet(source)
        else:
            sep = TEXT_SEPARATORS[suffix]
            options = {"sep": sep} if sep else {"sep": None, "engine": "python"}
            # Every cell as written, only empty ones missing; then typed as read_table types a table.
            text = dd.read_csv(source, blocksize=partition_size, dtype=object, keep_default_na=False,
                               na_values=[""], include_path_column=PATH_COLUMN, **options)
            meta = typed_part(text.partitions[0].compute())
            table = text.map_partitions(typed_part, meta.dtypes.to_dict(), meta=meta.iloc[:0])
    except CraftInputError:
        raise
    except Exception as error:  # noqa: BLE001 - any reading failure is a bad input file
        raise CraftInputError(f"cannot read {source!r} with Dask: {type(error).__name__}: {error}") from None
    return table


def check_text_width(source: str, sep: str | None) -> None:
    """Refuse a text table wider than this machine takes (from the first file's header), and a later file
    whose header is not the first one's.

    Dask reads the files as one table by position, with the first file's names: a file with the same
    columns in another order would mix their values (or fail on a worker with a traceback).
    """
    files = sorted(glob.glob(source)) or [source]
    first = _header_names(files[0], sep)
    check_table_shape(0, len(first), repr(files[0]), estimated=True)
    for file in files[1:]:
        names = _header_names(file, sep)
        if names == first:
            continue
        if sorted(names) == sorted(first):
            raise CraftInputError(
                f"{file!r} has the columns of {files[0]!r} in another order ({_quoted(names)} instead of "
                f"{_quoted(first)}); the Dask backend reads the files by position: write every file with one "
                f"column order, or give the files one at a time."
            )
        extra = [name for name in names if name not in first]
        lacking = [name for name in first if name not in names]
        raise CraftInputError(
            f"{file!r} has other columns than {files[0]!r}: {_quoted(extra) or 'none'} instead of "
            f"{_quoted(lacking) or 'none'}; the Dask backend reads files that share one header: leave this file "
            f"out of the glob or align its columns."
        )


def _header_names(file: str, sep: str | None) -> list[str]:
    """The column names of a text file's first line (the delimiter guessed as the most frequent without ``sep``)."""
    import csv

    try:
        with open(file, "rb") as handle:
            header = handle.readline(64 * 2**20).decode("utf-8-sig", errors="replace").rstrip("\r\n")
    except OSError as error:
        raise CraftInputError(f"cannot read {file!r}: {error.strerror or error}.") from None
    delimiter = sep or max([",", "\t", ";", "|"], key=header.count)
    return [name.strip() for name in next(csv.reader([header], delimiter=delimiter), [])]


def _quoted(names: list[str], limit: int = 5) -> str:
    return ", ".join(repr(name) for name in names[:limit]) + (", ..." if len(names) > limit else "")


def check_parquet_footers(source: str) -> None:
    """Refuse, naming the file, a Parquet file whose footer cannot be read, that names a column twice, or whose
    schema is not the first file's.

    Done on the driver before any worker starts: a worker would fail mid-fit with a traceback that does not
    say which file. Reads only each file's footer. Two files of one table must have the same column names
    and types (``pyarrow.Schema.equals``, metadata aside): Dask takes the first file's schema and a worker
    fails, or converts silently, on a file that differs.
    """
    pq = require("pyarrow.parquet", package="pyarrow", extra="readers", needed_for="reading Parquet with Dask")
    files = parquet_files(source)
    if not files:
        raise CraftInputError(f"{source!r} holds no Parquet files.")
    first = None
    for file in files:
        try:
            schema = pq.read_metadata(file).schema.to_arrow_schema()
        except Exception as error:  # noqa: BLE001 - pyarrow raises OSError or ArrowInvalid
            detail = " ".join(str(error).split())[:160]
            raise CraftInputError(
                f"cannot read {str(file)!r}: it is not a readable Parquet file (damaged or truncated: {detail}); "
                f"replace or remove it."
            ) from None
        names = schema.names
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise CraftInputError(
                f"{str(file)!r} names {names.count(duplicated[0])} columns {duplicated[0]!r}; the Dask backend needs "
                f"unique column names: rename them (the in-memory backend reads them as {duplicated[0]!r}, "
                f"{duplicated[0] + '.1'!r})."
            )
        if first is None:
            first = (file, schema)
            continue
        if not schema.equals(first[1], check_metadata=False):
            raise CraftInputError(f"{str(file)!r} does not have the schema of {str(first[0])!r} "
                                  f"({_schema_difference(schema, first[1])}); the files of one table share one schema: "
                                  "rewrite this file with the others' columns and types, or move it out of the folder.")


def _schema_difference(schema, reference) -> str:
    """The first difference between two Arrow schemas, in words."""
    extra = [n for n in schema.names if n not in reference.names]
    lacking = [n for n in reference.names if n not in schema.names]
    if extra or lacking:
        return f"columns {_quoted(extra) or 'none'} instead of {_quoted(lacking) or 'none'}"
    for name in reference.names:
        if schema.field(name).type != reference.field(name).type:
            return f"column {name!r} is {schema.field(name).type}, not {reference.field(name).type}"
    return "its columns in another order"


def parquet_files(source: str) -> list[Path]:
    """The Parquet files of ``source``: a folder's (hidden and ``_`` files left out, as Dask does) or a glob's."""
    path = Path(source)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(("_", ".")))
    return [Path(name) for name in sorted(glob.glob(source))] or [path]


def damaged_parquet(source: str) -> CraftInputError | None:
    """After a read failed on a worker: the Parquet file whose pages cannot be read, named (None if every one reads).

    The footers were checked before; a damaged page shows only when a worker reads it, in an error that
    names no file. Each file is read again here, one row group at a time, on this failure path only.
    """
    path = Path(source)
    if "://" in source or (path.suffix.lower() not in PARQUET_SUFFIXES and not path.is_dir()):
        return None
    pq = require("pyarrow.parquet", package="pyarrow", extra="readers", needed_for="reading Parquet with Dask")
    for file in parquet_files(source):
        try:
            reader = pq.ParquetFile(file)
            for group in range(reader.num_row_groups):
                reader.read_row_group(group)
        except Exception as error:  # noqa: BLE001 - pyarrow raises OSError or ArrowInvalid
            detail = " ".join(str(error).split())[:160]
            return CraftInputError(
                f"cannot read {str(file)!r}: it is not a readable Parquet file (damaged: {detail}); replace or "
                f"remove it."
            )
    return None


def check_memory_limit(memory_limit: str, source: str, table, *, partition_size: str | int = "64MB",
                       option: str = "--memory-limit") -> None:
    """Refuse a worker memory limit below what one worker needs: its own process and one partition.

    Below it Dask's nanny kills and restarts the worker on every partition, forever. ``"auto"``, ``"0"``
    and ``"none"`` are Dask's own choices and pass.
    """
    from dask.utils import parse_bytes

    if str(memory_limit).strip().lower() in ("auto", "0", "none"):
        return
    try:
        limit = int(parse_bytes(memory_limit))
    except (ValueError, TypeError):
        raise CraftInputError(f"{option} {memory_limit!r} is not a size; write it as 4GB, 512MiB or auto.") from None
    partition = partition_bytes(source, table, partition_size=partition_size)
    need = int((WORKER_BASE_BYTES + PARTITION_EXPANSION * partition) / PAUSE_SHARE)
    if limit < need:
        raise CraftInputError(
            f"{option} {memory_limit} ({limit:,} bytes) is less than one worker needs: about "
            f"{need:,} bytes (its process with craft loaded, {WORKER_BASE_BYTES:,} bytes, plus the largest "
            f"partition, {partition:,} bytes on disk, read and encoded: about {PARTITION_EXPANSION} times that; "
            f"Dask pauses a worker at {PAUSE_SHARE:.0%} of its limit). Give at least {-(-need // 10**6):,}MB, or a "
            f"smaller --partition-size for text files."
        )


def partition_bytes(source: str, table, *, partition_size: str | int = "64MB") -> int:
    """Bytes of the largest partition: an in-memory table's, a text block, or a Parquet file's row groups."""
    from dask.utils import parse_bytes

    if isinstance(table, pd.DataFrame):
        return int(table.memory_usage(deep=True).sum())
    path = Path(source)
    if "://" in source:
        return 0
    if path.is_dir() or path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        sizes = [sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
                 for meta in (pq.read_metadata(file) for file in parquet_files(source))]
        return max(sizes, default=0)
    largest = max((os.path.getsize(file) for file in glob.glob(source)), default=0)
    return min(largest, int(parse_bytes(partition_size)))
