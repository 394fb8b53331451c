"""The partitioned reader's checks, in the library (craft.dask_io): a DaskCRAFT user gets them, and the CLI says them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from craft import CraftInputError, dask_io
from craft.cli import main

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("dask.dataframe")


def _parts(folder, n_parts=3, rows=50, seed=0):
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(n_parts):
        part = pd.DataFrame({"x": rng.normal(size=rows), "c": rng.choice(["a", "b"], size=rows)})
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{i}.parquet")
    return folder


def test_read_partitioned_opens_a_folder_lazily_with_every_row(tmp_path):
    folder = _parts(tmp_path / "parts")
    table = dask_io.read_partitioned(str(folder))
    assert table.npartitions == 3
    assert len(table.compute()) == 150


def test_mixed_schemas_in_a_folder_name_the_file(tmp_path, capsys):
    """Dask took the first file's schema and failed on a worker (or converted) on a file that differs."""
    folder = _parts(tmp_path / "parts", n_parts=2)
    other = pd.DataFrame({"x": ["text"] * 5, "c": ["a"] * 5})
    pq.write_table(pa.Table.from_pandas(other, preserve_index=False), folder / "part-9.parquet")
    with pytest.raises(CraftInputError, match=r"part-9.parquet' does not have the schema of .*part-0.parquet.*"
                                              r"column 'x' is (large_)?string, not double"):
        dask_io.read_partitioned(str(folder))
    assert main(["fit", str(folder), "--lam", "5", "--local-workers", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not have the schema of" in err


def test_a_folder_with_another_column_names_it(tmp_path):
    folder = _parts(tmp_path / "parts", n_parts=2)
    pq.write_table(pa.Table.from_pandas(pd.DataFrame({"x": [1.0], "d": ["a"]}), preserve_index=False),
                   folder / "part-5.parquet")
    with pytest.raises(CraftInputError, match=r"columns 'd' instead of 'c'"):
        dask_io.read_partitioned(str(folder))


def test_truncated_footer_and_missing_paths_are_named(tmp_path):
    folder = _parts(tmp_path / "parts", n_parts=2)
    damaged = folder / "part-1.parquet"
    damaged.write_bytes(damaged.read_bytes()[:-20])
    with pytest.raises(CraftInputError, match=r"part-1.parquet'.*not a readable Parquet file"):
        dask_io.read_partitioned(str(folder))
    with pytest.raises(CraftInputError, match="neither a file, a folder nor a glob"):
        dask_io.read_partitioned(str(tmp_path / "nothing"))
    with pytest.raises(CraftInputError, match="matches no file"):
        dask_io.read_partitioned(str(tmp_path / "none-*.parquet"))


def test_memory_limit_check_is_the_library_s(tmp_path):
    folder = _parts(tmp_path / "parts", n_parts=1)
    table = dask_io.read_partitioned(str(folder))
    with pytest.raises(CraftInputError, match="less than one worker needs"):
        dask_io.check_memory_limit("10MB", str(folder), table)
    dask_io.check_memory_limit("auto", str(folder), table)
    with pytest.raises(CraftInputError, match="is not a size"):
        dask_io.check_memory_limit("lots", str(folder), table)
