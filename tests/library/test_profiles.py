"""Per-cluster profiles: hand-computed numbers, agreement with the fitted masks, words."""

import math

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, synthetic
from craft.profiles import cluster_profiles, cluster_summary, level_distribution, numeric_values


@pytest.fixture
def tiny():
    """Two obvious clusters: rows 0-2 and 3-5. 'a' and 'c' separate them, 'b' and 'd' are noise."""
    X = pd.DataFrame(
        {
            "a": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2],
            "b": [3.0, -3.0, 1.0, -1.0, 2.0, -2.0],
            "c": ["r", "r", "r", "g", "g", "g"],
            "d": ["x", "y", "x", "y", "x", "y"],
        }
    )
    model = CRAFT(m=0.5, k=2, n_init=2, random_state=0).fit(X)
    assert sorted(np.bincount(model.labels_).tolist()) == [3, 3]
    return X, model


def row(profiles, cluster, feature):
    found = profiles[(profiles.cluster == cluster) & (profiles.feature == feature)]
    assert len(found) == 1
    return found.iloc[0]


def test_numeric_profile_by_hand(tiny):
    X, model = tiny
    profiles = cluster_profiles(model)
    first = int(model.labels_[0])
    a = row(profiles, first, "a")
    assert a.kind == "numeric" and a.selected and a["rank"] == 1 and a["size"] == 3
    assert a["mean"] == pytest.approx(0.1)
    assert a["sd"] == pytest.approx(math.sqrt(0.02 / 3))
    assert a.overall_mean == pytest.approx(2.6)
    assert a.overall_sd == pytest.approx(math.sqrt(37.54 / 6))
    # the score is the within-cluster variance the rule ranks (standardized units)
    assert a.score == pytest.approx((0.02 / 3) / (37.54 / 6)) and a.criterion == a.score
    b = row(profiles, first, "b")
    assert not b.selected and b["rank"] == 2
    assert a.cut == b.cut == pytest.approx((a.score + b.score) / 2)
    assert a.reason.startswith("Selected: its variance 0.00107 (a share of the overall variance) is the smallest of 2 "
                               "numeric features, within the budget of 1; σ = 0.0816 in the cluster vs 2.5 overall")
    assert b.reason.startswith("Not selected:")
    assert "outside the budget of 1" in b.reason


def test_categorical_profile_by_hand(tiny):
    X, model = tiny
    profiles = cluster_profiles(model)
    first = int(model.labels_[0])
    c = row(profiles, first, "c")
    s = model.smoothing
    eta_k = (3 + s * 0.5) / (3 + s)  # smoothed share of 'r' in the cluster
    assert c.selected and c.top_level == "r"
    assert c.top_share == pytest.approx(1.0) and c.overall_share == pytest.approx(0.5)
    assert c.entropy == pytest.approx(0.0) and c.overall_entropy == pytest.approx(math.log(2))
    # G_d - G_kd over the cluster's 3 rows: 3 log 2 - 3 (-log eta_k)
    assert c.score == pytest.approx(3 * (math.log(2) + math.log(eta_k)))
    assert c.reason.startswith("Selected: the gain G_d − G_kd = 2.03 nats over its 3 rows is the largest of 2 "
                               "categorical features, within the budget of 1; 'r' is 100% of the cluster vs 50% overall; "
                               "entropy 0.00 vs 0.69 nats")
    d = row(profiles, first, "d")
    assert not d.selected and d.top_level == "x" and d.top_share == pytest.approx(2 / 3)


