"""The ``craft`` command line, end to end: files written, their content, exit codes and messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, __version__, datasets, metrics
from craft.cli import main


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def read_outputs(folder: Path, fmt: str = "csv"):
    labels = pd.read_parquet(folder / "labels.parquet") if fmt == "parquet" else pd.read_csv(folder / "labels.csv")
    masks = pd.read_csv(folder / "masks.csv")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return labels, masks, summary


def library_fit(name: str, **params):
    X, y = datasets.load(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(categorical=datasets.dataset_schema(name), **params).fit(X)
    return model, y


# ----------------------------------------------------------------------
# craft fit on a bundled dataset


def test_fit_bundled_dataset_writes_what_the_library_finds(tmp_path, capsys):
    code, out, err = run(["fit", "zoo", "--k", 7, "--n-init", 2, "--seed", 0, "--out", tmp_path, "--no-progress"], capsys)
    assert code == 0, err
    labels, masks, summary = read_outputs(tmp_path)
    model, y = library_fit("zoo", k=7, n_init=2, random_state=0)

    assert list(labels.columns) == ["row", "cluster"]
    np.testing.assert_array_equal(labels["row"], np.arange(101))
    np.testing.assert_array_equal(labels["cluster"], model.labels_)

    X, _ = datasets.load("zoo")
    assert masks.shape == (model.n_clusters_, 3 + X.shape[1])  # cluster, size, n_selected, then one per feature
    assert list(masks.columns[3:]) == list(X.columns)
    np.testing.assert_array_equal(masks[list(X.columns)].to_numpy(), model.feature_mask_.astype(int))

    assert summary["parameters"]["k"] == 7 and summary["parameters"]["m"] == 0.5
    assert summary["dataset"] == {"source": "zoo", "rows": 101, "label": "class", "backend": "memory"}
    assert summary["result"]["n_clusters"] == model.n_clusters_ == labels["cluster"].nunique()
    assert summary["result"]["objective"] == pytest.approx(model.objective_, rel=1e-12)
    expected = metrics.evaluate(y, model.labels_)
    assert summary["metrics"] == pytest.approx(expected)
    assert 0 < summary["metrics"]["purity"] <= 1
    assert f"K={model.n_clusters_}" in out and "purity=" in out


def test_fit_file_with_label_categorical_ignore_and_parquet_labels(tmp_path, capsys):
    rng = np.random.default_rng(0)
    group = rng.integers(2, size=120)
    table = pd.DataFrame(
        {
            "id": np.arange(120),
            "=size": rng.normal(5.0 * group, 1.0),  # a name a spreadsheet would run as a formula
            "colour": np.array(["red", "blue"])[group],
            "truth": np.array(["A", "B"])[group],
        }
    )
    path = tmp_path / "table.csv"
    table.to_csv(path, index=False)
    out_dir = tmp_path / "out"
    argv = ["fit", path, "--k", 2, "--categorical", "colour", "--ignore", "id", "--label", "truth",
            "--n-init", 1, "--format", "parquet", "--out", out_dir, "--quiet"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert out == ""
    labels, masks, summary = read_outputs(out_dir, "parquet")
    assert summary["schema"] == {"numeric": ["=size"], "categorical": ["colour"], "ignored": []}
    assert summary["metrics"]["purity"] == 1.0 and summary["result"]["n_clusters"] == 2
    assert masks.columns[3] == "'=size"  # neutralised for spreadsheets
    assert labels["cluster"].nunique() == 2


def test_progress_bar_on_stderr(tmp_path, capsys):
    code, _, err = run(["fit", "wine", "--lam", 20, "--n-init", 1, "--progress", "--quiet"], capsys)
    assert code == 0
    assert "craft fit" in err and "pass" in err


def test_without_out_only_the_summary_line_is_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["fit", "wine", "--lam", 20, "--n-init", 1, "--no-progress"], capsys)
    assert code == 0
    assert out.startswith("K=") and "wrote" not in out
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------
# Errors: exit 2 with the library's message, no traceback


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "wine", "--m", 1.5], "craft: error: Parameter m=1.5 is invalid: it must be a number > 0 and < 1."),
        (["fit", "wine", "--lam", 1, "--k", 3], "Give at most one of lam=1.0 and k=3"),
        (["fit", "no-such-file.csv"], "'no-such-file.csv' is neither a file nor a bundled dataset"),
        (["fit", "wine", "--label", "nope"], "--label names column(s) ['nope'] that the data does not have"),
        (["fit", "wine", "--categorical", "nope"], "--categorical names column(s) ['nope']"),
        (["fit", "wine", "--n-init", "many"], "--n-init='many' must be 'auto' or an integer >= 1."),
        (["fit", "wine", "--local-workers", 0], "--local-workers=0 must be at least 1."),
    ],
)
def test_invalid_input_exits_2_with_the_message(argv, message, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and out == ""


def test_unreadable_file_exits_2(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("")
    code, _, err = run(["fit", path], capsys)
    assert code == 2 and "'empty.csv': the file is empty" in err


def test_missing_marginalise_is_the_librarys(tmp_path, capsys):
    # Soybean has 2,337 missing cells: the option reaches the estimator and is recorded.
    code, _, err = run(["fit", "soybean", "--k", 19, "--n-init", 1, "--missing", "marginalise", "--out", tmp_path,
                        "--no-progress"], capsys)
    assert code == 0, err
    labels, _, summary = read_outputs(tmp_path)
    model, _ = library_fit("soybean", k=19, n_init=1, random_state=0, missing="marginalise")
    np.testing.assert_array_equal(labels["cluster"], model.labels_)
    assert summary["parameters"]["missing"] == "marginalise"
    code, _, err = run(["fit", "soybean", "--missing", "drop"], capsys)
    assert code == 2 and "invalid choice: 'drop'" in err


def test_parameters_that_make_the_work_explode_exit_2_with_the_reason(capsys):
    # Issue 14/15: n_init=1e10 was a MemoryError ("unexpected error", exit 1); k = rows ran for minutes.
    code, _, err = run(["fit", "wine", "--n-init", 10_000_000_000], capsys)
    assert code == 2 and "n_init=10000000000 is invalid: it must be 'auto' or an integer >= 1 and <= 1000" in err
    assert "unexpected" not in err
    code, _, err = run(["fit", "wine", "--k", 178], capsys)
    assert code == 2 and "k=178 is more clusters than a fit on 178 rows may have: at most 100" in err
    code, _, err = run(["fit", "credit-g", "--lam", 1e-300, "--n-init", 1], capsys)
    assert code == 2 and "lam=1e-300 opens more than 500 clusters on 1000 rows" in err


def test_usage_errors_help_and_version(capsys):
    assert run(["fit", "wine", "--m", "abc"], capsys)[0] == 2  # argparse: invalid float value
    assert run([], capsys)[0] == 2
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.strip() == f"craft {__version__}"
    code, out, _ = run(["fit", "--help"], capsys)
    assert code == 0
    for option in ("--m", "--rho", "--lam", "--k", "--k-method", "--budget", "--eps-c", "--eps-v", "--categorical",
                   "--ignore", "--label", "--seed", "--n-init", "--max-iter", "--no-standardize", "--missing", "--out", "--format",
                   "--scheduler", "--local-workers", "--progress", "--quiet"):
        assert option in out


def test_datasets_lists_every_bundled_dataset(capsys):
    code, out, _ = run(["datasets"], capsys)
    assert code == 0
    for name in datasets.list_datasets()["name"]:
        assert name in out


# ----------------------------------------------------------------------
# The Dask backend from the command line


def test_scheduler_gives_the_in_memory_labels(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, protocol="tcp", dashboard_address=None
        )
    with cluster:
        common = ["fit", "wine", "--lam", 20, "--n-init", 2, "--seed", 3, "--no-progress", "--quiet"]
        assert run(common + ["--out", tmp_path / "memory"], capsys)[0] == 0
        code, _, err = run(common + ["--scheduler", cluster.scheduler_address, "--out", tmp_path / "dask"], capsys)
    assert code == 0, err
    memory, dask_out = read_outputs(tmp_path / "memory"), read_outputs(tmp_path / "dask")
    pd.testing.assert_frame_equal(memory[0], dask_out[0])
    pd.testing.assert_frame_equal(memory[1], dask_out[1])
    assert dask_out[2]["dataset"]["backend"] == "dask" and dask_out[2]["dataset"]["workers"] == 2
    assert dask_out[2]["result"]["objective"] == pytest.approx(memory[2]["result"]["objective"], rel=1e-9)
    assert dask_out[2]["metrics"] == pytest.approx(memory[2]["metrics"])


def test_unreachable_scheduler_exits_2(capsys):
    pytest.importorskip("distributed")
    code, _, err = run(["fit", "wine", "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", 1, "--lam", 1], capsys)
    assert code == 2 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in err


def test_console_script_with_local_workers_on_a_parquet_folder(tmp_path):
    """The installed entry point, a local cluster of worker processes, and a partitioned Parquet input."""
    dd = pytest.importorskip("dask.dataframe")
    executable = shutil.which("craft", path=str(Path(sys.executable).parent))
    assert executable, "the console script `craft` is not installed next to the interpreter"
    X, y = datasets.load("wine")
    dd.from_pandas(X.assign(cultivar=y), npartitions=3).to_parquet(tmp_path / "wine")
    out_dir = tmp_path / "out"
    completed = subprocess.run(
        [executable, "fit", str(tmp_path / "wine"), "--local-workers", "1", "--lam", "20", "--n-init", "1",
         "--label", "cultivar", "--seed", "1", "--out", str(out_dir), "--no-progress"],
        capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    labels, masks, summary = read_outputs(out_dir)
    model, _ = library_fit("wine", lam=20, n_init=1, random_state=1)
    np.testing.assert_array_equal(labels["cluster"], model.labels_)
    assert summary["dataset"]["partitions"] == 3 and summary["dataset"]["label"] == "cultivar"
    assert summary["metrics"]["n_clusters"] == model.n_clusters_
    assert completed.stdout.startswith(f"K={model.n_clusters_}")

    failed = subprocess.run([executable, "fit", str(tmp_path / "missing.parquet"), "--local-workers", "1"],
                            capture_output=True, text=True, timeout=300)
    assert failed.returncode == 2
    assert failed.stderr == f"craft: error: {str(tmp_path / 'missing.parquet')!r} is neither a file, a folder, a glob nor a bundled dataset.\n"


def test_parquet_folder_with_a_truncated_file_exits_2_naming_it(tmp_path, capsys):
    """A folder of Parquet parts where one copy was cut short: exit 2 and the file's name, before any worker starts."""
    dd = pytest.importorskip("dask.dataframe")
    X, y = datasets.load("wine")
    dd.from_pandas(X.assign(cultivar=y), npartitions=3).to_parquet(tmp_path / "wine")
    part = sorted((tmp_path / "wine").glob("*.parquet"))[1]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    code, out, err = run(["fit", tmp_path / "wine", "--local-workers", 1, "--lam", 20], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"craft: error: cannot read {str(part)!r}: it is not a readable Parquet file (damaged or "
                          f"truncated")
    assert "Traceback" not in err


