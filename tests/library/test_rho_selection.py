"""rho_selection: the paper's selection rule, and the shrunk rule in which rho reaches the selection."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from craft import CRAFT, CraftInputError, _engine
from craft.encoding import Encoder
from craft.metrics import planted_agreement
from craft.priors import MIN_OWN_WEIGHT, prior_terms
from library_helpers import engine_options
from craft.synthetic import FIGURES


def _fit(name, **params):
    X, y, truth = FIGURES[name](random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CRAFT(k=truth.shape[0], random_state=0, **params).fit(X), X, y, truth


def _rho(m, share):
    return share * m * (1.0 - m)


def _two_clusters():
    """Two clusters of 2 and 4 rows; numeric ``a`` tight in the first, ``b`` in the second."""
    table = pd.DataFrame(
        {
            "a": [0.0, 0.2, 5.0, 9.0, 1.0, 7.0],
            "b": [3.0, -3.0, 1.0, 1.1, 0.9, 1.0],
            "c": list("xxyyxy"),
            "d": list("ppqqqq"),
        }
    )
    encoder = Encoder(["a", "b"], ["c", "d"], standardize=False)
    data = encoder.fit_transform(table)
    labels = np.array([0, 0, 1, 1, 1, 1])
    return data, _engine.statistics(data, labels, 2)


def test_own_weight_is_the_posterior_means_weight_of_v():
    terms = prior_terms(0.3, 0.07)
    # a/(a+b) = m + w (v - m) for v = 0 and v = 1 (Supplementary, "Setting rho").
    assert terms.own_weight == pytest.approx(0.07 / 0.21)
    assert terms.selection_probability(1.0) == pytest.approx(0.3 + terms.own_weight * 0.7)
    assert terms.selection_probability(0.0) == pytest.approx(0.3 - terms.own_weight * 0.3)


def test_shrunk_scores_by_hand():
    data, stats = _two_clusters()
    _, variances = _engine.raw_variances(stats, data)
    log_eta = _engine.log_eta(data, stats, 0.1)
    terms = prior_terms(0.5, 0.05)  # w = 0.2
    paper = _engine.selection_scores(data, stats, variances, log_eta, engine_options(terms=terms, lam=1.0))
    shrink = _engine.selection_scores(
        data, stats, variances, log_eta, engine_options(terms=terms, lam=1.0, rho_selection="shrink")
    )
    assert paper.own_weight == 1.0 and shrink.own_weight == pytest.approx(0.2)
    # Cluster variances of a: 0.01 (rows 0, 1) and 8.75 (rows 2-5); pooled per point (2*0.01 + 4*8.75)/6.
    np.testing.assert_allclose(paper.variance[:, 0], [0.01, 8.75])
    pooled_a = (2 * 0.01 + 4 * 8.75) / 6
    np.testing.assert_allclose(shrink.variance[:, 0], 0.2 * np.array([0.01, 8.75]) + 0.8 * pooled_a)
    # Gains are totals over the cluster's points: the pooled gain per point, times n_k.
    pooled_gain = paper.gain.sum(axis=0) / 6
    np.testing.assert_allclose(shrink.gain, 0.2 * paper.gain + 0.8 * np.array([[2.0], [4.0]]) * pooled_gain)
    pooled_reference = paper.reference.sum(axis=0) / 6
    np.testing.assert_allclose(shrink.reference, 0.2 * paper.reference + 0.8 * np.array([[2.0], [4.0]]) * pooled_reference)


def test_shrunk_gains_pool_over_rows_a_missing_cell_adding_nothing():
    # d's cell of row 3 is missing: cluster 1 has 3 observed cells of d but 4 rows.
    table = pd.DataFrame({"c": list("xxyyxy"), "d": ["p", "p", "q", None, "q", "q"]})
    data = Encoder([], ["c", "d"], standardize=False, missing="marginalise").fit_transform(table)
    stats = _engine.statistics(data, np.array([0, 0, 1, 1, 1, 1]), 2)
    log_eta = _engine.log_eta(data, stats, 0.1)
    no_numeric = np.zeros((2, 0))
    terms = prior_terms(0.5, 0.05)  # w = 0.2
    paper = _engine.selection_scores(data, stats, no_numeric, log_eta, engine_options(terms, 1.0))
    shrink = _engine.selection_scores(
        data, stats, no_numeric, log_eta, engine_options(terms, 1.0, rho_selection="shrink")
    )
    # The pooled target is the gain every cluster's selection of d earns together, per row (6 rows),
    # times the cluster's rows (2 and 4), for c and d alike.
    rows = np.array([[2.0], [4.0]])
    np.testing.assert_allclose(shrink.gain, 0.2 * paper.gain + 0.8 * rows * paper.gain.sum(axis=0) / 6)
    np.testing.assert_allclose(shrink.reference, 0.2 * paper.reference + 0.8 * rows * paper.reference.sum(axis=0) / 6)


def _missing_where_the_cluster_says():
    """40 rows, two planted clusters (f0); f1 is missing in 16 of the first cluster's 20 rows."""
    return pd.DataFrame(
        {
            "f0": ["a"] * 20 + ["b"] * 20,
            "f1": ["x"] * 4 + [None] * 16 + ["y"] * 20,
            "f2": ["x"] * 15 + ["y"] * 5 + ["y"] * 15 + ["x"] * 5,
        }
    )


