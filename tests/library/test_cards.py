"""Cluster cards (``craft.cards``) against independent computations (their page: ``tests/app/test_app_cards.py``).

The statistics are recomputed here from the raw table and the labels: the
v-test from its formula written out, the level test from the hypergeometric
law by hand (``math.comb``) and by ``scipy.stats.hypergeom``, the
Benjamini–Hochberg adjustment by hand. Paragons and border rows are checked
against ``cost_terms``; a rule's text is evaluated on the table by a small
reader of its own, and its agreement with the labels recomputed.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from craft import CRAFT, CraftInputError, cluster_card, datasets, synthetic
from craft.plots import SELECTED_COLOR, UNSELECTED_COLOR, fig_card_levels, fig_card_numeric


# ---------------------------------------------------------------------------
# Independent computations


def v_test(values: np.ndarray, inside: np.ndarray) -> tuple[float, float]:
    """FactoMineR's v-test of the cluster's mean, from its formula; two-sided normal p (``math.erfc``)."""
    N, n = values.size, int(inside.sum())
    s2 = values.var()  # population variance
    v = (values[inside].mean() - values.mean()) / math.sqrt(s2 / n * (N - n) / (N - 1))
    return v, math.erfc(abs(v) / math.sqrt(2))


def hypergeometric_tail(x: int, n: int, M: int, N: int) -> tuple[float, float]:
    """``P(X <= x)`` and ``P(X >= x)`` for X the successes in ``n`` draws from ``N`` of which ``M`` succeed."""
    pmf = [math.comb(M, i) * math.comb(N - M, n - i) / math.comb(N, n) for i in range(0, n + 1)]
    return sum(pmf[: x + 1]), sum(pmf[x:])


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Adjusted p-values: min over j >= i of p_(j) m / j, capped at 1, in the input's order."""
    m = p.size
    order = np.argsort(p)
    adjusted = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        adjusted[i] = running
    return adjusted


_CONDITION: list[tuple[re.Pattern, Callable[..., pd.Series]]] = [
    (re.compile(r"(.+) < (\w+) ≤ (.+)"), lambda X, a, f, b: (num(X, f) > float(a)) & (num(X, f) <= float(b))),
    (re.compile(r"(\w+) ≤ (.+)"), lambda X, f, t: num(X, f) <= float(t)),
    (re.compile(r"(\w+) > (.+)"), lambda X, f, t: num(X, f) > float(t)),
    # Read as written: a missing cell is not "a level other than ..." (the text says "or missing" where it is).
    (re.compile(r"(\w+) not in \{(.+)\}"),
     lambda X, f, levels: ~X[f].astype(str).isin(levels.split(", ")) & X[f].notna()),
    (re.compile(r"(\w+) in \{(.+)\}"), lambda X, f, levels: X[f].astype(str).isin(levels.split(", "))),
    (re.compile(r"(\w+) ≠ (.+)"), lambda X, f, level: (X[f].astype(str) != level) & X[f].notna()),
    (re.compile(r"(\w+) = (.+)"), lambda X, f, level: X[f].astype(str) == level),
]


def num(X: pd.DataFrame, feature: str) -> pd.Series:
    return pd.to_numeric(X[feature])


def rows_picked(path: str, X: pd.DataFrame) -> np.ndarray:
    """The rows a path of a rule's text picks, read from the text alone."""
    picked = pd.Series(True, index=X.index)
    if path == "every row":
        return picked.to_numpy()
    for condition in path.split(" and "):
        missing = re.fullmatch(r"\((.+) or (\w+) missing\)", condition)
        inner = missing.group(1) if missing else condition
        for pattern, meaning in _CONDITION:
            found = pattern.fullmatch(inner)
            if found:
                holds = meaning(X, *found.groups())
                break
        else:
            raise AssertionError(f"unreadable condition {condition!r}")
        if missing:
            holds = holds | X[missing.group(2)].isna()
        picked &= holds
    return picked.to_numpy()


# ---------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def tiny():
    """Seven rows, two clear groups on a number and a level."""
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 2.5, 10.0, 11.0, 13.0],
                      "c": ["x", "x", "y", "x", "y", "y", "y"],
                      "d": [5.0, 1.0, 4.0, 2.0, 3.0, 6.0, 2.0]})
    model = CRAFT(m=0.5, k=2, random_state=0, n_init=1).fit(X)
    return X, model


