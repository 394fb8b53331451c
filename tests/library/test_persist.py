"""Saved models (``craft.persist``) and scoring new rows (``CRAFT.assign``).

A model saved and loaded in a fresh interpreter predicts what the fitted one
predicts, in memory and for a Dask fit; files of another format version,
damaged files and files that would need pickle are refused with
``CraftInputError``; ``fits_no_cluster`` is the engine's own opening test.
"""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import craft
from craft import CRAFT, CraftInputError, _engine, datasets, persist, synthetic

# Loads a model and a Parquet table in a fresh interpreter and writes what the loaded model says of it.
CHILD = """
import sys, warnings
import numpy as np, pandas as pd
import craft
model = craft.load(sys.argv[1])
table = pd.read_parquet(sys.argv[2])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    np.save(sys.argv[3], model.predict(table))
    model.assign(table).to_parquet(sys.argv[4])
"""


def in_fresh_process(model_path: Path, table: pd.DataFrame, tmp_path: Path) -> tuple[np.ndarray, pd.DataFrame]:
    table.to_parquet(tmp_path / "table.parquet")
    subprocess.run(
        [sys.executable, "-c", CHILD, str(model_path), str(tmp_path / "table.parquet"), str(tmp_path / "labels.npy"),
         str(tmp_path / "assigned.parquet")],
        check=True, timeout=300, cwd=Path(__file__).resolve().parents[2],
    )
    return np.load(tmp_path / "labels.npy"), pd.read_parquet(tmp_path / "assigned.parquet")


def mixed_with_missing(seed: int = 0) -> pd.DataFrame:
    """Planted mixed data with missing numeric and categorical cells."""
    X, _, _ = synthetic.mixed_planted(n_samples=400, n_clusters=3, n_numeric=4, n_categorical=4, random_state=seed)
    X = X.astype({c: object for c in X.columns[4:]})
    rng = np.random.default_rng(seed)
    X.loc[rng.random(len(X)) < 0.05, "f1"] = np.nan
    X.loc[rng.random(len(X)) < 0.05, "f6"] = None
    return X


@pytest.mark.parametrize("missing", ["marginalise", "impute"])
@pytest.mark.slow  # a fresh Python process: in `make test`, not `make test-fast`
def test_saved_model_predicts_the_same_in_a_fresh_process(tmp_path, missing):
    X = mixed_with_missing()
    model = CRAFT(k=3, n_init=2, missing=missing, categorical=list(X.columns[4:]), random_state=0).fit(X)
    model.save(tmp_path / "model.craft")
    new_rows = mixed_with_missing(seed=1)
    labels, assigned = in_fresh_process(tmp_path / "model.craft", new_rows, tmp_path)
    np.testing.assert_array_equal(labels, model.predict(new_rows))
    pd.testing.assert_frame_equal(assigned, model.assign(new_rows))


def test_loaded_model_keeps_the_fitted_surface():
    X, _ = datasets.load("zoo")
    # Levels 10 and "10" are different levels (and True, 2.5): the file keeps their types.
    X = X.assign(mixed=np.array([10, "10", True, 2.5], dtype=object)[np.arange(len(X)) % 4])
    schema = datasets.dataset_schema("zoo")
    schema = craft.Schema(numeric=schema.numeric, categorical=(*schema.categorical, "mixed"), ignored=schema.ignored,
                          reasons={**schema.reasons, "mixed": "levels of four types"})
    model = CRAFT(k=5, n_init=2, categorical=schema, random_state=0).fit(X)
    buffer = io.BytesIO()
    model.save(buffer)
    loaded = craft.load(buffer.getvalue())
    assert type(loaded) is CRAFT and loaded.get_params() == model.get_params()
    assert loaded.schema_ == model.schema_ and loaded.options_ == model.options_
    np.testing.assert_array_equal(loaded.labels_, model.labels_)
    np.testing.assert_array_equal(loaded.feature_mask_, model.feature_mask_)
    pd.testing.assert_frame_equal(loaded.selection_frame(), model.selection_frame())
    assert loaded.objective_terms_ == model.objective_terms_ and loaded.lam_ == model.lam_
    assert [r.objective for r in loaded.history_] == [r.objective for r in model.history_]
    np.testing.assert_array_equal(loaded.cost_terms(X).total, model.cost_terms(X).total)
    assert [[(type(v), v) for v in levels] for levels in loaded.encoder_.levels_] == \
        [[(type(v), v) for v in levels] for levels in model.encoder_.levels_]
    np.testing.assert_array_equal(loaded.predict(X.assign(mixed="10")), model.predict(X.assign(mixed="10")))


