"""Issue 14: a categorical column of very many levels must not make the app build rows x levels dense.

The reproducing input (``library_helpers.many_levels_table``): 30,000 rows with one 12,000-level
categorical column (a 0.6 MB CSV). A dense one-hot matrix of it is
30,000 x 12,000 x 8 bytes = 2.9 GB; the projection (Tune & see, Teach) keeps it sparse. The app's
Compare (k-means sparse, the methods that need it dense refused before allocating, with the size) is
tested in ``tests/app/test_compare_methods.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, plots
from library_helpers import N_LEVELS, N_ROWS, many_levels_table, peak_bytes


@pytest.fixture(scope="module")
def many_levels():
    return many_levels_table()


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