@pytest.fixture(scope="module")
def credit():
    """credit-g (1,000 rows, 7 numeric and 13 categorical features) in three clusters."""
    X, _ = datasets.load("credit-g")
    model = CRAFT(m=0.3, k=3, random_state=0, n_init=1, categorical=datasets.dataset_schema("credit-g")).fit(X)
    return X, model


def credit_with_holes(missing: str) -> tuple[pd.DataFrame, CRAFT]:
    """credit-g with a tenth of its numeric and categorical cells of four columns missing, fitted with ``missing``."""
    X, _ = datasets.load("credit-g")
    X = X.copy()
    rng = np.random.default_rng(0)
    for column in ["duration", "age", "credit_amount", "purpose"]:
        X.loc[rng.random(len(X)) < 0.1, column] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=0.4, k=3, random_state=0, n_init=1, missing=missing,
                      categorical=datasets.dataset_schema("credit-g")).fit(X)
    return X, model


@pytest.fixture(scope="module")
def holey():
    """credit-g with holes (:func:`credit_with_holes`), missing cells marginalised."""
    return credit_with_holes("marginalise")


# ---------------------------------------------------------------------------
# Numeric evidence


def test_numeric_v_test_matches_its_formula_on_a_tiny_table(tiny):
    X, model = tiny
    for cluster in range(model.n_clusters_):
        card = cluster_card(model, X, cluster)
        inside = model.labels_ == cluster
        for feature in ["a", "d"]:
            row = card.numeric.set_index("feature").loc[feature]
            values = X[feature].to_numpy()
            v, p = v_test(values, inside)
            assert row["v_test"] == pytest.approx(v, rel=1e-9)
            assert row["p_value"] == pytest.approx(p, rel=1e-9)
            assert row["mean"] == pytest.approx(values[inside].mean())
            assert row["overall_mean"] == pytest.approx(values.mean())
            assert row["sd"] == pytest.approx(values[inside].std())
            assert row["std_diff"] == pytest.approx((values[inside].mean() - values.mean()) / values.std())
            assert row["n_cells"] == inside.sum()


def test_numeric_evidence_on_credit_g_matches_the_formula_and_lists_selected_features_first(credit):
    X, model = credit
    for cluster in range(model.n_clusters_):
        card = cluster_card(model, X, cluster)
        frame = card.numeric
        selected = frame["selected"].to_numpy()
        assert not (np.diff(selected.astype(int)) > 0).any()  # selected rows come first
        assert (np.diff(frame["rank"].to_numpy()[selected]) > 0).all()
        assert list(frame["feature"]) == sorted(model.schema_.numeric, key=lambda f: (
            not frame.set_index("feature").loc[f, "selected"], frame.set_index("feature").loc[f, "rank"]))
        inside = model.labels_ == cluster
        for row in frame.itertuples():
            v, p = v_test(X[row.feature].to_numpy(dtype=float), inside)
            assert row.v_test == pytest.approx(v, rel=1e-8)
            assert row.p_value == pytest.approx(p, rel=1e-6, abs=1e-300)


def test_missing_cells_are_left_out_under_marginalise_and_counted_at_the_mean_under_impute():
    X = pd.DataFrame({"a": [1.0, np.nan, 3.0, 2.5, 10.0, np.nan, 13.0, 12.0],
                      "b": [0.1, 0.3, 0.2, 0.1, 5.0, 5.2, 4.9, 5.1]})
    for missing in ["marginalise", "impute"]:
        model = CRAFT(m=0.5, k=2, random_state=0, n_init=1, missing=missing).fit(X)
        for cluster in range(2):
            row = cluster_card(model, X, cluster).numeric.set_index("feature").loc["a"]
            inside = model.labels_ == cluster
            column = X["a"].to_numpy()
            if missing == "marginalise":
                observed = ~np.isnan(column)
                values, members = column[observed], inside[observed]
            else:
                values, members = np.where(np.isnan(column), np.nanmean(column), column), inside
            v, p = v_test(values, members)
            assert row["n_cells"] == members.sum()
            assert row["mean"] == pytest.approx(values[members].mean())
            assert row["v_test"] == pytest.approx(v, rel=1e-9)
            assert row["p_value"] == pytest.approx(p, rel=1e-9)


# ---------------------------------------------------------------------------
# Levels


