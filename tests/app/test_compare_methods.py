"""The app's Compare page's service (``explorer.services.compare_methods``): the frame its figure draws, and
issue 14's table of a 12,000-level column, where the methods that need a dense matrix are refused before
allocating it (the library's side of issue 14 is ``tests/library/test_many_levels.py``)."""

from __future__ import annotations

import numpy as np

from craft import plots
from explorer.services import DENSE_LIMIT_BYTES, FitParams, compare_methods, fit_schema, load_example, load_upload
from library_helpers import N_LEVELS, N_ROWS, many_levels_table, peak_bytes


def test_fig_compare_with_and_without_scores():
    data = load_example("fig1_binary", n_samples=60, seed=0)
    schema, _ = fit_schema(data, {}, data.label)
    frame = compare_methods(data.table, schema, FitParams(m=1 / 3, n_init=1), methods=("CRAFT", "DP-means"),
                            k=3, y=data.table[data.label])
    scored = plots.fig_compare(frame)
    assert [trace.name for trace in scored.data] == ["purity", "NMI", "ARI"]
    bare = plots.fig_compare(frame.assign(purity=np.nan, nmi=np.nan, ari=np.nan))
    assert [trace.name for trace in bare.data] == ["K"]


def test_compare_refuses_a_dense_matrix_beyond_the_limit_and_runs_k_means_sparse():
    many_levels = many_levels_table()
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