def test_unwritable_output_exits_2_naming_the_file(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "masks.csv").mkdir()  # a folder where the file should go
    code, _, err = run(["fit", "wine", "--lam", 20, "--n-init", 1, "--no-progress", "--out", out], capsys)
    assert code == 2
    assert f"cannot write {str(out / 'masks.csv')!r}: Is a directory." in err


def test_too_wide_csv_for_dask_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.dataframe")
    monkeypatch.setenv("CRAFT_MAX_COLUMNS", "100")
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(500)) + "\n" + ",".join("1" * 500) + "\n")
    for backend in (["--local-workers", 1], []):
        code, _, err = run(["fit", path, "--lam", 1, *backend], capsys)
        assert code == 2, err
        assert "has about 500 columns; this machine takes at most 100 columns" in err


def test_parquet_with_duplicated_names(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("dask.dataframe")
    path = tmp_path / "dups.parquet"
    values = np.r_[np.zeros(10), np.full(10, 5.0)]
    pq.write_table(pa.Table.from_arrays([pa.array(values), pa.array(values[::-1])], names=["a", "a"]), path)
    code, out, _ = run(["fit", path, "--lam", 1, "--no-progress"], capsys)
    assert code == 0 and out.startswith("K=")  # in memory: read as a, a.1
    code, _, err = run(["fit", path, "--lam", 1, "--local-workers", 1], capsys)
    assert code == 2
    assert f"{str(path)!r} names 2 columns 'a'; the Dask backend needs unique column names" in err


def _survey_csv(path: Path, rows: int = 400) -> Path:
    """A survey whose 'children' answer "None" means none, a numeric column with "NA" markers and
    thousands separators: the cells pandas' default markers would turn missing."""
    rng = np.random.default_rng(0)
    group = np.arange(rows) % 2
    income = np.where(group == 1, 52_000, 21_000) + rng.integers(0, 3_000, rows)
    lines = ["children,income,city"]
    for i in range(rows):
        children = ("None" if group[i] else rng.choice(["1", "2", "3+"])) if i % 7 else "None"
        money = "NA" if i % 13 == 0 else f'"{income[i]:,}"'
        lines.append(f"{children},{money},{rng.choice(['North', 'South']) if group[i] else 'East'}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_dask_reads_text_as_read_table_does(tmp_path, capsys):
    """'None' in a text column is an answer and '52,311' a number on the Dask path too, part by part."""
    pytest.importorskip("dask.dataframe")
    path = _survey_csv(tmp_path / "survey.csv", rows=3000)
    common = ["fit", path, "--lam", 5, "--n-init", 1, "--seed", 0, "--no-progress", "--quiet"]
    assert run(common + ["--out", tmp_path / "memory"], capsys)[0] == 0
    code, _, err = run(common + ["--local-workers", 1, "--partition-size", "16KB", "--out", tmp_path / "dask"], capsys)
    assert code == 0, err
    memory, dask_out = read_outputs(tmp_path / "memory"), read_outputs(tmp_path / "dask")
    assert dask_out[2]["dataset"]["partitions"] > 1
    assert dask_out[2]["schema"] == memory[2]["schema"]
    pd.testing.assert_frame_equal(memory[0], dask_out[0])
    pd.testing.assert_frame_equal(memory[1], dask_out[1])


def test_dask_refuses_a_later_part_that_disagrees_with_the_first(tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    path = tmp_path / "t.csv"
    path.write_text("x,c\n" + "".join(f"{i % 5}.5,{'ab'[i % 2]}\n" for i in range(6000)) + "oops,a\n")
    code, _, err = run(["fit", path, "--lam", 5, "--local-workers", 1, "--partition-size", "8KB", "--no-progress"],
                       capsys)
    assert code == 2 and "Traceback" not in err
    assert "column 'x' holds numbers in the first part of the data but 'oops' in a later one" in err


# ----------------------------------------------------------------------
# Hostile inputs of the command line: special files, roles that collide, unlabelled rows


def test_fifo_and_device_are_refused_naming_the_file(tmp_path, capsys):
    """A FIFO hung the read and /dev/zero was read for 2.5 GB: neither is a regular file."""
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for source in (fifo, Path("/dev/zero")):
        code, out, err = run(["fit", source, "--lam", 1, "--no-progress"], capsys)
        assert code == 2 and out == ""
        assert f"craft: error: cannot read {str(source)!r}: it is not a regular file" in err
        assert "copy the data into a file" in err


def test_file_beyond_the_size_limit_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CRAFT_MAX_FILE_MB", "0.01")
    path = tmp_path / "big.csv"
    path.write_text("x,y\n" + "1,2\n" * 5000)  # 20 kB
    code, _, err = run(["fit", path, "--lam", 1, "--no-progress"], capsys)
    assert code == 2
    assert f"cannot read {str(path)!r}: it is 20,004 bytes; this machine reads at most 10,485 bytes" in err
    assert "--local-workers" in err


def _labelled_csv(path: Path, missing_every: int = 0) -> Path:
    rows = [f"{i % 2 * 5 + i / 100},{'ab'[i % 2]},{'' if missing_every and i % missing_every == 0 else 'PQ'[i % 2]}"
            for i in range(40)]
    path.write_text("x,c,cls\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("option", ["--ignore", "--categorical"])
def test_label_also_given_as_another_role_is_named(tmp_path, capsys, option):
    """--ignore cls was 'unexpected error: KeyError' (exit 1); --categorical cls said cls does not exist."""
    path = _labelled_csv(tmp_path / "t.csv")
    code, _, err = run(["fit", path, "--lam", 5, "--label", "cls", option, "x,cls", "--no-progress"], capsys)
    assert code == 2 and "unexpected" not in err
    assert f"{option} names 'cls', the --label column (left out of the fit and used to score it)" in err
    assert f"remove it from {option}" in err


@pytest.mark.parametrize("backend", [[], ["--local-workers", 1]])
def test_label_column_with_missing_values_scores_the_labelled_rows(tmp_path, capsys, backend):
    """Rows without a label are left out of the scores, as on the app's Evaluate page, and counted."""
    if backend:
        pytest.importorskip("dask.dataframe")
    path = _labelled_csv(tmp_path / "t.csv", missing_every=4)
    out_dir = tmp_path / "out"
    code, _, err = run(["fit", path, "--lam", 5, "--n-init", 1, "--label", "cls", "--no-progress", "--out", out_dir,
                        *backend], capsys)
    assert code == 0, err
    labels, _, summary = read_outputs(out_dir)
    assert len(labels) == 40
    keep = np.arange(40) % 4 != 0
    classes = np.array(list("PQ"))[np.arange(40) % 2]
    assert summary["metrics"] == pytest.approx(metrics.evaluate(classes[keep], labels["cluster"].to_numpy()[keep]))
    assert summary["dataset"]["labelled_rows"] == 30
    assert "10 of 40 rows have no value in the label column 'cls' and are left out of the scores" in err


def test_dask_csv_glob_with_columns_in_another_order_names_the_file(tmp_path, capsys):
    """A later file with the same columns in another order was exit 1 with a worker traceback."""
    pytest.importorskip("dask.dataframe")
    same, other = tmp_path / "same", tmp_path / "other"
    for folder in (same, other):
        folder.mkdir()
        (folder / "a.csv").write_text("x,c\n" + "".join(f"{i % 5}.5,{'ab'[i % 2]}\n" for i in range(50)))
    (same / "b.csv").write_text("c,x\n" + "".join(f"{'ab'[i % 2]},{i % 5}.5\n" for i in range(50)))
    (other / "c.csv").write_text("x,d\n1,2\n")
    code, out, err = run(["fit", str(same / "*.csv"), "--lam", 5, "--local-workers", 1, "--no-progress"], capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert (f"{str(same / 'b.csv')!r} has the columns of {str(same / 'a.csv')!r} in another order ('c', 'x' "
            f"instead of 'x', 'c')") in err
    code, _, err = run(["fit", str(other / "*.csv"), "--lam", 5, "--local-workers", 1, "--no-progress"], capsys)
    assert code == 2
    assert f"{str(other / 'c.csv')!r} has other columns than {str(other / 'a.csv')!r}: 'd' instead of 'c'" in err


def test_dask_corrupted_parquet_page_is_named(tmp_path, capsys):
    """A damaged page header (the footer reads fine) was 'unexpected error: OSError: Couldn't deserialize thrift'."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("dask.dataframe")
    folder = tmp_path / "parts"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        part = pd.DataFrame({"x": rng.normal(5.0 * (np.arange(100) % 2)), "c": ["a", "b"] * 50})
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{i}.parquet")
    damaged = folder / "part-1.parquet"
    content = bytearray(damaged.read_bytes())
    content[4:40] = b"\xff" * 36  # the first page header, right after the magic bytes
    damaged.write_bytes(bytes(content))
    code, out, err = run(["fit", folder, "--lam", 5, "--local-workers", 1, "--no-progress"], capsys)
    assert code == 2 and out == "" and "unexpected" not in err
    assert f"cannot read {str(damaged)!r}: it is not a readable Parquet file (damaged" in err
    assert "replace or remove it" in err


def test_dask_memory_limit_below_one_partition_is_refused_with_the_numbers(tmp_path, capsys):
    """--memory-limit 10MB restarted the workers forever."""
    pytest.importorskip("distributed")
    path = tmp_path / "t.csv"
    path.write_text("x,c\n" + "".join(f"{i % 5}.5,{'ab'[i % 2]}\n" for i in range(2000)))
    code, out, err = run(["fit", path, "--lam", 5, "--local-workers", 1, "--memory-limit", "10MB", "--no-progress"],
                         capsys)
    assert code == 2 and out == ""
    assert "--memory-limit 10MB (10,000,000 bytes) is less than one worker needs" in err
    need = int(err.split("needs: about ")[1].split(" bytes")[0].replace(",", ""))
    assert need > 10_000_000 and f"Give at least {-(-need // 10**6):,}MB" in err


# ----------------------------------------------------------------------
# craft fit --save-model, craft predict


def _far_wine(path: Path) -> pd.DataFrame:
    """Wine with rows 0-4 and 7 moved far from every cluster (every column at ±1000)."""
    X, _ = datasets.load("wine")
    X = X.copy()
    X.iloc[:5, :] = 1000.0
    X.iloc[7, :] = -1000.0
    X.to_csv(path, index=False)
    return X


def test_predict_writes_the_loaded_models_assignment(tmp_path, capsys):
    import craft

    code, _, err = run(["fit", "wine", "--k", 3, "--n-init", 1, "--seed", 0, "--no-progress", "--quiet",
                        "--save-model", tmp_path / "models" / "wine.craft"], capsys)
    assert code == 0, err
    X = _far_wine(tmp_path / "new.csv")
    code, out, err = run(["predict", tmp_path / "models" / "wine.craft", tmp_path / "new.csv", "--out", tmp_path / "out"],
                         capsys)
    assert code == 0, err
    assert "178 rows scored against K=3 clusters; 6 fit no cluster" in out
    model = craft.load(tmp_path / "models" / "wine.craft")
    expected = model.assign(pd.read_csv(tmp_path / "new.csv"))
    assigned = pd.read_csv(tmp_path / "out" / "assignments.csv")
    assert list(assigned.columns) == ["row", *expected.columns]
    np.testing.assert_array_equal(assigned["row"], np.arange(178))
    # An empty unseen_columns cell reads back as missing.
    assigned["unseen_columns"] = assigned["unseen_columns"].fillna("").astype(expected["unseen_columns"].dtype)
    pd.testing.assert_frame_equal(assigned.drop(columns="row"), expected)
    outside = pd.read_csv(tmp_path / "out" / "no_cluster.csv")
    assert outside["row"].tolist() == [0, 1, 2, 3, 4, 7]
    pd.testing.assert_frame_equal(outside.drop(columns="row"), X.iloc[[0, 1, 2, 3, 4, 7]].reset_index(drop=True))


def test_predict_on_dask_writes_the_same_files(tmp_path, capsys):
    """--scheduler (a running cluster) and --local-workers (worker processes) write what the in-memory run writes."""
    distributed = pytest.importorskip("distributed")
    model, _ = library_fit("wine", k=3, n_init=1, random_state=0)
    model.save(tmp_path / "wine.craft")
    _far_wine(tmp_path / "new.csv")
    common = ["predict", tmp_path / "wine.craft", tmp_path / "new.csv", "--quiet"]
    assert run(common + ["--out", tmp_path / "memory"], capsys)[0] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                           dashboard_address=None)
    with cluster:
        # Small partitions: several pieces, some with rows that fit no cluster and some without.
        code, _, err = run(common + ["--scheduler", cluster.scheduler_address, "--partition-size", "4kB",
                                     "--out", tmp_path / "dask"], capsys)
    assert code == 0, err
    code, _, err = run(common + ["--local-workers", 1, "--partition-size", "4kB", "--out", tmp_path / "local"], capsys)
    assert code == 0, err
    for name in ("assignments.csv", "no_cluster.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes()
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "memory" / name).read_bytes()


def test_predict_refuses_a_bad_model_and_mismatched_columns(tmp_path, capsys):
    (tmp_path / "model.craft").write_bytes(b"not a model")
    X, _ = datasets.load("wine")
    X.drop(columns=["alcohol", "hue"]).assign(extra=1).to_csv(tmp_path / "new.csv", index=False)
    code, _, err = run(["predict", tmp_path / "model.craft", tmp_path / "new.csv", "--out", tmp_path / "out"], capsys)
    assert code == 2 and "is not a CRAFT model file" in err
    model, _ = library_fit("wine", k=3, n_init=1, random_state=0)
    model.save(tmp_path / "model.craft")
    code, _, err = run(["predict", tmp_path / "model.craft", tmp_path / "new.csv", "--out", tmp_path / "out"], capsys)
    assert code == 2
    assert "X lacks the fitted column(s) ['alcohol', 'hue']" in err and "['extra']" in err


# ----------------------------------------------------------------------
# Hostile inputs to craft predict (issue 31)


@pytest.fixture
def wine_model(tmp_path):
    model, _ = library_fit("wine", k=3, n_init=1, random_state=0)
    model.save(tmp_path / "wine.craft")
    return model, tmp_path / "wine.craft"


def test_predict_refuses_a_fifo_or_a_device_as_model_at_once(tmp_path, capsys, wine_model):
    """A FIFO as MODEL hung for ever and /dev/zero was read until MemoryError."""
    X, _ = datasets.load("wine")
    X.to_csv(tmp_path / "new.csv", index=False)
    fifo = tmp_path / "pipe.craft"
    os.mkfifo(fifo)
    link = tmp_path / "zero.craft"
    link.symlink_to("/dev/zero")
    for source in (fifo, link):
        code, out, err = run(["predict", source, tmp_path / "new.csv", "--out", tmp_path / "out"], capsys)
        assert code == 2 and out == "", err
        assert f"Cannot read the model file {str(source)!r}: it is not a regular file" in err
        assert len(err.strip().splitlines()) == 1


def test_predict_rows_keep_their_numbers_past_a_blank_record(tmp_path, capsys, wine_model):
    model, path = wine_model
    X, _ = datasets.load("wine")
    rows = X.iloc[:4].copy()
    rows.iloc[2] = 1e4  # far from every cluster
    text = rows.to_csv(index=False).splitlines()
    blank = "," * (X.shape[1] - 1)
    # Records: 0 = row 0, 1 = blank, 2 = row 1, 3 = blank, 4 = row 2 (far), 5 = row 3.
    (tmp_path / "gaps.csv").write_text("\n".join([text[0], text[1], blank, text[2], blank, text[3], text[4]]) + "\n")
    code, out, err = run(["predict", path, tmp_path / "gaps.csv", "--out", tmp_path / "out"], capsys)
    assert code == 0, err
    assigned = pd.read_csv(tmp_path / "out" / "assignments.csv")
    assert assigned["row"].tolist() == [0, 2, 4, 5]
    expected = model.assign(rows.reset_index(drop=True))
    assigned["unseen_columns"] = assigned["unseen_columns"].fillna("").astype(expected["unseen_columns"].dtype)
    pd.testing.assert_frame_equal(assigned.drop(columns="row"), expected)
    outside = pd.read_csv(tmp_path / "out" / "no_cluster.csv")
    assert outside["row"].tolist() == [4]


def test_predict_refuses_duplicated_column_names(tmp_path, capsys, wine_model):
    _, path = wine_model
    X, _ = datasets.load("wine")
    table = X.assign(extra=0.0)
    table.columns = [*X.columns, "alcohol"]
    table.to_csv(tmp_path / "twice.csv", index=False)
    code, out, err = run(["predict", path, tmp_path / "twice.csv", "--out", tmp_path / "out"], capsys)
    assert code == 2 and out == ""
    assert "names more than one column 'alcohol' (read as 'alcohol', 'alcohol.1')" in err
    assert not (tmp_path / "out").exists()


def test_outputs_never_overwrite_their_inputs(tmp_path, capsys, wine_model):
    _, path = wine_model
    X, _ = datasets.load("wine")
    (tmp_path / "out").mkdir()
    X.to_csv(tmp_path / "out" / "assignments.csv", index=False)
    before = (tmp_path / "out" / "assignments.csv").read_bytes()
    code, out, err = run(["predict", path, tmp_path / "out" / "assignments.csv", "--out", tmp_path / "out"], capsys)
    assert code == 2 and out == ""
    assert f"would overwrite the input {str(tmp_path / 'out' / 'assignments.csv')!r} with assignments.csv" in err
    assert (tmp_path / "out" / "assignments.csv").read_bytes() == before
    # The model file too, and craft fit's outputs.
    shutil.copy(path, tmp_path / "out" / "no_cluster.csv")
    code, _, err = run(["predict", tmp_path / "out" / "no_cluster.csv", "wine", "--out", tmp_path / "out"], capsys)
    assert code == 2 and "would overwrite the input" in err and "with no_cluster.csv" in err
    X.to_csv(tmp_path / "out" / "masks.csv", index=False)
    code, _, err = run(["fit", tmp_path / "out" / "masks.csv", "--k", 2, "--no-progress", "--out", tmp_path / "out"],
                       capsys)
    assert code == 2 and "would overwrite the input" in err
    code, _, err = run(["fit", tmp_path / "out" / "masks.csv", "--k", 2, "--no-progress", "--save-model",
                        tmp_path / "out" / "masks.csv"], capsys)
    assert code == 2 and "--save-model would overwrite the input" in err


def test_a_byte_corrupted_parquet_part_is_one_line_without_a_worker_traceback(tmp_path):
    """The footer is whole, a data page is not: the workers fail reading it, and their traceback stays hidden."""
    dd = pytest.importorskip("dask.dataframe")
    executable = shutil.which("craft", path=str(Path(sys.executable).parent))
    assert executable
    X, y = datasets.load("wine")
    dd.from_pandas(X.assign(cultivar=y), npartitions=3).to_parquet(tmp_path / "wine")
    part = sorted((tmp_path / "wine").glob("*.parquet"))[1]
    data = bytearray(part.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    middle = slice(8, len(data) - footer - 8)
    data[middle] = bytes(len(data[middle])).replace(b"\0", b"\xa5")
    part.write_bytes(bytes(data))
    completed = subprocess.run(
        [executable, "fit", str(tmp_path / "wine"), "--local-workers", "1", "--lam", "20", "--n-init", "1",
         "--no-progress"], capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith(f"craft: error: cannot read {str(part)!r}: it is not a readable Parquet file")
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr


def test_a_worker_lost_while_the_cluster_starts_is_retried_then_one_line(tmp_path, capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    started = []

    def failing(**kwargs):
        started.append(kwargs)
        raise RuntimeError("Nanny failed to start worker process")

    monkeypatch.setattr(distributed, "LocalCluster", failing)
    code, out, err = run(["fit", "wine", "--local-workers", 1, "--lam", 20, "--no-progress"], capsys)
    assert code == 2 and out == "" and len(started) == 2
    assert err.strip().splitlines() == [
        "craft: error: cannot start a local Dask cluster of 1 worker(s): a worker process failed while it started, 2 "
        "times (RuntimeError: Nanny failed to start worker process); check the machine's free memory and process "
        "limits, or use fewer --local-workers."
    ]
    # Lost once, then started: the fit goes on.
    real = distributed.deploy.local.LocalCluster

    def once(**kwargs):
        started.append(kwargs)
        if len(started) == 3:
            raise RuntimeError("Nanny failed to start worker process")
        return real(**{**kwargs, "processes": False})

    monkeypatch.setattr(distributed, "LocalCluster", once)
    code, out, err = run(["fit", "wine", "--local-workers", 1, "--lam", 20, "--n-init", 1, "--no-progress"], capsys)
    assert code == 0, err
    assert len(started) == 4 and out.startswith("K=")
