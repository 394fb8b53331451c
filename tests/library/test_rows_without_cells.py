"""A row with no observed cell (every cell marginalised) never opens a cluster, in a pass or as a seed.

Its distance to every cluster is the feature-control term ``|v_k| F_Delta``
alone, which can exceed ``lambda + D F0`` (m = 0.05: F_Delta = 0.560 > F0 =
0.074); it carries no evidence for a cluster of its own, so it takes its
nearest cluster among those that exist at its turn (ties: lowest index).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, _engine
from craft.encoding import Encoder
from craft.priors import prior_terms
from library_helpers import engine_options

NAN = np.nan


def _table() -> pd.DataFrame:
    """Six rows over three numeric columns; rows 1 and 3 have no observed cell."""
    column = [0.0, NAN, 4.0, NAN, 8.0, 0.5]
    return pd.DataFrame({"x": column, "y": column, "z": column})


def _options(**changes) -> _engine.Options:
    return engine_options(prior_terms(0.05), 0.5, budget="approximate", eps_v=1e6, **changes)


def test_a_row_without_an_observed_cell_joins_its_nearest_cluster_and_opens_none():
    data = Encoder(["x", "y", "z"], [], standardize=False, missing="marginalise").fit_transform(_table())
    opts = _options()
    one, _ = _engine.fit_clusters(data, np.zeros(6, dtype=np.int64), 1, opts)
    # eps_v = 1e6 selects every feature: an empty row costs 3 F_Delta = 1.680 > lambda + 3 F0 = 0.722.
    assert one.weights.tolist() == [[1.0, 1.0, 1.0]]
    assert 3 * opts.terms.f_delta == pytest.approx(1.6796, abs=1e-4)
    assert opts.threshold(3) == pytest.approx(0.7219, abs=1e-4)
    labels, clusters = _engine.assignment_pass(data, one, opts, np.random.default_rng(0))
    # Rows 0, 2, 4 and 5 open clusters 1-4. Row 1 takes the nearest cluster existing at its turn
    # (old cluster 0 and cluster 1 select all three features: a tie, to the lower index); row 3 takes
    # cluster 2, opened by row 2 with one selected feature (the smallest |v_k| F_Delta at its turn).
    assert clusters.n_clusters == 5
    np.testing.assert_array_equal(clusters.weights.sum(axis=1), [3, 3, 1, 1, 1])
    np.testing.assert_array_equal(labels, [1, 0, 2, 2, 3, 4])


def test_a_row_without_an_observed_cell_is_never_a_seed():
    # Two rows with data among eight without: craft++ asked for four seeds finds only the rows with data.
    table = pd.DataFrame({"x": [NAN] * 4 + [0.0] + [NAN] * 4 + [9.0], "c": [None] * 4 + ["a"] + [None] * 4 + ["b"]})
    data = Encoder(["x"], ["c"], standardize=False, missing="marginalise").fit_transform(table)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        clusters = _engine.initial_clusters(data, engine_options(prior_terms(0.4), 1e-3, n_seeds=4), rng)
        # The first cluster is the paper's start at a uniformly drawn row; every seed after it is at a row with data.
        assert set(clusters.means[1:, 0]) <= {0.0, 9.0}, (seed, clusters.means[:, 0])


def _visited(monkeypatch) -> list:
    """Record the rows every opening walk visits (global indices), on either backend."""
    seen: list = []
    visit = _engine.OpeningWalk.visit

    def recording_visit(self, subset, rows, best_old):
        seen.extend(int(row) for row in rows)
        return visit(self, subset, rows, best_old)

    monkeypatch.setattr(_engine.OpeningWalk, "visit", recording_visit)
    return seen


def test_both_backends_walk_only_rows_with_an_observed_cell(monkeypatch):
    distributed = pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    from craft.distributed import DaskCRAFT

    rng = np.random.default_rng(5)
    table = pd.DataFrame({name: rng.normal(3.0 * rng.integers(3, size=90), 1.0) for name in "xyz"})
    table.iloc[rng.choice(90, 15, replace=False)] = NAN
    empty = set(np.flatnonzero(table.isna().all(axis=1).to_numpy()).tolist())
    # eps_v = 1e6 selects every feature: from the second pass on an empty row costs 3 F_Delta > lambda + 3 F0.
    params = dict(m=0.05, lam=0.5, budget="approximate", eps_v=1e6, n_init=1, max_iter=5, random_state=23)
    visited = _visited(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = CRAFT(**params).fit(table)
        assert visited and not empty & set(visited)
        visited.clear()
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
        with cluster, distributed.Client(cluster) as client:
            ddf = dd.concat([dd.from_pandas(table.iloc[a:b], npartitions=1) for a, b in ((0, 40), (40, 90))])
            theirs = DaskCRAFT(**params).fit(ddf, client=client)
            labels = theirs.labels_.compute().to_numpy()
    assert visited and not empty & set(visited)
    np.testing.assert_array_equal(labels, memory.labels_)
    assert [r.n_opened for r in theirs.history_] == [r.n_opened for r in memory.history_]
    assert theirs.objective_ == pytest.approx(memory.objective_, rel=1e-9)
