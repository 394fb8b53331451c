"""craft.stability: what the Evaluate page's "How much to trust this partition" reads (the page itself:
``tests/app/test_app_stability.py``).

The Jaccard matching is checked by hand and against a loop over Python sets;
the planted table of ``craft.synthetic.mixed_planted`` (four clusters 8 sd
apart on their subspaces) is the structure that must be stable and beat the
null of one cluster, the same table with every column shuffled the noise that
must not be stable, and a table drawn from one Gaussian (and a correlated blob)
what must not beat the null.
"""

from __future__ import annotations


import numpy as np
import pytest

from craft import CRAFT, CraftInputError, plots, synthetic
from craft import stability as trust
from craft.plots import stability as trust_plots

pytestmark = [pytest.mark.filterwarnings("ignore:k=.* clusters were not reachable:UserWarning"),
              pytest.mark.filterwarnings("ignore:CRAFT did not converge")]


@pytest.fixture(scope="module")
def planted():
    X, _ = synthetic.mixed_planted(n_samples=400, random_state=0)[:2]
    return X, CRAFT(k=4, n_init=2, random_state=0).fit(X)


@pytest.fixture(scope="module")
def noise(planted):
    X = trust.shuffled_columns(planted[0], np.random.default_rng(1))
    return X, CRAFT(k=4, n_init=2, random_state=0).fit(X)


def jaccard_by_sets(reference, rows, labels):
    """An independent clusterboot matching: sets of the original rows, a loop over cluster pairs."""
    first: dict[int, int] = {}
    for row, label in zip(rows, labels, strict=True):
        first.setdefault(int(row), int(label))
    best = []
    for cluster in range(max(reference) + 1):
        a = {row for row in first if reference[row] == cluster}
        scores = [len(a & b) / len(a | b) for b in
                  ({row for row, lab in first.items() if lab == other} for other in set(first.values()))]
        best.append(max(scores) if a else 0.0)
    return np.array(best)


def test_jaccard_by_hand():
    # Clusters {0, 1} and {2, 3}; the resample holds rows 0, 1, 2, 3 (3 twice) and puts 0 alone, 1-3 together.
    jaccard, match, present = trust.best_match_jaccard([0, 0, 1, 1], [0, 1, 2, 3, 3], [0, 1, 1, 1, 1])
    assert jaccard.tolist() == [0.5, pytest.approx(2 / 3)]  # {0,1} vs {0} or {1,2,3}: 1/2 and 1/4; {2,3} vs {1,2,3}: 2/3
    assert match.tolist() == [0, 1] and present.tolist() == [True, True]
    # A cluster without a row in the resample is absent, with Jaccard 0 and no match.
    jaccard, match, present = trust.best_match_jaccard([0, 0, 1, 1], [0, 1], [0, 0], 2, 1)
    assert jaccard.tolist() == [1.0, 0.0] and match.tolist() == [0, -1] and present.tolist() == [True, False]


def test_jaccard_agrees_with_a_loop_over_sets():
    rng = np.random.default_rng(0)
    for _ in range(20):
        reference = rng.integers(0, 5, size=60)
        reference[:5] = np.arange(5)
        rows = np.sort(rng.integers(0, 60, size=60))
        labels = rng.integers(0, 4, size=60)
        first = np.unique(rows, return_index=True)[1]
        labels = labels[np.searchsorted(rows[first], rows)]  # a repeated row keeps its first copy's cluster
        jaccard, _, present = trust.best_match_jaccard(reference, rows, labels, 5, 4)
        np.testing.assert_allclose(jaccard, jaccard_by_sets(reference.tolist(), rows, labels))


def test_a_planted_table_is_stable_and_the_same_table_shuffled_is_not(planted, noise):
    result = trust.bootstrap_stability(planted[1], planted[0], n_resamples=6, n_init=2, random_state=0)
    assert result.mean_jaccard.min() > 0.9 and not result.unstable.any()
    assert set(result.resample_k.tolist()) == {4}
    # The features the fit selects stay selected in the matched refit clusters.
    frequency = result.feature_frequency.to_numpy()
    assert frequency[planted[1].feature_mask_].mean() > 0.9
    shuffled = trust.bootstrap_stability(noise[1], noise[0], n_resamples=6, n_init=2, random_state=0)
    assert shuffled.mean_jaccard.max() < 0.6 and shuffled.unstable.all()
    assert (shuffled.dissolved > 0).all()
    assert "unstable" in shuffled.sentence(0) and "stable" in result.sentence(0)


