"""Pins (``CRAFT(pins=...)``): features a person fixes on or off, per cluster or for every cluster."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from craft import CRAFT, CraftInputError, datasets, synthetic, warm_refit
from craft._engine import budget_counts


@pytest.fixture(scope="module")
def figure1():
    X, *_ = synthetic.fig1_binary(random_state=0)
    return X


def _fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X)


def assert_pins_and_rule(model):
    """Every pin honoured; among the free features of each kind the fixed budget's rule (less the pinned-on) chooses."""
    mask, pins = model.feature_mask_, model.pins_
    assert mask[pins > 0].all() and not mask[pins < 0].any()
    selection = model.selection_
    used = [list(model.feature_names_in_).index(name) for name in model.engine_features_]
    n_numeric = len(model.schema_.numeric)
    keep = budget_counts(model.m, n_numeric, len(model.engine_features_) - n_numeric)
    for kind, columns in enumerate((slice(0, n_numeric), slice(n_numeric, None))):
        on = (pins[:, used][:, columns] > 0).sum(axis=1)
        free = pins[:, used][:, columns] == 0
        rank = selection.rank[:, columns]
        expected = free & (rank <= np.maximum(keep[kind], on)[:, None])
        np.testing.assert_array_equal(selection.selected[:, columns] & free, expected)


def test_pins_for_every_cluster_on_figure_1(figure1):
    columns = list(figure1.columns)
    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0, pins={(None, columns[0]): True, (None, columns[-1]): False}), figure1)
    assert model.feature_mask_[:, 0].all() and not model.feature_mask_[:, -1].any()
    assert (model.pins_[:, 0] == 1).all() and (model.pins_[:, -1] == -1).all()
    assert_pins_and_rule(model)
    # The planted blocks stay: each cluster keeps 7 of its own 8 features beside the pin.
    free = _fit(CRAFT(m=1 / 3, k=3, random_state=0), figure1)
    assert (model.feature_mask_ & free.feature_mask_).sum(axis=1).min() >= 7


def test_pins_on_one_cluster_of_a_warm_fit(figure1):
    columns = list(figure1.columns)
    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0), figure1)
    outside = int(np.flatnonzero(~model.feature_mask_[1])[0])
    inside = int(np.flatnonzero(model.feature_mask_[0])[0])
    refit = warm_refit(model, figure1, pins={(1, columns[outside]): True, (0, columns[inside]): False})
    assert refit.warm_started_
    assert refit.feature_mask_[1, outside] and not refit.feature_mask_[0, inside]
    assert refit.pins_[1, outside] == 1 and refit.pins_[0, inside] == -1
    assert (refit.pins_[2] == 0).all()
    assert_pins_and_rule(refit)


def test_pins_beyond_the_budget_are_all_selected(figure1):
    columns = list(figure1.columns)
    pins = {(None, name): True for name in columns[:10]}  # the budget is round(24 / 3) = 8
    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0, pins=pins), figure1)
    np.testing.assert_array_equal(model.feature_mask_, np.tile(np.arange(24) < 10, (model.n_clusters_, 1)))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), data=st.data())
def test_drawn_pins_are_honoured_on_mixed_data(seed, data):
    X, _ = datasets.load("credit-g")
    columns = [c for c in X.columns]
    chosen = data.draw(st.lists(st.sampled_from(columns), min_size=1, max_size=6, unique=True))
    pins = {(None, name): data.draw(st.booleans()) for name in chosen}
    budget = data.draw(st.sampled_from(["fixed", "approximate"]))
    model = _fit(CRAFT(m=0.4, k=3, random_state=seed, budget=budget, pins=pins), X)
    mask, pinned = model.feature_mask_, model.pins_
    assert mask[pinned > 0].all() and not mask[pinned < 0].any()
    if budget == "fixed":
        assert_pins_and_rule(model)


def test_contradictions_and_unknowns_are_refused(figure1):
    columns = list(figure1.columns)
    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0), figure1)
    cases = [
        ({(None, "nope"): True}, "names column 'nope', which is not a column"),
        ({(None, columns[0]): "yes"}, "must be True"),
        ({(7, columns[0]): True}, "names cluster 7; the previous fit has clusters 0..2"),
        ({(None, columns[0]): True, (1, columns[0]): False}, "pinned on in every cluster .* and the other way"),
        ({columns[0]: True}, "a pin's key is \\(cluster or None, column name\\)"),
    ]
    for pins, message in cases:
        with pytest.raises(CraftInputError, match=message):
            warm_refit(model, figure1, pins=pins)
    with pytest.raises(CraftInputError, match="need warm_start=True"):
        CRAFT(k=3, pins={(0, columns[0]): True}).fit(figure1)
    with pytest.raises(CraftInputError, match="pins=\\[1\\] is invalid"):
        CRAFT(pins=[1]).fit(figure1)


def test_pins_are_a_parameter_clone_keeps():
    pins = {(None, "a"): True}
    assert clone(CRAFT(pins=pins)).get_params()["pins"] == pins


def test_without_pins_nothing_changes(figure1):
    a = _fit(CRAFT(m=1 / 3, k=3, random_state=1), figure1)
    b = _fit(CRAFT(m=1 / 3, k=3, random_state=1, pins={}), figure1)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.objective_ == b.objective_ and not b.pins_.any()


def test_a_saved_steered_model_reloads_with_its_pins_and_links(figure1, tmp_path):
    import craft

    columns = list(figure1.columns)
    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0), figure1)
    steered = warm_refit(model, figure1, pins={(1, columns[0]): True, (None, columns[-1]): False},
                         must_link=[(0, 1)], cannot_link=[(2, 3)])
    steered.save(tmp_path / "steered.craft")
    back = craft.load(tmp_path / "steered.craft")
    np.testing.assert_array_equal(back.pins_, steered.pins_)
    assert back.pins == steered.pins and back.must_link == [(0, 1)] and back.cannot_link == [(2, 3)]
    assert back.options_ == steered.options_
    np.testing.assert_array_equal(back.predict(figure1), steered.predict(figure1))


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("params", "pins"), [[0, "f1", "yes"]], r"params.pins\[0\] is .*not \[cluster or null, column, true or false\]"),
        (("params", "pins"), {"f1": True}, "params.pins is .*not a list"),
        (("params", "must_link"), [[0, 1, 2]], "params.must_link is .*not a list of at most"),
        (("options", "pinned"), {"every": [2], "per_cluster": []}, "options.pinned is not"),
        (("options", "links"), {"units": [[0, 1]], "apart": [[0, 5]]}, "options.links is not"),
    ],
)
def test_damaged_steering_fields_are_refused(figure1, tmp_path, path, value, message):
    import json
    import zipfile

    import craft

    model = _fit(CRAFT(m=1 / 3, k=3, random_state=0, must_link=[(0, 1)]), figure1)
    model.save(tmp_path / "m.craft")
    with zipfile.ZipFile(tmp_path / "m.craft") as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = json.loads(members["model.json"])
    header[path[0]][path[1]] = value
    members["model.json"] = json.dumps(header).encode()
    with zipfile.ZipFile(tmp_path / "bad.craft", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(CraftInputError, match=message):
        craft.load(tmp_path / "bad.craft")
