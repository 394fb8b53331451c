"""Tests of craft.metrics: purity, geometric NMI, ARI, contingency."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from craft.exceptions import CraftInputError
from craft import metrics
from craft.metrics import ari, contingency, evaluate, nmi, purity

# y = two classes of 3; clusters {0,1}, {2,3}, {4,5}
Y_TINY = [0, 0, 0, 1, 1, 1]
L_TINY = [0, 0, 1, 1, 2, 2]


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# ----------------------------------------------------------------------------
# hand-computed values
# ----------------------------------------------------------------------------
def test_tiny_example_exact_values():
    # contingency rows (clusters): [2, 0], [1, 1], [0, 2]
    assert purity(Y_TINY, L_TINY) == pytest.approx(5 / 6, abs=1e-15)
    # MI = (2/3) ln 2, H(classes) = ln 2, H(clusters) = ln 3
    expected_nmi = (2 / 3) * math.log(2) / math.sqrt(math.log(2) * math.log(3))
    assert nmi(Y_TINY, L_TINY) == pytest.approx(expected_nmi, abs=1e-14)
    # pairs: sum C(n_ij,2) = 2, rows 3, columns 6, C(6,2) = 15
    assert ari(Y_TINY, L_TINY) == pytest.approx((2 - 1.2) / (4.5 - 1.2), abs=1e-14)


def test_contingency_is_clusters_by_classes():
    table = contingency(["a", "a", "a", "b", "b", "b"], ["z", "z", "y", "y", "x", "x"])
    assert list(table.index) == ["x", "y", "z"]
    assert list(table.columns) == ["a", "b"]
    assert table.to_numpy().tolist() == [[0, 2], [1, 1], [2, 0]]
    assert table.to_numpy().sum() == 6
    assert table.index.name == "cluster" and table.columns.name == "class"


def test_string_labels_give_same_values_as_ints():
    y_str = ["spam" if v else "ham" for v in Y_TINY]
    l_str = [f"c{v}" for v in L_TINY]
    assert purity(y_str, l_str) == purity(Y_TINY, L_TINY)
    assert nmi(y_str, l_str) == pytest.approx(nmi(Y_TINY, L_TINY), abs=1e-15)
    assert ari(y_str, l_str) == pytest.approx(ari(Y_TINY, L_TINY), abs=1e-15)


def test_mixed_type_labels_are_accepted():
    table = contingency([1, "a", 2, "a"], [0, 0, 1, 1])
    assert table.to_numpy().sum() == 4
    assert purity([1, "a", 2, "a"], [0, 0, 1, 1]) == 0.5


def test_evaluate_returns_all_criteria():
    result = evaluate(np.array(Y_TINY), pd.Series(L_TINY))
    assert set(result) == {"purity", "nmi", "ari", "n_clusters"}
    assert result["n_clusters"] == 3
    assert result["purity"] == pytest.approx(5 / 6)
    assert result["nmi"] == pytest.approx(nmi(Y_TINY, L_TINY))
    assert result["ari"] == pytest.approx(8 / 33)


def test_majority_class_purity_of_single_cluster():
    # the paper's collapsed DP-means: purity = majority-class share, NMI = 0
    y = ["a"] * 61 + ["b"] * 39
    assert purity(y, [0] * 100) == pytest.approx(0.61)
    assert nmi(y, [0] * 100) == 0.0


# ----------------------------------------------------------------------------
# degenerate cases of NMI
# ----------------------------------------------------------------------------
def test_nmi_both_single_block_is_one():
    assert nmi(["a", "a", "a"], [7, 7, 7]) == 1.0


def test_nmi_single_cluster_or_single_class_is_zero():
    assert nmi([0, 1, 0, 1], [0, 0, 0, 0]) == 0.0
    assert nmi([0, 0, 0, 0], [0, 1, 2, 3]) == 0.0


@pytest.mark.parametrize(
    "y, labels", [([0, 1, 0, 1], [0, 0, 0, 0]), ([0, 0, 0], [0, 1, 2]), ([5, 5], [1, 1])]
)
def test_degenerate_nmi_agrees_with_sklearn(y, labels):
    expected = normalized_mutual_info_score(y, labels, average_method="geometric")
    assert nmi(y, labels) == expected


def test_nmi_one_point():
    assert nmi([3], ["x"]) == 1.0
    assert purity([3], ["x"]) == 1.0


def test_nmi_all_singletons_against_two_classes_is_finite():
    value = nmi([0, 0, 1, 1], [0, 1, 2, 3])
    assert math.isfinite(value)
    assert value == pytest.approx(math.log(2) / math.sqrt(math.log(2) * math.log(4)))


# ----------------------------------------------------------------------------
# agreement with scikit-learn
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("n_classes, n_clusters", [(2, 2), (3, 7), (10, 4), (5, 1)])
def test_agrees_with_sklearn_on_random_labels(rng, n_classes, n_clusters):
    for _ in range(5):
        y = rng.integers(0, n_classes, size=200)
        labels = rng.integers(0, n_clusters, size=200)
        assert nmi(y, labels) == pytest.approx(
            normalized_mutual_info_score(y, labels, average_method="geometric"), abs=1e-12
        )
        assert ari(y, labels) == pytest.approx(adjusted_rand_score(y, labels), abs=1e-12)


def test_purity_matches_contingency_definition(rng):
    y = rng.integers(0, 4, size=300)
    labels = rng.integers(0, 6, size=300)
    expected = sum(
        np.bincount(y[labels == k]).max() for k in np.unique(labels)
    ) / y.size
    assert purity(y, labels) == pytest.approx(expected, abs=1e-15)


# ----------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------
labelings = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 6), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(labelings)
def test_ranges(pair):
    y, labels = pair
    for value in (purity(y, labels), nmi(y, labels)):
        assert 0.0 <= value <= 1.0
        assert not math.isnan(value)
    assert -1.0 <= ari(y, labels) <= 1.0


@settings(max_examples=60, deadline=None)
@given(labelings, st.permutations(list(range(7))))
def test_permutation_invariance_of_cluster_ids(pair, permutation):
    y, labels = pair
    renamed = [f"k{permutation[v]}" for v in labels]
    assert purity(y, renamed) == pytest.approx(purity(y, labels), abs=1e-15)
    assert nmi(y, renamed) == pytest.approx(nmi(y, labels), abs=1e-12)
    assert ari(y, renamed) == pytest.approx(ari(y, labels), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40))
def test_identical_partitions_score_one(y):
    relabelled = [f"cluster-{v}" for v in y]
    assert purity(y, relabelled) == 1.0
    assert nmi(y, relabelled) == pytest.approx(1.0, abs=1e-12)
    assert ari(y, relabelled) == pytest.approx(1.0, abs=1e-12)


# ----------------------------------------------------------------------------
# input errors
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("function", [purity, nmi, ari, contingency, evaluate])
def test_length_mismatch(function):
    with pytest.raises(CraftInputError, match="y_true has 3 values but labels has 2"):
        function([0, 1, 1], [0, 1])


def test_missing_values_in_y_are_counted():
    y = pd.Series(["a", None, "b", np.nan, "a"])
    with pytest.raises(CraftInputError, match="y_true has 2 missing values out of 5"):
        purity(y, [0, 0, 1, 1, 0])


def test_single_missing_value_message():
    with pytest.raises(CraftInputError, match="y_true has 1 missing value out of 3"):
        nmi([1.0, np.nan, 2.0], [0, 0, 1])


def test_missing_cluster_labels_are_refused():
    with pytest.raises(CraftInputError, match="labels has 1 missing value"):
        ari([0, 1, 1], [0, None, 1])


def test_empty_and_two_dimensional_inputs():
    with pytest.raises(CraftInputError, match="empty"):
        purity([], [])
    with pytest.raises(CraftInputError, match="one-dimensional"):
        nmi(np.zeros((3, 2)), [0, 1, 2])
    with pytest.raises(CraftInputError, match="hashable"):
        purity([[0], [1]], [0, 1])


def test_evaluate_counts_equals_evaluate_on_the_rows():
    """The scores of a partitioned table come from a summed contingency table: they must be the rows' scores."""
    rng = np.random.default_rng(7)
    for _ in range(100):
        n = int(rng.integers(2, 400))
        y = rng.integers(0, int(rng.integers(1, 5)), n)
        k = rng.integers(0, int(rng.integers(1, 6)), n)
        assert metrics.evaluate_counts(metrics.contingency(y, k).to_numpy()) == metrics.evaluate(y, k)
    with pytest.raises(CraftInputError, match="non-negative integers"):
        metrics.evaluate_counts([[1.5, 2.0]])