def test_subsamples_hold_a_fraction_of_the_rows_and_results_repeat_for_a_seed(planted):
    X, model = planted
    seen = []
    one = trust.bootstrap_stability(model, X, n_resamples=3, method="subsample", fraction=0.5, n_init=1,
                                    random_state=3, callback=lambda share, step: seen.append(share))
    again = trust.bootstrap_stability(model, X, n_resamples=3, method="subsample", fraction=0.5, n_init=1,
                                      random_state=3)
    for name in ("jaccard", "present", "match", "selected_in_match", "resample_k"):
        np.testing.assert_array_equal(getattr(one, name), getattr(again, name))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)


def test_a_callback_stops_the_run(planted):
    X, model = planted
    calls = []

    def stop_at_the_second_refit(share, step):
        calls.append(step)
        return share < 0.5

    with pytest.raises(trust.Stopped):
        trust.bootstrap_stability(model, X, n_resamples=2, n_init=1, random_state=0, callback=stop_at_the_second_refit)
    assert calls[-1] == "refit 2 of 2"

    def raises(share, step):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trust.permutation_null(model, X, n_permutations=2, callback=raises)


@pytest.mark.slow  # 9 to 19 refits of null tables per call: in `make test`, not `make test-fast`
def test_the_permutation_null_separates_structure_from_noise(planted, noise):
    real = trust.permutation_null(planted[1], planted[0], n_permutations=9, n_init=2, random_state=0)
    assert real.p_value == pytest.approx(0.1) and real.z_score < -10 and real.gain_per_row > 1
    assert real.observed_k == 4 and set(real.null_k.tolist()) == {4}
    assert "more structure than one cluster" in real.sentence()
    # Every column shuffled is not "no clusters" here: each numeric column alone holds the planted groups 8 sd
    # apart, which one Gaussian has not. A table drawn with no clusters (one Gaussian, independent categories) is.
    shuffled = trust.permutation_null(noise[1], noise[0], n_permutations=9, n_init=2, random_state=0)
    assert shuffled.p_value == pytest.approx(0.1)
    X = trust.one_cluster_reference(planted[0], list(planted[1].schema_.numeric), np.random.default_rng(1))
    fake = trust.permutation_null(CRAFT(k=4, n_init=2, random_state=0).fit(X), X, n_permutations=9, n_init=2,
                                  random_state=0)
    assert fake.p_value > real.p_value and abs(fake.z_score) < 3  # some reference table fits as well
    assert "not clearly more structured than one cluster" in fake.sentence()


def correlated_blob(seed=0):
    """One Gaussian blob, 300 x 6, every pair of columns correlated 0.9: no clusters at all (issue 30)."""
    import pandas as pd

    covariance = np.full((6, 6), 0.9) + 0.1 * np.eye(6)
    values = np.random.default_rng(seed).multivariate_normal(np.zeros(6), covariance, size=300)
    return pd.DataFrame(values, columns=[f"x{j}" for j in range(6)])


@pytest.mark.parametrize("params", [{"k": 3}, {}])
@pytest.mark.slow  # 9 to 19 refits of null tables per call: in `make test`, not `make test-fast`
def test_one_correlated_blob_is_not_called_clustered(params):
    X = correlated_blob()
    model = CRAFT(random_state=0, **params).fit(X)
    result = trust.permutation_null(model, X, n_permutations=19, random_state=0)
    assert result.p_value > 0.2 and "not clearly more structured than one cluster" in result.sentence()


@pytest.mark.slow  # 9 to 19 refits of null tables per call: in `make test`, not `make test-fast`
def test_figure_2s_planted_clusters_are_called_clustered():
    X, _, _ = synthetic.fig2_numeric(random_state=0)
    model = CRAFT(m=1 / 3, k=3, random_state=0).fit(X)
    result = trust.permutation_null(model, X, n_permutations=19, random_state=0)
    assert result.p_value == pytest.approx(0.05) and result.z_score < -10
    assert result.sentence().startswith("The data has more structure than one cluster")