def test_level_test_matches_the_hypergeometric_law_by_hand_on_a_tiny_table(tiny):
    X, model = tiny
    for cluster in range(model.n_clusters_):
        levels = cluster_card(model, X, cluster).levels.set_index("level")
        inside = model.labels_ == cluster
        N, n = len(X), int(inside.sum())
        for level in ["x", "y"]:
            x = int((X["c"][inside] == level).sum())
            M = int((X["c"] == level).sum())
            below, above = hypergeometric_tail(x, n, M, N)
            p = min(1.0, 2 * min(below, above))
            row = levels.loc[level]
            assert row["count"] == x
            assert row["p_value"] == pytest.approx(p, rel=1e-9)
            assert row["v_test"] == pytest.approx(np.sign(x - n * M / N) * stats.norm.isf(p / 2), rel=1e-9, abs=1e-12)
            assert row["cluster_share"] == pytest.approx(x / n)
            assert row["overall_share"] == pytest.approx(M / N)
            assert row["direction"] == ("over" if x > n * M / N and p < 1 else "under" if p < 1 else "as overall")


def test_level_evidence_on_credit_g_matches_scipy_hypergeom(credit):
    X, model = credit
    cluster = 1
    levels = cluster_card(model, X, cluster).levels
    inside = model.labels_ == cluster
    assert len(levels) == sum(X[f].nunique() for f in model.schema_.categorical)
    for row in levels.itertuples():
        column = X[row.feature].astype(str)
        x, M = int((column[inside] == row.level).sum()), int((column == row.level).sum())
        law = stats.hypergeom(len(X), M, int(inside.sum()))
        p = min(1.0, 2 * min(law.cdf(x), law.sf(x - 1)))
        assert row.count == x
        assert row.p_value == pytest.approx(p, rel=1e-6, abs=1e-300)
        assert row.expected == pytest.approx(inside.sum() * M / len(X))
    # Within a feature, from the most over- to the most under-represented level.
    for _, part in levels.groupby("feature", sort=False):
        assert (np.diff(part["v_test"].to_numpy()) <= 0).all()


def test_levels_count_the_observed_cells_when_missing_ones_are_marginalised(holey):
    X, model = holey
    levels = cluster_card(model, X, 0).levels
    purpose = levels[levels["feature"] == "purpose"]
    observed = X["purpose"].notna().to_numpy()
    inside = (model.labels_ == 0) & observed
    assert set(purpose["n_cells"]) == {int(inside.sum())}
    assert "nan" not in set(purpose["level"])
    for row in purpose.itertuples():
        column = X["purpose"][observed].astype(str)
        x, M = int((X["purpose"][inside] == row.level).sum()), int((column == row.level).sum())
        law = stats.hypergeom(int(observed.sum()), M, int(inside.sum()))
        assert row.p_value == pytest.approx(min(1.0, 2 * min(law.cdf(x), law.sf(x - 1))), rel=1e-6, abs=1e-300)


def test_p_values_are_adjusted_by_benjamini_hochberg_over_every_test_on_the_card(credit):
    X, model = credit
    card = cluster_card(model, X, 2)
    raw = np.concatenate([card.numeric["p_value"], card.levels["p_value"]])
    adjusted = np.concatenate([card.numeric["p_adjusted"], card.levels["p_adjusted"]])
    assert card.n_tests == raw.size == len(model.schema_.numeric) + len(card.levels)
    np.testing.assert_allclose(adjusted, benjamini_hochberg(raw), rtol=1e-12)
    assert "Benjamini–Hochberg" in card.words.tests and f"{card.n_tests} tests" in card.words.tests


def test_a_level_so_over_represented_that_p_underflows_keeps_a_finite_v_test():
    n = 600
    X = pd.DataFrame({"g": ["a"] * n + ["b"] * n, "x": np.r_[np.zeros(n), np.ones(n)] + np.tile([0.0, 0.01], n)})
    model = CRAFT(m=0.5, k=2, random_state=0, n_init=1).fit(X)
    card = cluster_card(model, X, int(model.labels_[0]))
    assert card.size == n and np.isfinite(card.levels["v_test"]).all() and np.isfinite(card.numeric["v_test"]).all()
    top = card.levels.iloc[0]
    assert (top["level"], top["count"]) == ("a", n)
    # All n holders of "a" among the n rows drawn: P(X >= n) = 1 / C(2n, n), about 1e-360, and p twice that.
    log_p = math.log(2) - (math.lgamma(2 * n + 1) - 2 * math.lgamma(n + 1))
    assert top["p_value"] == 0.0
    assert top["v_test"] == pytest.approx(-_normal_quantile_of_log(log_p - math.log(2)), rel=1e-6)