@pytest.mark.slow  # a Dask cluster and a fresh Python process: in `make test`, not `make test-fast`
def test_dask_fit_saved_and_loaded_in_a_fresh_process_predicts_as_the_dask_model(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from craft.distributed import DaskCRAFT, assign_partitions

    X = mixed_with_missing()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with cluster, distributed.Client(cluster):
        frame = dd.from_pandas(X, npartitions=3)
        model = DaskCRAFT(k=3, n_init=1, categorical=list(X.columns[4:]), random_state=0).fit(frame)
        model.save(tmp_path / "model.craft")
        on_dask = model.predict(frame).compute().to_numpy()
        assigned_on_dask = model.assign(frame).compute()
        loaded = craft.load(tmp_path / "model.craft")
        assert loaded.labels_ is None
        pd.testing.assert_frame_equal(assign_partitions(loaded, frame).compute(), assigned_on_dask)
    labels, assigned = in_fresh_process(tmp_path / "model.craft", X, tmp_path)
    np.testing.assert_array_equal(labels, on_dask)
    pd.testing.assert_frame_equal(assigned, assigned_on_dask)


def saved(model=None) -> bytes:
    if model is None:
        X, _ = datasets.load("wine")
        model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    buffer = io.BytesIO()
    model.save(buffer)
    return buffer.getvalue()


def rewritten(data: bytes, **members: bytes) -> bytes:
    """The model file ``data`` with some members replaced.

    A new arrays.npz gets its checksum in model.json (a hand edit of both
    members): the checks after the checksum's are what is tested here.
    """
    if "arrays.npz" in members:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            raw = members.get("model.json", archive.read("model.json"))
        try:
            header = json.loads(raw)
        except ValueError:
            header = None
        if isinstance(header, dict) and "arrays_sha256" in header:
            header["arrays_sha256"] = hashlib.sha256(members["arrays.npz"]).hexdigest()
            members["model.json"] = json.dumps(header).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            target.writestr(name, members.get(name, source.read(name)))
    return out.getvalue()


def test_another_format_version_is_refused_naming_both():
    data = saved()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        header = json.loads(archive.read("model.json"))
    header["format_version"] = 99
    with pytest.raises(CraftInputError, match=r"format version 99 .*reads format version 1 only"):
        craft.load(rewritten(data, **{"model.json": json.dumps(header).encode()}))


@pytest.mark.parametrize("damage, message", [
    (lambda data: b"not a zip at all", "not a CRAFT model file"),
    (lambda data: data[: len(data) // 2], "not a CRAFT model file"),
    (lambda data: rewritten(data, **{"model.json": b"{broken"}), "damaged CRAFT model file"),
    (lambda data: rewritten(data, **{"model.json": b'{"format": "something else"}'}), "not a CRAFT model file"),
    (lambda data: rewritten(data, **{"arrays.npz": b"garbage"}), "damaged CRAFT model file"),
])
def test_damaged_or_foreign_files_are_refused(damage, message):
    with pytest.raises(CraftInputError, match=message):
        craft.load(damage(saved()))


def test_arrays_that_do_not_fit_together_are_refused():
    data = saved()
    with zipfile.ZipFile(io.BytesIO(data)) as archive, np.load(io.BytesIO(archive.read("arrays.npz"))) as arrays:
        contents = dict(arrays)
    contents["clusters.means"] = contents["clusters.means"][:, :-1]
    buffer = io.BytesIO()
    np.savez(buffer, **contents)
    with pytest.raises(CraftInputError, match=r"damaged CRAFT model file .*clusters.means has shape"):
        craft.load(rewritten(data, **{"arrays.npz": buffer.getvalue()}))


def test_nothing_is_unpickled(tmp_path):
    X, _ = datasets.load("wine")
    model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    data = saved(model)
    # What is written reads back without pickle.
    with zipfile.ZipFile(io.BytesIO(data)) as archive, \
            np.load(io.BytesIO(archive.read("arrays.npz")), allow_pickle=False) as arrays:
        assert all(arrays[name].dtype != object for name in arrays.files)
    # An object array (a pickle inside the .npy) is refused, never loaded.
    with zipfile.ZipFile(io.BytesIO(data)) as archive, np.load(io.BytesIO(archive.read("arrays.npz"))) as arrays:
        contents = dict(arrays)
    contents["labels"] = np.array([object()] * 3, dtype=object)
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=True, **contents)
    with pytest.raises(CraftInputError, match="cannot be read without pickle"):
        craft.load(rewritten(data, **{"arrays.npz": buffer.getvalue()}))
    # A pickled model is not a model file.
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(model))
    with pytest.raises(CraftInputError, match="not a CRAFT model file"):
        craft.load(tmp_path / "model.pkl")
    with pytest.raises(CraftInputError, match="No model file at"):
        craft.load(tmp_path / "absent.craft")


def test_unfitted_model_and_unsupported_levels_are_not_saved():
    with pytest.raises(CraftInputError, match="fitted"):
        persist.save(CRAFT(), io.BytesIO())
    table = pd.DataFrame({"x": np.arange(20.0), "when": [pd.Timedelta(days=i % 2) for i in range(20)]})
    model = CRAFT(k=2, n_init=1, categorical=["when"], random_state=0).fit(table)
    with pytest.raises(CraftInputError, match=r"'when' has a level of type Timedelta"):
        model.save(io.BytesIO())


# ----------------------------------------------------------------------
# assign


@pytest.fixture(scope="module")
def planted():
    X, y, _ = synthetic.mixed_planted(n_samples=600, n_clusters=4, random_state=0)
    model = CRAFT(k=4, n_init=2, random_state=0).fit(X)
    return X, model


def test_no_row_drawn_from_the_clusters_fits_no_cluster(planted):
    X, model = planted
    assigned = model.assign(X)
    assert list(assigned.columns) == ["cluster", "cost", "margin", "fits_no_cluster", "nothing_known", "unseen_cells",
                                      "unseen_columns"]
    assert assigned.index.equals(X.index)
    np.testing.assert_array_equal(assigned["cluster"], model.labels_)
    np.testing.assert_array_equal(assigned["cluster"], model.predict(X))
    assert not assigned["fits_no_cluster"].any()
    assert np.isfinite(assigned[["cost", "margin"]].to_numpy()).all() and (assigned["margin"] >= 0).all()


def test_rows_far_from_every_cluster_fit_no_cluster(planted):
    X, model = planted
    far = X.iloc[:10].copy()
    numeric = list(model.schema_.numeric)
    far[numeric] = np.repeat(1_000.0 * np.sign(np.arange(10) - 4.5)[:, None], len(numeric), axis=1)
    assigned = model.assign(far.set_axis(np.arange(100, 110)))
    assert assigned["fits_no_cluster"].all()
    assert assigned.index.tolist() == list(range(100, 110))
    threshold = model.options_.threshold(len(model.engine_features_))
    assert (assigned["cost"] > threshold).all()
    # The same rows among rows drawn from the clusters: only they are flagged.
    mixed = pd.concat([X.iloc[10:60], far], ignore_index=True)
    np.testing.assert_array_equal(model.assign(mixed)["fits_no_cluster"], np.arange(60) >= 50)


def test_cost_and_margin_are_read_from_the_cost_matrix(planted):
    X, model = planted
    assigned = model.assign(X.iloc[:50])
    costs = model.cost_terms(X.iloc[:50]).total
    ordered = np.sort(costs, axis=1)
    np.testing.assert_allclose(assigned["cost"], ordered[:, 0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(assigned["margin"], ordered[:, 1] - ordered[:, 0], rtol=1e-9, atol=1e-7)
    data = model.encoder_.transform(X.iloc[:50])
    flagged = _engine.opening_candidates(data, assigned["cost"].to_numpy(), model.options_.threshold(data.n_features))
    np.testing.assert_array_equal(np.flatnonzero(assigned["fits_no_cluster"]), flagged)


def test_one_cluster_has_margin_zero_and_no_nan():
    table = pd.DataFrame({"x": np.linspace(0.0, 1.0, 30), "c": ["a", "b", "c"] * 10})
    model = CRAFT(lam=1e6, n_init=1, random_state=0).fit(table)
    assert model.n_clusters_ == 1
    assigned = model.assign(pd.DataFrame({"x": [0.5, 1e4], "c": ["a", "z"]}))
    assert assigned["margin"].tolist() == [0.0, 0.0]
    assert np.isfinite(assigned["cost"]).all()


def test_a_row_without_observed_cells_fits_no_cluster_and_has_no_margin(planted):
    # It never opens a cluster (tests/library/test_rows_without_cells.py), but nothing places it either: it costs the same in
    # every cluster, so assign says it fits none and leaves its margin empty rather than call it a fit (issue 30).
    X, model = planted
    empty = X.iloc[:3].copy()
    empty[:] = np.nan
    assigned = model.assign(empty.astype({c: X[c].dtype for c in X.columns}))
    assert assigned["fits_no_cluster"].all() and assigned["nothing_known"].all() and assigned["margin"].isna().all()
    np.testing.assert_array_equal(assigned["cluster"], model.predict(empty.astype({c: X[c].dtype for c in X.columns})))


def test_unseen_levels_add_the_same_cost_to_every_cluster(planted):
    X, model = planted
    categorical = model.schema_.categorical[0]
    rows = X.iloc[:20].copy()
    unseen = rows.astype({categorical: object})
    unseen[categorical] = "never seen"
    missing = rows.astype({categorical: object})
    missing[categorical] = None
    with pytest.warns(UserWarning, match=rf"Column '{categorical}': 20 of 20 row\(s\) hold values not seen in fit"):
        scored = model.assign(unseen)
    # An unseen level is read as a missing (marginalised) cell: no cost to any cluster; only its flag differs.
    pd.testing.assert_frame_equal(scored.drop(columns=["unseen_cells", "unseen_columns"]),
                                  model.assign(missing).drop(columns=["unseen_cells", "unseen_columns"]))
    assert (scored["unseen_cells"] == 1).all() and (scored["unseen_columns"] == categorical).all()


def test_column_mismatch_names_every_column(planted):
    X, model = planted
    bad = X.drop(columns=["f1", "f2", "f20"]).rename(columns={"f3": "f3_renamed"})
    bad["f4"] = "text"
    bad["f5"] = pd.Timestamp("2024-01-01")
    with pytest.raises(CraftInputError) as raised:
        model.assign(bad)
    message = str(raised.value)
    assert "X lacks the fitted column(s) ['f1', 'f2', 'f3', 'f20']." in message
    assert "Column 'f4' is numeric in the schema but 600 value(s) are not numbers" in message
    assert "'f5'" in message and "datetime64" in message
    assert "the fit did not see (they would be left out): ['f3_renamed']" in message
    with pytest.raises(CraftInputError, match=r"X lacks the fitted column\(s\) \['f1'\]"):
        model.predict(X.drop(columns=["f1"]))
    # Extra columns alone are left out.
    pd.testing.assert_frame_equal(model.assign(X.assign(extra=1)), model.assign(X))


def test_members_beyond_free_memory_are_refused_before_unpacking(monkeypatch):
    data = saved()
    monkeypatch.setattr("craft.limits.available_memory", lambda: 1_000)
    with pytest.raises(CraftInputError, match=r"unpacks to [\d,]+ bytes, more than this machine loads \(500 bytes"):
        craft.load(data)


def test_numpy_parameters_are_saved_as_numbers():
    X, _ = datasets.load("wine")
    model = CRAFT(m=np.float64(0.5), k=np.int64(3), n_init=np.int64(1), random_state=np.int64(0)).fit(X)
    loaded = craft.load(saved(model))
    assert loaded.get_params() == model.get_params() and loaded.options_ == model.options_
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