def test_profiles_agree_with_the_fitted_masks():
    X, _, _ = synthetic.mixed_planted(n_samples=200, n_clusters=3, n_numeric=5, n_categorical=5, random_state=3)
    model = CRAFT(m=0.4, k=3, n_init=2, random_state=1).fit(X)
    profiles = cluster_profiles(model)
    assert len(profiles) == model.n_clusters_ * X.shape[1]
    names = [str(c) for c in model.feature_names_in_]
    for k in range(model.n_clusters_):
        chosen = set(profiles[(profiles.cluster == k) & profiles.selected].feature)
        assert chosen == {names[j] for j in np.flatnonzero(model.feature_mask_[k])}
        # the fixed budget keeps the best-ranked features of each kind
        part = profiles[profiles.cluster == k]
        for kind, budget in (("numeric", 2), ("categorical", 2)):
            ranks = part[(part.kind == kind) & part.selected]["rank"]
            assert sorted(ranks) == list(range(1, budget + 1))
    assert (profiles["size"].groupby(profiles.cluster).first().to_numpy() == model.cluster_sizes_).all()


def test_approximate_budget_reasons_name_the_thresholds(tiny):
    X, _ = tiny
    model = CRAFT(m=0.5, k=2, budget="approximate", eps_c=0.5, eps_v=0.5, n_init=2, random_state=0).fit(X)
    profiles = cluster_profiles(model)
    first = int(model.labels_[0])
    c = row(profiles, first, "c")
    # the approximate budget compares the gain's share of G_d = 3 log 2 with eps_c
    assert c.criterion == pytest.approx(c.score / (3 * math.log(2)))
    assert c.selected == (c.criterion > 0.5) and c.cut == 0.5
    assert "above ε_c = 0.5" in c.reason
    d = row(profiles, first, "d")
    assert not d.selected and "not above ε_c = 0.5" in d.reason
    a = row(profiles, first, "a")
    assert a.selected and "below ε_v = 0.5" in a.reason


def test_level_distribution_and_numeric_values(tiny):
    X, model = tiny
    first = int(model.labels_[0])
    levels = level_distribution(model, first, "d")
    assert levels.set_index("level").loc["x", "cluster_share"] == pytest.approx(2 / 3)
    assert levels["overall_share"].tolist() == pytest.approx([0.5, 0.5])
    assert levels["cluster_count"].sum() == 3
    inside, everything = numeric_values(model, X, first, "a")
    assert sorted(inside.tolist()) == [0.0, 0.1, 0.2]
    assert everything.size == 6
    with pytest.raises(KeyError, match="'a' is not a categorical feature"):
        level_distribution(model, first, "a")


def test_missing_levels_are_a_level_of_their_own_when_imputed():
    X = pd.DataFrame({"c": ["a", None, "a", "b", "b", None], "x": [0.0, 0.1, 0.0, 4.0, 4.1, 4.0]})
    model = CRAFT(m=0.5, k=2, n_init=1, missing="impute", random_state=0).fit(X)
    levels = level_distribution(model, int(model.labels_[1]), "c")
    assert "(missing)" in levels["level"].tolist()
    assert levels["overall_share"].sum() == pytest.approx(1.0)


def test_marginalised_missing_cells_are_left_out_of_shares_and_means():
    X = pd.DataFrame({"c": ["a", None, "a", "b", "b", None], "x": [0.0, np.nan, 0.0, 4.0, 4.1, 4.0]})
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0).fit(X)
    cluster = int(model.labels_[1])
    levels = level_distribution(model, cluster, "c")
    assert levels["level"].tolist() == ["a", "b"]
    assert levels["overall_share"].tolist() == pytest.approx([0.5, 0.5])  # of the 4 observed cells
    assert levels["cluster_share"].sum() == pytest.approx(1.0)
    profiles = cluster_profiles(model).set_index(["cluster", "feature"])
    members = X[model.labels_ == cluster]
    assert profiles.loc[(cluster, "x"), "mean"] == pytest.approx(members["x"].mean())  # pandas skips the NaN
    assert profiles.loc[(cluster, "x"), "overall_mean"] == pytest.approx(X["x"].mean())


def test_cluster_summary_in_words(tiny):
    X, model = tiny
    profiles = cluster_profiles(model)
    first = int(model.labels_[0])
    assert cluster_summary(profiles, first) == f"Cluster {first} has 3 rows and selects 2 of 4 features: c, a."
    assert cluster_summary(profiles, 9) == "Cluster 9 does not exist."