def _normal_quantile_of_log(log_p: float) -> float:
    """Φ⁻¹(exp(log_p)) for a very negative log_p, by Newton's method on log Φ (independent of ndtri_exp)."""
    z = -math.sqrt(-2 * log_p)
    for _ in range(100):
        f = stats.norm.logcdf(z) - log_p
        z -= f / math.exp(stats.norm.logpdf(z) - stats.norm.logcdf(z))
    return z


# ---------------------------------------------------------------------------
# Rows


def test_paragons_are_the_members_with_the_lowest_cost_and_border_rows_the_smallest_margins(credit):
    X, model = credit
    costs = model.cost_terms(X).total
    for cluster in range(model.n_clusters_):
        card = cluster_card(model, X, cluster)
        members = np.flatnonzero(model.labels_ == cluster)
        own = costs[members, cluster]
        assert card.paragons.index[0] == X.index[members[np.argmin(own)]]
        expected = members[np.argsort(own, kind="stable")[:5]]
        assert list(card.paragons.index) == list(X.index[expected])
        np.testing.assert_allclose(card.paragons["cost"], costs[expected, cluster])
        others = np.delete(costs[members], cluster, axis=1)
        margin = others.min(axis=1) - own
        assert (margin >= 0).all()  # labels_ is the argmin of the costs
        border = members[np.argsort(margin, kind="stable")[:5]]
        assert list(card.border.index) == list(X.index[border])
        np.testing.assert_allclose(card.border["margin"], np.sort(margin)[:5])
        assert (card.border["next_cluster"] != cluster).all()
        # The original cells, selected features first.
        chosen = [f for f, keep in zip(model.feature_names_in_, model.feature_mask_[cluster], strict=True) if keep]
        assert set(card.paragons.columns[1: 1 + len(chosen)]) == set(chosen)
        pd.testing.assert_frame_equal(card.paragons[chosen], X.loc[card.paragons.index, chosen], check_names=False)


def test_a_measure_named_like_a_column_of_the_table_does_not_hide_it():
    X = pd.DataFrame({"cost": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9], "margin": [0.0, 0.1, 0.2, 5.0, 5.1, 5.3]})
    model = CRAFT(m=0.5, k=2, random_state=0, n_init=1).fit(X)
    card = cluster_card(model, X, 0)
    assert list(card.paragons.columns[:1]) == ["cost (card)"]
    assert {"cost", "margin", "margin (card)"} <= set(card.border.columns)
    pd.testing.assert_series_equal(card.paragons["cost"], X.loc[card.paragons.index, "cost"], check_names=False)


# ---------------------------------------------------------------------------
# The rule


@pytest.fixture(scope="module")
def imputed():
    """credit-g with the same holes (:func:`credit_with_holes`), filled as missing="impute" fills them."""
    return credit_with_holes("impute")