def test_the_reference_keeps_the_numeric_columns_means_covariances_and_missing_cells():
    X = correlated_blob()
    X["c"] = np.where(X["x0"] > 0, "high", "low")
    reference = trust.one_cluster_reference(X, [f"x{j}" for j in range(6)], np.random.default_rng(0))
    numeric = [f"x{j}" for j in range(6)]
    np.testing.assert_allclose(reference[numeric].mean(), X[numeric].mean(), atol=1e-12)
    np.testing.assert_allclose(reference[numeric].cov(), X[numeric].cov(), atol=1e-10)
    assert sorted(reference["c"]) == sorted(X["c"])
    X.iloc[:30, 1] = np.nan
    reference = trust.one_cluster_reference(X, numeric, np.random.default_rng(0))
    np.testing.assert_array_equal(reference.isna().to_numpy(), X.isna().to_numpy())


def test_k_evidence_and_the_cost_silhouette(planted):
    X, model = planted
    table = trust.k_evidence({**model.get_params(), "n_init": 2}, X, [3, 4], n_resamples=3, random_state=0)
    assert table["k"].tolist() == [3, 4] and table["K"].tolist() == [3, 4]
    assert table.loc[1, "mean_jaccard"] > 0.8 and table.loc[1, "silhouette"] > table.loc[0, "silhouette"]
    assert (table["data_cost"].diff().dropna() < 0).all()
    # The silhouette against a loop: a row's data cost to its own cluster and to the nearest other one.
    terms = model.cost_terms(X)
    cost = terms.numeric + terms.categorical_selected + terms.categorical_global
    expected = []
    for row, own in enumerate(model.labels_):
        a = cost[row, own]
        b = min(cost[row, k] for k in range(model.n_clusters_) if k != own)
        expected.append((b - a) / max(a, b))
    np.testing.assert_allclose(trust.cost_silhouette(model, X), expected)
    assert table.loc[1, "silhouette"] == pytest.approx(np.mean(expected))


def test_bad_input_is_named(planted):
    X, model = planted
    with pytest.raises(CraftInputError, match="not fitted"):
        trust.bootstrap_stability(CRAFT(), X)
    with pytest.raises(CraftInputError, match="399 rows but the model was fitted on 400"):
        trust.bootstrap_stability(model, X.iloc[1:])
    with pytest.raises(CraftInputError, match="n_resamples=0"):
        trust.bootstrap_stability(model, X, n_resamples=0)
    with pytest.raises(CraftInputError, match="method='jackknife'"):
        trust.bootstrap_stability(model, X, method="jackknife")
    with pytest.raises(CraftInputError, match="fraction=1.5"):
        trust.bootstrap_stability(model, X, method="subsample", fraction=1.5)


def test_the_frequency_heatmap_is_drawn_beside_the_mask_in_its_order(planted):
    X, model = planted
    result = trust.bootstrap_stability(model, X, n_resamples=2, n_init=1, random_state=0)
    mask_trace = plots.fig_feature_masks(model).data[0]
    left, right = trust_plots.fig_selection_frequency(model, result).data[:2]
    assert list(left.y) == list(mask_trace.y) == list(right.y) and list(left.x) == list(mask_trace.x) == list(right.x)
    np.testing.assert_array_equal(np.asarray(left.z), np.asarray(mask_trace.z))
    frequency = result.feature_frequency
    for i, label in enumerate(right.y):
        cluster = int(label.split()[1])
        np.testing.assert_allclose(right.z[i], frequency.loc[cluster, list(right.x)].to_numpy())
    bars = trust_plots.fig_jaccard(result).data[0]
    np.testing.assert_allclose(bars.y, result.mean_jaccard)


# ---------------------------------------------------------------------------
# clusterboot's definitions (issue 30, item 2)


def _stability(jaccard, match, selected, present=None):
    jaccard = np.asarray(jaccard, dtype=float)
    present = jaccard > 0 if present is None else np.asarray(present)
    selected = np.asarray(selected, dtype=bool)
    return trust.Stability("bootstrap", 1.0, "k = 2", jaccard, present, np.asarray(match), selected,
                           np.full(jaccard.shape[0], 2), [f"f{j}" for j in range(selected.shape[2])],
                           np.array([5, 5]))


def test_a_bootstrap_refits_each_drawn_row_once(planted, monkeypatch):
    X, model = planted
    tables = []
    from craft.stability import _bootstrap

    original = _bootstrap._refit

    def recording(model, table, seed, n_init, report):
        tables.append(table)
        return original(model, table, seed, n_init, report)

    monkeypatch.setattr(_bootstrap, "_refit", recording)
    trust.bootstrap_stability(model, X, n_resamples=2, n_init=1, random_state=0)
    assert len(tables) == 2  # one refit per resample, each seen here
    for table in tables:
        # About 63 % of N distinct rows, none twice (clusterboot removes the duplicated draws).
        assert table.index.is_unique and 0.55 * len(X) < len(table) < 0.7 * len(X)


