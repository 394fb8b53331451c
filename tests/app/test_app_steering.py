"""Steering by hand in the app (issue 32, section 2): pins from the mask heatmap, links, merge and split, undo and
redo, the link that reproduces a steered fit, and hostile steering links refused with a message."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from craft import CRAFT, plots, synthetic
from craft.steer import steer
from explorer import steering
from app_helpers import APP, clear_caches, opened, pytestmark  # noqa: F401 - the autouse cache fixture, the warning filters


def ctx(at: AppTest):
    return at.session_state["ctx"]


def text(element) -> str:
    return str(getattr(element, "value", "") or getattr(element, "body", ""))


def tuned(**query) -> AppTest:
    """Tune & see on Figure 1(a) (one restart), with ``query`` in its link."""
    at = opened(**query)
    at.switch_page("pages/clusters.py").run()
    job = ctx(at).job
    if job is not None:
        assert job.wait(60)
        at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def figure1():
    X, *_ = synthetic.fig1_binary(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return X, CRAFT(m=1 / 3, k=3, random_state=0, n_init=1).fit(X)


def test_a_link_is_read_action_by_action_and_hostile_text_is_refused():
    found, problems = steering.read_link("p0.3.1,m1.2,c4.5,M0.1,S2,p*.7.0,p1.2.x")
    assert found == ["p0.3.1", "m1.2", "c4.5", "M0.1", "S2", "p*.7.0", "p1.2.x"] and problems == []
    found, problems = steering.read_link("p0.3.1,<script>,m-1.2,p0.3.7,M1")
    assert found == ["p0.3.1"] and len(problems) == 1
    assert "'<script>', 'm-1.2', 'p0.3.7', 'M1' are not steering actions" in problems[0]
    found, problems = steering.read_link("," * 1500)
    assert found == [] and len(problems) == 1 and "and 1,496 more" in problems[0]
    found, problems = steering.read_link(",".join(["S0"] * (steering.MAX_ACTIONS + 5)))
    assert len(found) == steering.MAX_ACTIONS and "5 steering action(s) beyond" in problems[0]
    found, problems = steering.read_link("m1.2," * 1000)
    assert found == [] and "longer than" in problems[0]


def test_a_fold_is_the_library_steering_and_refuses_what_cannot_apply(figure1):
    X, base = figure1
    names = list(X.columns)
    off = int(np.flatnonzero(base.feature_mask_[0])[0])
    on = int(np.flatnonzero(~base.feature_mask_[0])[0])
    result = steering.fold(base, X, [f"p0.{on}.1", f"p0.{off}.0", "p9.0.1", "m0.1", "c0.1"], "key", {})
    direct = steer(steering.fold(base, X, [f"p0.{on}.1"], "key").model, X,
                   pins={(0, names[on]): True, (0, names[off]): False})
    assert result.applied == [f"p0.{on}.1", f"p0.{off}.0", "m0.1"]
    assert len(result.refused) == 2 and "cluster 9 does not exist" in result.refused[0]
    assert "0" in result.refused[1] and "1" in result.refused[1]  # the contradiction names the pair
    assert result.model.feature_mask_[0, on] and not result.model.feature_mask_[0, off]
    assert result.model.pins_[0, on] == 1 and result.model.pins_[0, off] == -1
    assert result.model.labels_[0] == result.model.labels_[1]
    assert np.array_equal(direct.model.feature_mask_, steering.fold(base, X, [f"p0.{on}.1", f"p0.{off}.0"], "k").model.feature_mask_)


def test_the_mask_figure_marks_pins_and_a_click_cycles_them(figure1):
    X, base = figure1
    pinned = steering.fold(base, X, ["p0.5.1", "p1.6.0"], "key").model
    names = [trace.name for trace in plots.fig_feature_masks(pinned).data]
    assert "pinned on (1)" in names and "pinned off (1)" in names
    assert not any(str(name).startswith("pinned") for name in (t.name for t in plots.fig_feature_masks(base).data))
    assert steering.pin_cycle(base, 0, 5) == "p0.5.1"
    assert steering.pin_cycle(pinned, 0, 5) == "p0.5.0"
    assert steering.pin_cycle(pinned, 1, 6) == "p1.6.x"


def test_the_explanation_figure_adds_up_to_assign(figure1):
    X, base = figure1
    why = base.explain(X.iloc[[7]])
    figure = plots.fig_explanation(why, 0, top=5)
    cost, margin = figure.data[0].x, figure.data[1].x
    assigned = base.assign(X.iloc[[7]])
    assert abs(sum(cost) - assigned["cost"].iloc[0]) < 1e-9
    assert abs(sum(margin) - assigned["margin"].iloc[0]) < 1e-9
    assert len(cost) == 6  # five features and the rest in one bar


def test_a_pin_from_the_link_applies_and_undo_redo_follow():
    at = tuned(steer="p0.20.1,p1.9.0")
    model = ctx(at).model
    assert model.pins_[0, 20] == 1 and model.feature_mask_[0, 20]
    assert model.pins_[1, 9] == -1 and not model.feature_mask_[1, 9]
    assert "steer~" in ctx(at).key
    prices = " ".join(text(m) for m in at.markdown if "What changed" in text(m))
    assert "objective" in prices and "against the unsteered fit" in prices
    at.button(key="steer_undo").click().run()
    assert ctx(at).model.pins_[1, 9] == 0 and ctx(at).model.pins_[0, 20] == 1
    assert at.query_params["steer"] == "p0.20.1"
    at.button(key="steer_redo").click().run()
    assert ctx(at).model.pins_[1, 9] == -1 and at.query_params["steer"] == "p0.20.1,p1.9.0"
    at.button(key="steer_remove_0_p0.20.1").click().run()
    assert ctx(at).model.pins_[0, 20] == 0 and at.query_params["steer"] == "p1.9.0"


def test_rows_picked_by_number_are_linked_into_one_cluster():
    at = tuned()
    labels = ctx(at).model.labels_
    a, b = 0, int(np.flatnonzero(labels != labels[0])[0])
    for row in (a, b):
        at.number_input(key="steer_row_input").set_value(row).run()
        at.button(key="steer_pick").click().run()
    at.button(key="steer_must").click().run()
    assert not at.exception, at.exception
    assert at.query_params["steer"] == f"m{a}.{b}"
    assert ctx(at).model.labels_[a] == ctx(at).model.labels_[b]


def test_merge_and_split_from_a_card():
    at = tuned()
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    at.button(key="steer_merge").click().run()
    assert ctx(at).model.n_clusters_ == 2 and at.query_params["steer"] == "M0.1"
    at.button(key="steer_split").click().run()
    assert not at.exception, at.exception
    assert at.query_params["steer"] == "M0.1,S0"
    assert "What the last steering cost" in " ".join(e.label for e in at.expander)


def test_a_hostile_steering_link_is_refused_with_a_message_and_the_page_works():
    at = tuned(steer="p99.0.1,zzz,m0.999999999,S0,M0.1")
    said = " ".join(text(w) for w in at.warning)
    assert "'zzz' is not a steering action" in said
    assert "cluster 99 does not exist" in said and "999999999" in said
    # Figure 1(a)'s cluster 0 is all ones on its subspace: no 2-means parts it, and the message says so.
    assert "no 2\\-means parts them" in said
    assert at.query_params["steer"] == "M0.1"
    assert ctx(at).model.n_clusters_ == 2


def _explanation(at: AppTest) -> dict:
    from app_helpers import charts

    found = [figure for figure in charts(at) if "each feature's part of its cost" in figure["layout"]["title"]["text"]]
    assert len(found) == 1
    return found[0]


def _bars_sum(figure: dict, index: int) -> float:
    from app_helpers import array

    return float(np.nansum(array(figure["data"][index]["x"]).astype(float)))


def test_rows_ticked_on_cards_are_linked_and_explained():
    from explorer import cards

    at = tuned(dataset="zoo", k=4)
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    model, X = ctx(at).model, ctx(at).X
    for cluster in (0, 1):
        at.selectbox(key="card_cluster").set_value(cluster).run()
        paragon = cards.card(ctx(at).key, cluster, model, X).paragons.index[0]
        at.multiselect(key="card_link_ticked").set_value([int(X.index.get_loc(paragon))]).run()
        at.button(key="card_link_pick").click().run()
    rows = at.session_state[steering.PICKED]
    assert len(rows) == 2 and model.labels_[rows[0]] == 0 and model.labels_[rows[1]] == 1
    at.button(key="card_link_must").click().run()
    assert not at.exception, at.exception
    assert at.query_params["steer"] == f"m{rows[0]}.{rows[1]}"
    steered = ctx(at).model
    assert steered.labels_[rows[0]] == steered.labels_[rows[1]]
    # The card's explanation of its first paragon or border row: the bars add up to assign's cost and margin.
    figure = _explanation(at)
    card = cards.card(ctx(at).key, int(at.selectbox(key="card_cluster").value), steered, ctx(at).X)
    assigned = steered.assign(ctx(at).X.loc[[card.paragons.index[0]]])
    assert abs(_bars_sum(figure, 0) - assigned["cost"].iloc[0]) < 1e-6
    assert abs(_bars_sum(figure, 1) - assigned["margin"].iloc[0]) < 1e-6


def test_the_score_page_explains_a_scored_row():
    from test_app_score import new_rows, score_table

    at = tuned(dataset="wine")
    at.switch_page("pages/score.py").run()
    model = ctx(at).model
    table, content = new_rows(ctx(at).data.table)
    score_table(at, "next_month.csv", content)
    at.selectbox(key="score_explain_pick").set_value(3).run()
    assert not at.exception, at.exception
    figure = _explanation(at)
    assigned = model.assign(table[[str(c) for c in model.feature_names_in_]].iloc[[3]])
    assert abs(_bars_sum(figure, 0) - assigned["cost"].iloc[0]) < 1e-6
    assert abs(_bars_sum(figure, 1) - assigned["margin"].iloc[0]) < 1e-6


def test_the_export_page_share_link_carries_the_steering():
    at = tuned(steer="p0.20.1,m0.299")
    at.switch_page("pages/export.py").run()
    assert not at.exception, at.exception
    shared = " ".join(code.value for code in at.code)
    assert "steer=p0.20.1%2Cm0.299" in shared or "steer=p0.20.1,m0.299" in shared, shared


def test_a_fold_prices_only_its_last_step_and_gives_the_same_fit(figure1):
    X, base = figure1
    texts = ["p0.5.1", "m0.299", "p1.6.0", "p1.7.0"]
    cache: dict = {}
    folded = steering.fold(base, X, texts, "key", cache)
    # Every step priced (steer at each) gives the same steered fit and the same last price.
    model = base
    pins: dict = {}
    must: list = []
    names = list(X.columns)
    for text in texts:
        action = steering.parse(text)
        if action.kind == "pin":
            pins[(action.a, names[action.b])] = action.value == "1"
        else:
            must.append((action.a, action.b))
        each = steer(model, X, pins=pins or None, must_link=must or None)
        model = each.model
    assert np.array_equal(folded.model.labels_, model.labels_)
    assert np.array_equal(folded.model.feature_mask_, model.feature_mask_)
    assert folded.last.prices == each.prices and folded.last.objective_change == each.objective_change
    assert sum(key.endswith("+price") for key in cache) == 1
    # A last action refused: the price shown is the last applied one's.
    refused = steering.fold(base, X, texts + ["p9.0.1"], "key", cache)
    assert refused.last.prices == each.prices and len(refused.refused) == 1


def test_a_cell_pinned_again_replaces_its_pin_in_the_list():
    def cycled(current, text):
        return steering._compacted(current, steering.parse(text))

    assert cycled(["m0.1"], "p0.5.1") == ["m0.1", "p0.5.1"]
    assert cycled(["p0.5.1", "m0.1"], "p0.5.0") == ["m0.1", "p0.5.0"]
    assert cycled(["m0.1", "p0.5.0"], "p0.5.x") == ["m0.1"]  # free again: its pin leaves the list
    assert cycled(["p0.5.1", "p1.5.1"], "p0.5.0") == ["p1.5.1", "p0.5.0"]
    # After a merge the clusters are renumbered: an earlier pin of "cluster 0" is another cell.
    assert cycled(["p0.5.1", "M0.1"], "p0.5.0") == ["p0.5.1", "M0.1", "p0.5.0"]
    assert cycled(["p0.5.1", "M0.1"], "p0.5.x") == ["p0.5.1", "M0.1", "p0.5.x"]


def test_another_table_starts_unsteered():
    at = tuned(steer="p0.3.1")  # column 3 and cluster 0 exist in both tables
    assert ctx(at).model.pins_[0, 3] == 1
    at.selectbox(key="dataset").set_value("zoo").run()
    job = ctx(at).job
    if job is not None:
        assert job.wait(60)
        at.run()
    assert not at.exception, at.exception
    assert not ctx(at).model.pins_.any() and "steer" not in at.query_params