def test_shrink_near_zero_rho_selects_one_common_set_when_missingness_depends_on_the_cluster():
    table = _missing_where_the_cluster_says()
    model = CRAFT(m=0.5, k=2, rho=_rho(0.5, 1e-6), rho_selection="shrink", categorical=["f0", "f1", "f2"],
                  random_state=0).fit(table)
    np.testing.assert_array_equal(model.labels_, np.repeat([0, 1], 20))
    mask = model.feature_mask_
    assert (mask == mask[0]).all(), mask


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_clusters=st.integers(2, 5),
    budget=st.sampled_from(["fixed", "approximate"]),
    m=st.sampled_from([0.3, 0.5, 0.7]),
)
def test_shrink_near_zero_rho_selects_one_common_set_on_any_table(seed, n_clusters, budget, m):
    # Each cluster loses each feature's cells at its own rate (0 to 90 %), so n_kd differs between
    # the features of a cluster; at the smallest rho allowed every cluster ranks the pooled scores.
    rng = np.random.default_rng(seed)
    n = 120
    labels = np.sort(rng.integers(n_clusters, size=n))
    labels[:n_clusters] = np.arange(n_clusters)
    table = pd.DataFrame({f"x{j}": rng.normal(labels * rng.normal(), 1.0 + rng.random()) for j in range(4)})
    for j in range(5):
        table[f"c{j}"] = np.array(list("abcd"))[(labels * rng.integers(4) + rng.integers(2, size=n)) % 4]
    rates = rng.uniform(0.0, 0.9, size=(n_clusters, table.shape[1]))
    holes = rng.random(table.shape) < rates[labels]
    holes[0] = False  # every column keeps an observed cell
    table = table.mask(holes)
    numeric = [f"x{j}" for j in range(4)]
    data = Encoder(numeric, [f"c{j}" for j in range(5)], missing="marginalise").fit_transform(table)
    stats = _engine.statistics(data, labels, n_clusters)
    _, variances = _engine.raw_variances(stats, data)
    log_eta = _engine.log_eta(data, stats, 0.1)
    opts = engine_options(prior_terms(m, _rho(m, MIN_OWN_WEIGHT * 1.000001)), 1.0, budget=budget, eps_v=1.0, eps_c=0.3,
                          rho_selection="shrink")
    mask = _engine.select_features(data, stats, variances, log_eta, opts)
    assert (mask == mask[0]).all(), mask


@pytest.mark.parametrize("k", [4, 19])
def test_shrink_near_zero_rho_selects_one_common_set_on_soybean(k):
    from craft.datasets import load

    X, _ = load("soybean")  # 2,337 missing cells, marginalised
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=k, rho=_rho(0.5, 1e-6), rho_selection="shrink", random_state=0).fit(X)
    assert model.n_clusters_ == k
    mask = model.feature_mask_
    assert (mask == mask[0]).all()


def test_paper_rule_ignores_rho_and_shrunk_rule_follows_it():
    data, stats = _two_clusters()
    _, variances = _engine.raw_variances(stats, data)
    log_eta = _engine.log_eta(data, stats, 0.1)

    def weights(rho, mode):
        opts = engine_options(terms=prior_terms(0.5, rho), lam=1.0, rho_selection=mode)
        return _engine.select_features(data, stats, variances, log_eta, opts)

    np.testing.assert_array_equal(weights(0.001, "paper"), weights(0.249, "paper"))
    np.testing.assert_array_equal(weights(0.249, "shrink"), weights(0.249, "paper"))
    # Cluster-specific: cluster 0 keeps the tight a, cluster 1 the tight b.
    np.testing.assert_array_equal(weights(0.249, "shrink")[:, :2], [[1, 0], [0, 1]])
    # Global: both keep the feature with the lower pooled variance.
    low = weights(0.001, "shrink")
    np.testing.assert_array_equal(low[0], low[1])