def test_dissolved_counts_a_jaccard_of_exactly_one_half():
    result = _stability([[0.5, 1.0], [0.8, 1.0]], [[0, 1], [0, 1]], np.zeros((2, 2, 1)))
    assert result.dissolved.tolist() == [1, 0]


def test_feature_frequency_counts_only_one_to_one_matches_of_at_least_one_half():
    # Resample 0: cluster 0 matched (0.9) to refit 0; cluster 1's best match (0.3) is also refit 0, which selects f0.
    # Resample 1: both clusters' best match is refit 1 at 0.5: not one-to-one, neither counts.
    # Resample 2: cluster 1 matched one-to-one (0.7) to refit 1, which does not select f0.
    selected = np.zeros((3, 2, 1), dtype=bool)
    selected[0, :, 0] = True  # refit 0 selects f0: seen by both clusters in resample 0
    selected[1, :, 0] = True
    result = _stability([[0.9, 0.3], [0.5, 0.5], [0.8, 0.7]], [[0, 0], [1, 1], [0, 1]], selected)
    assert result.matched.tolist() == [[True, False], [False, False], [True, True]]
    assert result.n_matched.tolist() == [2, 1]
    assert result.feature_frequency["f0"].tolist() == [0.5, 0.0]
    assert "1 refits matched it one-to-one" in result.sentence(1)
    assert result.frame()["matched"].tolist() == [2, 1]


def test_a_two_row_table_is_tested_only_by_resamples_holding_both_rows():
    import pandas as pd

    X = pd.DataFrame({"a": [0.0, 10.0], "c": ["x", "y"]})
    model = CRAFT(lam=0.1, random_state=0).fit(X)
    assert model.n_clusters_ == 2
    result = trust.bootstrap_stability(model, X, n_resamples=10, random_state=0)
    # A resample of one distinct row matches its cluster perfectly whatever the refit does: it tests nothing.
    both = result.present.all(axis=1)
    assert (result.present.any(axis=1) == both).all() and 0 < both.sum() < 10
    assert (result.resample_k[~both] == 0).all()  # not refitted
    np.testing.assert_allclose(result.mean_jaccard, result.jaccard[both].mean(axis=0))
    stable = int((~result.unstable).sum())
    assert stable <= result.resample_k[both].max()
    assert "tested no cluster" in result.summary()


def test_seed_refits_keep_every_row_and_only_change_the_seed():
    """What-if's mask stability is bootstrap_stability(method="seed") (issue 33: one routine, one figure): every
    refit is on all the rows, so every cluster is tested in every refit; a planted table's masks come back whole."""
    X, _ = synthetic.fig2_numeric(n_samples=90, random_state=0)[:2]
    model = CRAFT(m=1 / 3, k=3, n_init=5, random_state=0).fit(X)
    result = trust.bootstrap_stability(model, X, n_resamples=4, method="seed", random_state=0)
    assert result.method == "seed" and result.fraction == 1.0 and result.present.all()
    # Five runs per refit find the planted partition whatever the seed: every cluster matched in all 4 refits.
    assert result.resample_k.tolist() == [3, 3, 3, 3] and result.mean_jaccard.tolist() == [1.0, 1.0, 1.0]
    # Twelve planted features per cluster, selected by every refit's matched cluster.
    np.testing.assert_array_equal(result.feature_frequency.to_numpy(), model.feature_mask_.astype(float))
    # One run per refit: the seeding alone moves some rows (Jaccard below 1), which is what What-if shows.
    single = trust.bootstrap_stability(model, X, n_resamples=4, method="seed", random_state=0, n_init=1)
    assert single.mean_jaccard.min() < 1.0 and single.present.all()
    again = trust.bootstrap_stability(model, X, n_resamples=4, method="seed", random_state=0, n_init=1)
    np.testing.assert_array_equal(again.jaccard, single.jaccard)
    assert "4 seed refits" in result.summary()
    figure = trust_plots.fig_selection_frequency(model, result)
    assert figure.layout.annotations[1].text == "Selected in the seed refits"
    with pytest.raises(CraftInputError, match="'bootstrap', 'subsample' or 'seed'"):
        trust.bootstrap_stability(model, X, method="seeds")
