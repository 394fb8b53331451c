"""Tests of craft.synthetic: layouts, dtypes, determinism and statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from craft.exceptions import CraftInputError
from craft.synthetic import (
    FIGURES,
    SYNTHETIC_DATASETS,
    fig1_binary,
    fig1_binary_modified,
    fig2_numeric,
    fig2_numeric_modified,
    fig3_categorical,
    fig3_numeric,
    mixed_planted,
)

BINARY = {"fig1_binary", "fig1_binary_modified", "fig3_categorical"}
NUMERIC = {"fig2_numeric", "fig2_numeric_modified", "fig3_numeric"}
SHAPES = {
    "fig1_binary": (300, 24, 3),
    "fig1_binary_modified": (300, 24, 3),
    "fig2_numeric": (300, 36, 3),
    "fig2_numeric_modified": (300, 36, 3),
    "fig3_categorical": (300, 30, 3),
    "fig3_numeric": (300, 30, 3),
    "mixed_planted": (600, 24, 4),
}


def features(mask_row: np.ndarray) -> list[int]:
    """1-based feature numbers of a mask row."""
    return (np.flatnonzero(mask_row) + 1).tolist()


def runs(mask_row: np.ndarray) -> int:
    """Number of contiguous blocks of True in a mask row."""
    padded = np.concatenate([[False], mask_row, [False]]).astype(int)
    return int((np.diff(padded) == 1).sum())


def as_binary(X: pd.DataFrame) -> np.ndarray:
    return (X.to_numpy(dtype=object) == "1").astype(int)


def span(first: int, last: int) -> list[int]:
    return list(range(first, last + 1))


# ----------------------------------------------------------------------------
# every generator
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SYNTHETIC_DATASETS))
def test_shapes_names_and_types(name):
    generator, description = SYNTHETIC_DATASETS[name]
    X, y, mask = generator(random_state=0)
    n, d, k = SHAPES[name]
    assert X.shape == (n, d)
    assert list(X.columns) == [f"f{j}" for j in range(1, d + 1)]
    assert y.dtype == np.int64 and y.shape == (n,)
    assert sorted(np.unique(y).tolist()) == list(range(k))
    assert mask.dtype == bool and mask.shape == (k, d)
    assert isinstance(description, str) and description
    assert not X.isna().any().any()
    if name in BINARY:
        for column in X.columns:
            assert isinstance(X[column].dtype, pd.CategoricalDtype)
            assert list(X[column].cat.categories) == ["0", "1"]
    if name in NUMERIC:
        assert (X.dtypes == np.float64).all()


@pytest.mark.parametrize("name", sorted(SYNTHETIC_DATASETS))
def test_deterministic_for_a_seed(name):
    generator = FIGURES[name]
    X1, y1, m1 = generator(random_state=7)
    X2, y2, m2 = generator(random_state=np.random.default_rng(7))
    X3, _, _ = generator(random_state=8)
    pd.testing.assert_frame_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_array_equal(m1, m2)
    assert not X1.equals(X3)


@pytest.mark.parametrize("name", sorted(SYNTHETIC_DATASETS))
def test_n_samples_scales_rows(name):
    generator = FIGURES[name]
    X_small, y_small, _ = generator(n_samples=60, random_state=0)
    X_big, y_big, _ = generator(random_state=0)
    assert X_small.shape == (60, X_big.shape[1])
    share_small = np.bincount(y_small) / 60
    share_big = np.bincount(y_big) / y_big.size
    np.testing.assert_allclose(share_small, share_big, atol=1 / 60)


def test_registry_is_consistent():
    assert set(FIGURES) == set(SYNTHETIC_DATASETS) == set(SHAPES)
    for name, (generator, _) in SYNTHETIC_DATASETS.items():
        assert FIGURES[name] is generator


def test_bad_random_state_and_sizes():
    with pytest.raises(CraftInputError, match="random_state"):
        fig1_binary(random_state="seed")
    with pytest.raises(CraftInputError, match="n_samples=2 is too small"):
        fig2_numeric(n_samples=2)
    with pytest.raises(CraftInputError, match="n_samples=0"):
        fig1_binary(n_samples=0)


# ----------------------------------------------------------------------------
# Figure 1
# ----------------------------------------------------------------------------
def test_fig1_layout_and_values():
    X, y, mask = fig1_binary(random_state=1)
    assert [features(row) for row in mask] == [span(1, 8), span(9, 16), span(17, 24)]
    np.testing.assert_array_equal(np.bincount(y), [100, 100, 100])
    values = as_binary(X)
    inside = mask[y]
    assert values[inside].min() == 1  # deterministic subspaces
    assert values[~inside].mean() == pytest.approx(0.1, abs=0.02)


def test_fig1_modified_layout():
    X, y, mask = fig1_binary_modified(random_state=1)
    assert mask.sum(axis=1).tolist() == [8, 8, 8]
    assert features(mask[0]) == span(1, 4) + span(17, 20)
    assert features(mask[1]) == span(6, 13)
    assert features(mask[2]) == span(11, 15) + span(21, 23)
    assert [runs(row) for row in mask] == [2, 1, 2]  # clusters 1 and 3 fragmented
    assert features(mask[1] & mask[2]) == [11, 12, 13]  # overlap of clusters 2 and 3
    assert not (mask[0] & mask[1]).any() and not (mask[0] & mask[2]).any()
    assert features(~mask.any(axis=0)) == [5, 16, 24]
    np.testing.assert_array_equal(np.bincount(y), [120, 105, 75])


def test_fig1_modified_values():
    X, y, mask = fig1_binary_modified(n_samples=3000, random_state=2)
    values = as_binary(X)
    inside = mask[y]
    assert values[inside].min() == 1
    assert values[:, 15].mean() == pytest.approx(0.5, abs=0.03)  # noisy f16
    background = ~inside
    background[:, 15] = False
    assert values[background].mean() == pytest.approx(0.1, abs=0.01)


# ----------------------------------------------------------------------------
# Figure 2
# ----------------------------------------------------------------------------
def test_fig2_default_layout_has_twelve_features_per_cluster():
    _, y, mask = fig2_numeric(random_state=0)
    assert [features(row) for row in mask] == [span(1, 12), span(13, 24), span(23, 34)]
    assert features(mask[1] & mask[2]) == [23, 24]
    assert not (mask[0] & mask[1]).any()
    assert features(~mask.any(axis=0)) == [35, 36]
    np.testing.assert_array_equal(np.bincount(y), [100, 100, 100])


def test_fig2_paper_layout_is_literal():
    _, _, mask = fig2_numeric(random_state=0, paper_layout=True)
    assert features(mask[2]) == span(22, 34)
    assert mask.sum(axis=1).tolist() == [12, 12, 13]
    assert features(mask[1] & mask[2]) == [22, 23, 24]


def test_fig2_statistics():
    X, y, mask = fig2_numeric(random_state=3)
    values = X.to_numpy()
    for k, mean in enumerate((1.0, 5.0, 10.0)):
        cells = values[np.ix_(y == k, mask[k])]
        assert cells.mean() == pytest.approx(mean, abs=0.3)
        assert cells.std() == pytest.approx(1.0, abs=0.1)
    outside = values[~mask[y]]
    assert outside.mean() == pytest.approx(0.0, abs=0.15)
    assert outside.std() == pytest.approx(3.0, abs=0.15)


def test_fig2_modified_layout():
    X, y, mask = fig2_numeric_modified(random_state=0)
    assert mask.sum(axis=1).tolist() == [12, 12, 12]
    assert features(mask[0]) == span(1, 12)
    assert features(mask[1]) == span(9, 14) + span(23, 28)
    assert features(mask[2]) == span(21, 32)
    assert runs(mask[1]) == 2  # non-contiguous
    first_part = np.zeros(36, dtype=bool)
    first_part[8:14] = True
    second_part = mask[1] & ~first_part
    # one part overlaps cluster 1 partially, the other is inside cluster 3
    overlap_1 = first_part & mask[0]
    assert overlap_1.any() and not (first_part <= mask[0]).all()
    assert (second_part <= mask[2]).all()
    assert not (mask[0] & mask[2]).any()
    assert (~mask.any(axis=0)).sum() == 10  # extraneous features
    values = X.to_numpy()
    cells = values[np.ix_(y == 1, mask[1])]
    assert cells.mean() == pytest.approx(5.0, abs=0.3)


# ----------------------------------------------------------------------------
# Figure 3
# ----------------------------------------------------------------------------
def test_fig3_categorical_layout():
    X, y, mask = fig3_categorical(random_state=0)
    assert mask.sum(axis=1).tolist() == [9, 16, 8]
    assert features(mask[0]) == span(1, 9)
    assert features(mask[1]) == span(12, 27)
    assert features(mask[2]) == span(7, 10) + span(24, 27)
    assert runs(mask[2]) == 2
    part_a = mask[2].copy()
    part_a[20:] = False
    part_b = mask[2] & ~part_a
    assert part_a.sum() == part_b.sum() == 4  # split evenly
    assert (part_a & mask[0]).any()  # overlaps cluster 1
    assert (part_b <= mask[1]).all()  # overlaps (inside) cluster 2
    assert features(~mask.any(axis=0)) == [11, 28, 29, 30]
    assert as_binary(X)[mask[y]].min() == 1


def test_fig3_categorical_noise_inside():
    X, y, mask = fig3_categorical(n_samples=3000, random_state=4, noise_inside=0.2)
    values = as_binary(X)
    assert values[mask[y]].mean() == pytest.approx(0.8, abs=0.01)
    assert values[~mask[y]].mean() == pytest.approx(0.1, abs=0.01)


@pytest.mark.parametrize("bad", [-0.1, 1.0, "0.1"])
def test_fig3_categorical_rejects_bad_noise(bad):
    with pytest.raises(CraftInputError, match="noise_inside"):
        fig3_categorical(noise_inside=bad)


def test_fig3_numeric_variances():
    X, y, mask = fig3_numeric(n_samples=3000, random_state=5)
    np.testing.assert_array_equal(mask, fig3_categorical(random_state=0)[2])
    values = X.to_numpy()
    assert values[~mask[y]].var() == pytest.approx(9.0, rel=0.05)
    for k in range(3):
        within = values[np.ix_(y == k, mask[k])].var(axis=0)
        np.testing.assert_allclose(within, 1.0, atol=0.2)
        outside = values[np.ix_(y == k, ~mask[k])].var(axis=0)
        assert outside.min() > 6.0


# ----------------------------------------------------------------------------
# mixed_planted
# ----------------------------------------------------------------------------
def test_mixed_planted_types_and_subspaces():
    X, y, mask = mixed_planted(random_state=0)
    assert (X.dtypes.iloc[:12] == np.float64).all()
    for column in X.columns[12:]:
        assert list(X[column].cat.categories) == ["c0", "c1", "c2", "c3"]
    assert mask[:, :12].sum(axis=1).tolist() == [6, 6, 6, 6]
    assert mask[:, 12:].sum(axis=1).tolist() == [6, 6, 6, 6]
    np.testing.assert_array_equal(np.bincount(y), [150, 150, 150, 150])
    assert not np.all(np.diff(y) >= 0)  # shuffled


def test_mixed_planted_statistics():
    X, y, mask = mixed_planted(n_samples=4000, random_state=1)
    numeric = X.iloc[:, :12].to_numpy()
    codes = np.column_stack([X[c].cat.codes.to_numpy() for c in X.columns[12:]])
    for k in range(4):
        rows = y == k
        cells = numeric[np.ix_(rows, mask[k, :12])]
        assert cells.mean() == pytest.approx(4.0 * (k + 1), abs=0.05)
        assert cells.std() == pytest.approx(0.5, abs=0.05)
        cat_features = np.flatnonzero(mask[k, 12:])
        hits = codes[np.ix_(rows, cat_features)] == (k + cat_features[None, :]) % 4
        assert hits.mean() == pytest.approx(0.9 + 0.1 / 4, abs=0.02)
    assert numeric[~mask[y, :12]].std() == pytest.approx(3.0, abs=0.1)
    outside_codes = codes[~mask[y, 12:]]
    np.testing.assert_allclose(np.bincount(outside_codes) / outside_codes.size, 0.25, atol=0.02)


def test_mixed_planted_weights_and_order():
    X, y, mask = mixed_planted(n_samples=1000, weights=[1, 2, 3, 4], shuffle=False, random_state=2)
    np.testing.assert_array_equal(np.bincount(y), [100, 200, 300, 400])
    assert np.all(np.diff(y) >= 0)


def test_mixed_planted_options():
    X, y, mask = mixed_planted(
        n_samples=50, n_clusters=2, n_numeric=0, n_categorical=5, n_levels=3,
        subspace_fraction=0.5, random_state=3,
    )
    assert X.shape == (50, 5)
    assert mask.sum(axis=1).tolist() == [3, 3]  # round(2.5) = 3, halves up
    X, _, mask = mixed_planted(n_samples=20, n_clusters=2, n_categorical=0, random_state=3)
    assert (X.dtypes == np.float64).all() and mask.shape == (2, 12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"weights": [1, 2]}, "weights has 2 entries but n_clusters=4"),
        ({"weights": [1, 2, 0, 1]}, "positive finite"),
        ({"n_samples": 3}, "n_samples=3 is too small"),
        ({"subspace_fraction": 0.0}, "subspace_fraction"),
        ({"subspace_fraction": 1.5}, "subspace_fraction"),
        ({"n_levels": 1}, "n_levels=1 must be an integer >= 2"),
        ({"n_numeric": 0, "n_categorical": 0}, "both 0"),
        ({"n_clusters": 0}, "n_clusters=0"),
    ],
)
def test_mixed_planted_errors(kwargs, message):
    with pytest.raises(CraftInputError, match=message):
        mixed_planted(**kwargs)