def test_one_cluster_selects_the_same_under_both_rules():
    data, _ = _two_clusters()
    one = _engine.statistics(data, np.zeros(6, dtype=np.int64), 1)
    _, variances = _engine.raw_variances(one, data)
    log_eta = _engine.log_eta(data, one, 0.1)
    for budget in ("fixed", "approximate"):
        paper = engine_options(terms=prior_terms(0.5, 0.01), lam=1.0, budget=budget, eps_v=5.0, eps_c=0.1)
        shrink = _engine.Options(**{**paper.__dict__, "rho_selection": "shrink"})
        np.testing.assert_array_equal(
            _engine.select_features(data, one, variances, log_eta, paper),
            _engine.select_features(data, one, variances, log_eta, shrink),
        )


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("fig1_binary", {"m": 1 / 3}),
        ("fig1_binary_modified", {"m": 1 / 3}),
        ("fig2_numeric", {"m": 1 / 3}),
        ("fig3_numeric", {"m": 0.5, "budget": "approximate", "eps_v": 5.0, "standardize": False}),
    ],
)
def test_shrink_at_small_rho_selects_one_common_set(name, params):
    model, *_ = _fit(name, rho=_rho(params["m"], 1e-3), rho_selection="shrink", **params)
    assert model.n_clusters_ == 3
    mask = model.feature_mask_
    assert mask[0].any() and (mask == mask[0]).all()
    # The paper's rule on the same data stays cluster-specific at the same rho.
    paper, *_ = _fit(name, rho=_rho(params["m"], 1e-3), **params)
    assert not (paper.feature_mask_ == paper.feature_mask_[0]).all()


def test_a_pooled_tie_at_the_cut_is_broken_by_each_clusters_own_term_down_to_the_smallest_rho():
    # Figure 1(a), seed 14: three features have equal pooled gains at the fixed budget's cut (ranks 8-10).
    # Each cluster's own gain breaks that tie its own way at rho = 1e-6 m(1-m) and still at the smallest
    # rho allowed (MIN_OWN_WEIGHT m(1-m)), where the own term moves a score by 1e-9 of itself: more than
    # the 10-digit rounding of the scores. A seed without such a tie selects one common set there.
    def mask(seed, share):
        X, _, _ = FIGURES["fig1_binary"](random_state=seed)
        model = CRAFT(k=3, m=1 / 3, rho=_rho(1 / 3, share), rho_selection="shrink", random_state=seed).fit(X)
        return model.feature_mask_

    smallest = MIN_OWN_WEIGHT * 1.000001
    for share in (1e-6, smallest):
        split = mask(14, share)
        assert not (split == split[0]).all()
    common = mask(0, smallest)
    assert (common == common[0]).all()


def test_shrink_at_the_papers_default_rho_recovers_figure_1():
    model, _, y, truth = _fit("fig1_binary", m=1 / 3, rho_selection="shrink")
    assert planted_agreement(y, truth, model.labels_, model.feature_mask_)["exact"]


def test_masks_move_with_rho_under_shrink_only():
    masks = {}
    for mode in ("paper", "shrink"):
        for share in (0.01, 0.5, 0.99):
            model, *_ = _fit("fig2_numeric", m=1 / 3, rho=_rho(1 / 3, share), rho_selection=mode)
            masks[mode, share] = model.feature_mask_
    assert all((masks["paper", s] == masks["paper", 0.99]).all() for s in (0.01, 0.5))
    differing = [int((masks["shrink", s] != masks["shrink", s][0]).any(axis=0).sum()) for s in (0.01, 0.5, 0.99)]
    assert differing[0] == 0 < differing[1] < differing[2]


def test_invalid_rho_selection_is_refused():
    X, _, _ = FIGURES["fig1_binary"](random_state=0)
    with pytest.raises(CraftInputError, match=r"rho_selection='global' is invalid: it must be one of 'paper', 'shrink'"):
        CRAFT(rho_selection="global").fit(X)


def test_cli_rho_selection_reaches_the_estimator(tmp_path, capsys):
    import json

    from craft.cli import main

    code = main(["fit", "zoo", "--k", "7", "--n-init", "1", "--seed", "0", "--rho", "0.0001", "--rho-selection",
                 "shrink", "--out", str(tmp_path), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["parameters"]["rho_selection"] == "shrink"
    selected = summary["result"]["selected_features"]
    assert all(row == selected[0] for row in selected)  # rho near 0: one common set