@pytest.fixture(scope="module")
def soybean():
    """Soybean (missing cells marginalised), whose rules exclude levels of columns with missing cells."""
    X, _ = datasets.load("soybean")
    X = X.rename(columns=lambda c: re.sub(r"\W", "_", str(c)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=4, random_state=0, n_init=1, categorical=list(X.columns)).fit(X)
    return X, model


@pytest.mark.parametrize("table", ["credit", "holey", "imputed", "soybean"])
def test_the_rule_text_picks_the_rows_whose_agreement_the_card_states(table, request):
    X, model = request.getfixturevalue(table)
    for cluster in range(model.n_clusters_):
        rule = cluster_card(model, X, cluster).rule
        assert rule is not None and rule.paths
        inside = model.labels_ == cluster
        picked = np.zeros(len(X), dtype=bool)
        for path in rule.paths:
            picked |= rows_picked(path, X)
            assert len(path.split(" and ")) <= 3
        hits = (picked & inside).sum()
        assert rule.n_predicted == picked.sum()
        assert rule.precision == pytest.approx(hits / picked.sum())
        assert rule.recall == pytest.approx(hits / inside.sum())
        assert rule.accuracy == pytest.approx((picked == inside).mean())
        used = {re.search(r"(\w+) (?:≤|>|=|≠|not in|in) ", c).group(1) for p in rule.paths for c in p.split(" and ")}
        selected = {f for f, keep in zip(model.feature_names_in_, model.feature_mask_[cluster], strict=True) if keep}
        assert used <= selected
    if table == "holey":
        assert any("missing)" in cluster_card(model, X, k).rule.text for k in range(model.n_clusters_))
    if table == "imputed":
        words = [cluster_card(model, X, k).words.rule for k in range(model.n_clusters_)]
        assert any("at the column mean" in w for w in words)


def test_a_threshold_is_written_at_the_datas_precision_and_picks_the_same_rows():
    from craft.cards._rule import _readable

    values = np.array([2.0, 2.1, 2.2, 2.3, np.nan])
    # Just below the value 2.2 (float32 thresholds land there): 2.2 would move the rows at 2.2; 2.1 does not.
    assert _readable(2.1999999, values) == "2.1"
    assert _readable(2.25, values) == "2.2"
    for threshold in (2.1999999, 2.25, 2.05):
        text = float(_readable(threshold, values))
        finite = values[np.isfinite(values)]
        np.testing.assert_array_equal(finite <= text, finite <= threshold)


def test_the_rule_of_a_cluster_defined_by_one_level_is_that_level():
    X = pd.DataFrame({"colour": ["red"] * 3 + ["blue"] * 3, "size": [1.0, 1.2, 0.9, 8.0, 8.3, 7.9]})
    model = CRAFT(m=0.5, k=2, random_state=0, n_init=1).fit(X)
    red = int(model.labels_[0])
    rule = cluster_card(model, X, red).rule
    # The tree splits on the one-hot column "colour = blue" (the first level); the rule names the level kept.
    assert rule.text == "colour = red"
    assert (rule.precision, rule.recall, rule.accuracy) == (1.0, 1.0, 1.0)
    assert "100%" in cluster_card(model, X, red).words.rule


def test_a_single_cluster_has_no_border_and_the_rule_every_row():
    X = pd.DataFrame({"a": [1.0, 1.1, 0.9, 1.05], "c": ["x", "x", "x", "y"]})
    model = CRAFT(m=0.5, k=1, random_state=0, n_init=1).fit(X)
    card = cluster_card(model, X, 0)
    assert card.border.empty and "single cluster" in card.words.border
    assert card.rule.text == "every row" and card.rule.accuracy == 1.0
    assert (card.numeric["p_value"] == 1.0).all() and (card.numeric["v_test"] == 0.0).all()
    assert np.isfinite(card.levels["v_test"]).all()


# ---------------------------------------------------------------------------
# Words, figures, errors


def test_the_words_state_the_numbers_of_the_card(credit):
    X, model = credit
    card = cluster_card(model, X, 0)
    words = card.words
    assert words.summary.startswith(f"Cluster 0 holds {card.size:,} of 1,000 rows")
    assert f"“{card.rule.text}”" in words.rule and f"{card.rule.precision:.0%}" in words.rule
    top = card.numeric[card.numeric["selected"]].iloc[card.numeric[card.numeric["selected"]]["std_diff"].abs().argmax()]
    assert f"{top.feature} differs most" in words.numeric and f"{top.std_diff:+.2f} sd" in words.numeric
    level = card.levels[card.levels["selected"]].sort_values("v_test").iloc[-1]
    assert f"{level.feature} = {level.level}" in words.levels
    assert "not evidence that the cluster exists" in words.tests
    assert "lowest CRAFT cost" in words.paragons and "margin" in words.border


def test_a_card_is_the_same_every_time(credit):
    X, model = credit
    first, second = cluster_card(model, X, 2), cluster_card(model, X, 2)
    assert first.rule == second.rule and first.words == second.words
    pd.testing.assert_frame_equal(first.levels, second.levels)


def test_figures_draw_the_cards_numbers(credit):
    X, model = credit
    card = cluster_card(model, X, 1)
    numeric = fig_card_numeric(card)
    bars = {trace.marker.color: dict(zip(trace.y, trace.x, strict=True)) for trace in numeric.data}
    frame = card.numeric.set_index("feature")
    for feature, row in frame.iterrows():
        colour = SELECTED_COLOR if row["selected"] else UNSELECTED_COLOR
        assert bars[colour][feature] == pytest.approx(row["std_diff"])
    assert list(numeric.layout.yaxis.categoryarray) == list(frame.index[::-1])
    levels = fig_card_levels(card, max_levels=6)
    chosen = card.levels[card.levels["selected"]]
    strongest = chosen.loc[chosen["v_test"].abs().nlargest(6).index]
    cluster_bars = next(t for t in levels.data if t.name == "cluster 1")
    assert len(cluster_bars.y) == 6
    assert set(cluster_bars.y) == {f"{f} = {lv}" for f, lv in zip(strongest["feature"], strongest["level"], strict=True)}
    np.testing.assert_allclose(sorted(cluster_bars.x), sorted(strongest["cluster_share"]))


def test_bad_calls_name_what_to_do(tiny):
    X, model = tiny
    with pytest.raises(CraftInputError, match=r"cluster=2 does not exist: the fit has clusters 0\.\.1"):
        cluster_card(model, X, 2)
    with pytest.raises(CraftInputError, match=r"X has 6 rows; the fit had 7: pass the fitted table"):
        cluster_card(model, X.iloc[:6], 0)
    with pytest.raises(CraftInputError, match=r"X lacks the fitted column\(s\) \['c'\]"):
        cluster_card(model, X.drop(columns="c"), 0)
    with pytest.raises(CraftInputError, match="not fitted"):
        cluster_card(CRAFT(), X, 0)


# ---------------------------------------------------------------------------
# A large table: the rule learnt on a sample, of few levels


def test_a_large_table_and_a_feature_of_many_levels_keep_the_rule_small_and_its_agreement_exact(credit, monkeypatch):
    from craft.cards import _rule

    X, model = credit
    monkeypatch.setattr(_rule, "RULE_ROWS", 300)
    monkeypatch.setattr(_rule, "RULE_LEVELS", 2)
    for cluster in range(model.n_clusters_):
        card = cluster_card(model, X, cluster)
        rule = card.rule
        assert rule.n_learnt == 300 and "a uniform sample of 300 rows" in card.words.rule
        levels = {level for path in rule.paths for c in path.split(" and ") for level in
                  re.findall(r"(?:=|≠) (.+)", c)}
        chosen = card.levels[card.levels["selected"]]
        allowed = {row.level for _, part in chosen.groupby("feature")
                   for row in part.loc[part["v_test"].abs().sort_values(ascending=False, kind="stable").index[:2]]
                   .itertuples()}
        assert levels <= allowed
        inside = model.labels_ == cluster
        picked = np.zeros(len(X), dtype=bool)
        for path in rule.paths:
            picked |= rows_picked(path, X)
        assert rule.n_predicted == picked.sum()
        assert rule.accuracy == pytest.approx((picked == inside).mean())


# ---------------------------------------------------------------------------
# Issue 30: one population under noise=True, the p-value convention and the cells drawn, in words


def test_a_noise_fits_card_compares_with_the_clustered_rows_only():
    X, _, _ = synthetic.fig2_numeric(random_state=0)
    rng = np.random.default_rng(0)
    scattered = pd.DataFrame(rng.uniform(X.min().to_numpy() - 5, X.max().to_numpy() + 5, size=(60, X.shape[1])),
                             columns=X.columns)
    table = pd.concat([X, scattered], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=1 / 3, k=3, noise=True, random_state=0).fit(table)
    assert model.n_noise_ > 0
    clustered = model.labels_ >= 0
    card = cluster_card(model, table, 0)
    for row in card.numeric.head(5).itertuples():
        values = table[row.feature].to_numpy()
        v, p = v_test(values[clustered], (model.labels_ == 0)[clustered])
        assert row.overall_mean == pytest.approx(values[clustered].mean())
        assert row.overall_sd == pytest.approx(values[clustered].std())
        assert row.v_test == pytest.approx(v, rel=1e-9) and row.p_value == pytest.approx(p, rel=1e-6)
    assert "noise rows, in no cluster, are left out" in card.words.tests


def test_the_level_tests_convention_and_the_cells_drawn_are_said(credit, holey):
    X, model = credit
    words = cluster_card(model, X, 0).words.tests
    assert "doubled" in words and "mid-p" in words and "rows drawn at random" in words
    X, model = holey
    words = cluster_card(model, X, 0).words.tests
    assert "observed cells drawn at random" in words and "rows drawn at random" not in words
