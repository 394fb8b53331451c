"""``craft.steer``: a change a person makes, refitted warm from the model on screen, and its price."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from craft import CRAFT, CraftInputError, _engine, datasets, synthetic, warm_refit
from craft.steer import steer


@pytest.fixture(scope="module")
def figure2():
    X, y, *_ = synthetic.fig2_numeric(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=1 / 3, k=3, random_state=0).fit(X)
    assert adjusted_rand_score(y, model.labels_) == 1.0
    return X, y, model


def test_merge_then_split_restores_the_planted_partition(figure2):
    X, y, model = figure2
    merged = steer(model, X, merge=(0, 1))
    assert merged.model.n_clusters_ == 2 and merged.undone is None
    assert adjusted_rand_score(y, merged.model.labels_) < 0.7
    # Pooling two planted clusters costs more than keeping them apart.
    assert merged.objective_change > 0
    pooled = int(np.argmax(merged.model.cluster_sizes_))
    split = steer(merged.model, X, split=pooled)
    assert split.model.n_clusters_ == 3 and split.undone is None
    assert adjusted_rand_score(y, split.model.labels_) == 1.0
    assert split.objective_change < 0


def test_the_price_is_against_the_unsteered_warm_fit(figure2):
    X, _, model = figure2
    columns = list(X.columns)
    outside = columns[int(np.flatnonzero(~model.feature_mask_[0])[0])]
    off = next(name for name in reversed(columns) if name != outside)
    steering = steer(model, X, pins={(0, outside): True, (None, off): False}, must_link=[(0, 1)])
    unsteered = warm_refit(model, X)
    assert steering.unsteered.objective_ == unsteered.objective_
    assert steering.objective_change == pytest.approx(steering.model.objective_ - unsteered.objective_)
    assert outside in steering.entered[0]
    assert set(steering.prices) == {f"pin {outside!r} on in cluster 0", f"pin {off!r} off in every cluster",
                                    "must-link (0, 1)"}
    # A pin that forces a worse feature into a mask has a positive price.
    assert steering.prices[f"pin {outside!r} on in cluster 0"] > 0
    assert "row(s) moved" in steering.summary


def test_rows_moved_are_those_whose_cluster_changed(figure2):
    X, _, model = figure2
    a, b = int(np.flatnonzero(model.labels_ == 0)[0]), int(np.flatnonzero(model.labels_ == 1)[0])
    steering = steer(model, X, must_link=[(a, b)])
    assert a in steering.rows_moved or b in steering.rows_moved
    assert steering.model.labels_[a] == steering.model.labels_[b]
    assert steering.rows_moved.size < 10


def test_a_merge_that_lambda_undoes_is_said():
    # Zoo's clusters at a small λ: pooling two far clusters leaves rows beyond λ + D F0, which reopen one.
    X, _ = datasets.load("zoo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=0.5, k=7, random_state=0).fit(X)
        undone = [steer(model, X, merge=(a, b)).undone for a in range(7) for b in range(a + 1, 7)]
    said = [text for text in undone if text]
    assert said, "no merge of Zoo's seven clusters was undone"
    assert all("not the 6 asked for" in text for text in said)


def test_bad_steering_is_refused(figure2):
    X, _, model = figure2
    cases: list[tuple[dict[str, Any], str]] = [
        ({"merge": (0, 0)}, "names one cluster twice"),
        ({"merge": (0, 5)}, "Cluster 5 does not exist"),
        ({"merge": 1}, "must be two cluster numbers"),
        ({"split": 9}, "Cluster 9 does not exist"),
        ({"merge": (0, 1), "split": 0}, "not both"),
        ({"merge": (0, 1), "pins": {(2, "f1"): True}}, "names cluster 2; the previous fit has clusters 0..1"),
    ]
    for params, message in cases:
        with pytest.raises(CraftInputError, match=message):
            steer(model, X, **params)
    with pytest.raises(CraftInputError, match="needs a fitted CRAFT"):
        steer(CRAFT(), X)


def test_the_cheapest_merge_pools_a_planted_cluster_cut_in_two(figure2):
    """Figure 2's three planted clusters with one cut in two halves at random: pooling the halves costs least,
    less than nothing (the saved cluster's price exceeds what the halves' own spreads save), and it is the change
    the objective itself shows."""
    X, y, model = figure2
    data = model._encoded(X)
    labels = np.asarray(model.labels_).copy()
    halves = np.flatnonzero(labels == 1)
    labels[np.random.default_rng(0).permutation(halves)[: halves.size // 2]] = 3
    stats = _engine.statistics(data, labels, 4)
    opts = dataclasses.replace(model._validated_options(), lam=model.lam_)
    a, b, change = _engine.cheapest_merge(data, stats, opts)
    assert (a, b) == (1, 3)
    assert change < 0

    def objective(statistics):
        return _engine.objective(data, _engine.clusters_from_statistics(data, statistics, opts), statistics, opts)[0]

    assert change == pytest.approx(objective(_engine.merged_statistics(stats, 1, 3)) - objective(stats), rel=1e-12)
    np.testing.assert_array_equal(_engine.merged_statistics(stats, 1, 3).counts, np.bincount(model.labels_))

