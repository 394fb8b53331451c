"""Issue 14: a categorical column of very many levels must not make the app build rows x levels dense.

The reproducing input, generated here: 30,000 rows with one 12,000-level
categorical column (a 0.6 MB CSV). A dense one-hot matrix of it is
30,000 x 12,000 x 8 bytes = 2.9 GB; the projection (Tune & see, Teach) and
k-means in Compare keep it sparse, and the methods that need it dense are
refused before allocating, with the size.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, plots
from explorer.services import DENSE_LIMIT_BYTES, FitParams, compare_methods, fit_schema, load_upload

N_ROWS, N_LEVELS = 30_000, 12_000


@pytest.fixture(scope="module")
def many_levels():
    rng = np.random.default_rng(0)
    group = rng.integers(3, size=N_ROWS)
    table = pd.DataFrame({
        "x": rng.normal(3.0 * group, 1.0),
        # Every level occurs; the first 3 are frequent and follow the groups.
        "code": np.where(rng.random(N_ROWS) < 0.6, group, rng.integers(N_LEVELS, size=N_ROWS)).astype(str),
    })
    table.loc[:N_LEVELS - 1, "code"] = np.arange(N_LEVELS).astype(str)
    assert table["code"].nunique() == N_LEVELS
    return table


def peak_bytes(function):
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_projection_memory_follows_the_cells_not_rows_times_levels(many_levels):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=3, n_init=1, categorical=["code"], random_state=0).fit(many_levels)
    frame, peak = peak_bytes(lambda: plots.projection_frame(model, many_levels, max_points=2000))
    dense = N_ROWS * (N_LEVELS + 1) * 8
    assert peak < dense / 20, f"peak {peak / 2**20:.0f} MiB"  # dense: 2.9 GB
    assert len(frame) == 2000 and np.isfinite(frame[["pc1", "pc2"]].to_numpy()).all()
    assert frame.attrs["n_total"] == N_ROWS and 0 < sum(frame.attrs["explained"]) <= 1


def test_projection_sparse_equals_the_dense_pca_on_small_data():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(1)
    table = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300), "c": rng.choice(list("abcde"), 300)})
    model = CRAFT(k=3, n_init=1, random_state=0).fit(table)
    frame = plots.projection_frame(model, table, max_points=300)
    data = model.encoder_.transform(table)
    dense = np.hstack([data.numeric, data.onehot().toarray()])
    reference = PCA(n_components=2).fit(dense)
    np.testing.assert_allclose(frame.attrs["explained"], reference.explained_variance_ratio_, rtol=1e-6)
    expected = reference.transform(dense[frame["row"].to_numpy()])
    # Components are defined up to their sign.
    for j, column in enumerate(["pc1", "pc2"]):
        sign = np.sign(np.dot(frame[column], expected[:, j]))
        np.testing.assert_allclose(sign * frame[column].to_numpy(), expected[:, j], atol=1e-6)


def test_compare_refuses_a_dense_matrix_beyond_the_limit_and_runs_k_means_sparse(many_levels):
    data = load_upload(many_levels.to_csv(index=False).encode(), "many_levels.csv")
    schema, _ = fit_schema(data, {"code": "categorical"}, None)
    dense = N_ROWS * (N_LEVELS + 1) * 8
    assert dense > DENSE_LIMIT_BYTES
    (frame, peak) = peak_bytes(lambda: compare_methods(
        data.table, schema, FitParams(n_init=1), methods=("DP-means", "DP-RF", "k-means (one-hot)"), k=3, seed=0))
    rows = frame.set_index("method")
    for method in ("DP-means", "DP-RF"):
        assert np.isnan(rows.loc[method, "K"])
        assert f"{method} needs a dense 30,000 x 12,001 matrix" in rows.loc[method, "note"]
        assert "2.7 GiB" in rows.loc[method, "note"]
    assert rows.loc["k-means (one-hot)", "K"] == 3
    assert peak < dense / 10, f"peak {peak / 2**20:.0f} MiB"
