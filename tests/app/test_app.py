"""The Streamlit app through ``streamlit.testing.v1.AppTest``.

Every page runs on every bundled example; widgets are driven by key; URL
parameters open a view; invalid combinations are prevented or explained; bad
uploads get a specific message and never a traceback. Figures themselves are
checked in ``test_plots.py``; here only that the pages draw them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from explorer.cache import STORE
from explorer.services import EXAMPLES, rho_from_share
from craft import prior_terms
from craft.priors import PriorTerms
from craft.export import labels_csv, masks_csv

from app_helpers import (  # noqa: F401 - clear_caches: autouse; pytestmark: this module's marks
    APP,
    PAGES,
    ROOT,
    SYNTHETIC,
    array,
    chart_elements,
    chart_titles,
    charts,
    clear_caches,
    ctx,
    errors,
    formulas,
    pytestmark,
    start,
    text,
    upload,
    visit,
)

TABS = ["Feature masks", "Data heatmap", "Sizes & profiles", "Projection", "Iterations"]


# ---------------------------------------------------------------------------
# Starting, pages, URL


def test_starts_on_an_example_with_a_result():
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Data"
    assert at.selectbox(key="dataset").value == "fig1_binary"
    model = ctx(at).model
    assert model is not None and model.n_clusters_ == 3
    assert at.success and "K = 3 clusters" in at.success[0].value
    assert [t.value for t in at.sidebar.title] == ["CRAFT Explorer"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_page_runs_on_every_example(name):
    query = {"dataset": name}
    if name in SYNTHETIC:
        query["syn_n"] = 120
    at = start(**query)
    assert ctx(at).data.name == name and ctx(at).model is not None
    for page in PAGES:
        visit(at, page)
        assert not errors(at), (page, errors(at))
        if page == "clusters":
            for tab in TABS[1:]:
                at.session_state["view"] = tab
                at.run()
                assert not at.exception, (tab, at.exception)
                assert not errors(at), (tab, errors(at))
            assert chart_elements(at), "the Iterations tab draws a chart"


def test_url_parameters_open_the_view():
    at = start("clusters", dataset="splice", m="0.3", k="3", view="Data heatmap")
    assert at.selectbox(key="dataset").value == "splice"
    assert at.slider(key="m").value == pytest.approx(0.3)
    assert at.number_input(key="k").value == 3
    params = ctx(at).params
    assert (params.m, params.k, params.size_by) == (0.3, 3, "k")
    assert ctx(at).data.name == "splice" and ctx(at).model.n_clusters_ == 3
    assert any(title.startswith("Data sorted by CRAFT cluster") for title in chart_titles(at))
    # splice's 60 features at m = 0.3: 18 per cluster
    assert (ctx(at).model.feature_mask_.sum(axis=1) == 18).all()


def test_url_with_lambda_and_roles_and_label():
    roles = json.dumps({"f1": "ignored"})
    at = start(dataset="fig2_numeric", syn_n=90, size_by="lambda", lam="25", roles=roles, label="(none)")
    state = ctx(at)
    assert state.params.size_by == "lambda" and state.model.lam_ == pytest.approx(25.0)
    assert "f1" not in state.model.feature_names_in_
    assert state.label is None
    assert json.loads(at.query_params["roles"]) == {"f1": "ignored"}


def test_invalid_url_values_fall_back_to_defaults():
    at = start(dataset="no-such-data", m="7", k="abc")
    assert at.selectbox(key="dataset").value == "fig1_binary"
    assert at.slider(key="m").value == pytest.approx(0.33)
    assert ctx(at).model is not None


# ---------------------------------------------------------------------------
# Tuning: each control changes the result where it should; going back is cached


def test_m_changes_the_number_of_selected_features_and_going_back_is_cached():
    at = start("clusters", dataset="fig2_numeric", syn_n=90)
    first = ctx(at)
    assert (first.model.feature_mask_.sum(axis=1) == 12).all()  # round(0.33 * 36)
    at.slider(key="m").set_value(0.5).run()
    assert (ctx(at).model.feature_mask_.sum(axis=1) == 18).all()
    at.slider(key="m").set_value(0.33).run()
    back = ctx(at)
    assert back.key == first.key
    # served from the cache: the same fit (its recorded time included), not a new one
    assert back.outcome.seconds == first.outcome.seconds
    assert np.array_equal(back.model.labels_, first.model.labels_)


def test_k_and_k_method_and_lambda_change_the_clusters():
    at = start("clusters", dataset="fig1_binary", syn_n=120)
    assert ctx(at).model.n_clusters_ == 3
    at.number_input(key="k").set_value(2).run()
    assert ctx(at).model.n_clusters_ == 2
    search_lam = ctx(at).model.lam_
    at.radio(key="k_method").set_value("farthest_first").run()
    assert ctx(at).params.k_method == "farthest_first"
    assert ctx(at).model.lam_ != pytest.approx(search_lam)
    at.radio(key="size_by").set_value("lambda").run()
    at.number_input(key="lam").set_value(1000.0).run()
    assert ctx(at).model.lam_ == pytest.approx(1000.0)
    assert ctx(at).model.n_clusters_ == 1
    # Tune & see's compact header writes the fit's numbers in one line.
    assert any("λ used **1000**" in m.value for m in at.markdown)


def test_rho_control_is_always_valid_and_moves_rho():
    at = start("clusters", dataset="fig1_binary", syn_n=120)
    assert ctx(at).model.rho_ == pytest.approx(0.33 * 0.67 - 0.01)
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert "valid range (0, m(1−m)) = (0, 0.2211)" in caption
    at.checkbox(key="rho_auto").uncheck().run()
    at.slider(key="rho_share").set_value(0.2).run()
    assert ctx(at).model.rho_ == pytest.approx(0.2 * 0.33 * 0.67)
    # the slider sets rho / m(1-m): it can never leave (0, m(1-m)), whatever m becomes
    slider = at.slider(key="rho_share")
    assert (slider.min, slider.max) == (0.001, 0.999)
    # down to a thousandth: a share of 0.01 still leaves clusters apart under "shrink"
    slider.set_value(0.001).run()
    assert ctx(at).model.rho_ == pytest.approx(0.001 * 0.33 * 0.67)
    for m in (0.05, 0.5, 0.95):
        at.slider(key="m").set_value(m).run()
        assert not errors(at)
        assert 0 < ctx(at).model.rho_ < m * (1 - m)


def test_budget_eps_and_standardize_change_the_selection():
    # The link's values win over the example's presets (approximate budget, raw units).
    at = start("clusters", dataset="fig3_numeric", syn_n=150, budget="fixed", standardize="true")
    assert len(set(ctx(at).model.feature_mask_.sum(axis=1))) == 1  # fixed budget: same count everywhere
    at.radio(key="budget").set_value("approximate").run()
    at.checkbox(key="standardize").uncheck().run()
    at.number_input(key="eps_v").set_value(4.0).run()
    model = ctx(at).model
    # the paper's Figure 3(d): subspaces of 9, 16 and 8 features recovered
    assert sorted(model.feature_mask_.sum(axis=1).tolist()) == [8, 9, 16]
    at.number_input(key="eps_v").set_value(0.5).run()
    assert sorted(ctx(at).model.feature_mask_.sum(axis=1).tolist()) != [8, 9, 16]
    at.radio(key="budget").set_value("approximate").run()
    at.slider(key="eps_c").set_value(0.5).run()
    assert ctx(at).params.eps_c == 0.5


def test_seed_restarts_and_max_iter_reach_the_engine():
    at = start("clusters", dataset="mixed_planted", syn_n=150)
    at.number_input(key="max_iter").set_value(1).run()
    model = ctx(at).model
    assert model.n_iter_ == 1
    at.number_input(key="seed").set_value(5).run()
    at.slider(key="n_init").set_value(2).run()
    params = ctx(at).params
    assert (params.seed, params.n_init, params.max_iter) == (5, 2, 1)
    assert ctx(at).model.random_state == 5 and ctx(at).model.n_init == 2


def test_synthetic_rows_and_data_seed():
    at = start(dataset="fig1_binary", syn_n=90)
    assert len(ctx(at).data.table) == 90
    at.number_input(key="syn_n").set_value(150).run()
    assert len(ctx(at).data.table) == 150 and len(ctx(at).model.labels_) == 150
    before = ctx(at).data.table.copy()
    at.number_input(key="syn_seed").set_value(3).run()
    assert not ctx(at).data.table.equals(before)


def test_choosing_a_dataset_applies_its_preset():
    at = start()
    at.selectbox(key="dataset").set_value("zoo").run()
    assert not at.exception
    assert ctx(at).params.k == 7 and ctx(at).params.m == 0.5
    assert ctx(at).model.n_clusters_ == 7
    at.selectbox(key="dataset").set_value("fig3_numeric").run()
    params = ctx(at).params
    assert (params.budget, params.standardize, params.eps_v) == ("approximate", False, 6.0)


def test_k_above_the_rows_is_explained():
    at = start("clusters", dataset="zoo", k=150)
    message = " ".join(errors(at))
    assert "k = 150 clusters cannot be found in 101 rows: choose k ≤ 101" in message


# ---------------------------------------------------------------------------
# Clusters page views


def test_a_cluster_that_selects_no_feature_is_explained():
    # Credit-g under the approximate budget at ε_c = 0.9: its largest cluster selects nothing.
    at = start("clusters", dataset="credit-g", budget="approximate", eps_c="0.9")
    model = ctx(at).model
    empty = np.flatnonzero(~model.selection_.selected.any(axis=1))
    assert empty.size
    said = " ".join(text(box) for box in at.info)
    for k in empty:
        assert f"luster {k} ({model.cluster_sizes_[k]:,} rows)" in said, said
    assert "select no feature" in said or "selects no feature" in said
    assert "no other cluster fits better than the table as a whole" in said
    at.session_state["view"] = "Sizes & profiles"
    at.run()
    at.selectbox(key="profile_cluster").set_value(int(empty[0])).run()
    assert any("selects none of its" in text(block) for block in at.markdown)


def test_clusters_page_draws_the_paper_pair_and_profiles():
    at = start("clusters", dataset="fig1_binary", syn_n=120)
    spec = charts(at)[0]
    assert spec["layout"]["title"]["text"] == "Planted subspaces | CRAFT's selected features"
    truth, found = (array(trace["z"]) for trace in spec["data"] if trace["type"] == "heatmap")
    assert truth.shape == (3, 24) and truth.sum() == 24
    assert np.array_equal(truth, found)  # Figure 1(b): exact recovery
    at.session_state["view"] = "Data heatmap"
    at.run()
    assert chart_titles(at)[0].startswith("Dataset | CRAFT")
    at.session_state["view"] = "Sizes & profiles"
    at.run()
    assert chart_titles(at)[0] == "Cluster sizes (3 clusters, 120 rows)"
    at.selectbox(key="profile_cluster").set_value(1).run()
    words = " ".join(text(m) for m in at.markdown)
    assert "Cluster 1 has 40 rows and selects 8 of 24 features" in words
    assert "is the largest of 24 categorical features, within the budget of 8; '1' is 100% of the cluster" in words


def test_large_heatmaps_say_they_are_sampled():
    at = start("clusters", dataset="mixed_planted", syn_n=3000, k=4, view="Data heatmap")
    assert "400 of 3,000 rows shown (stratified sample)" in chart_titles(at)[0]
    assert any("the fit used all 3,000 rows" in c.value for c in at.caption)
    assert len(ctx(at).model.labels_) == 3000
    at.select_slider(key="heat_rows").set_value(100).run()
    assert "100 of 3,000 rows shown" in chart_titles(at)[0]


# ---------------------------------------------------------------------------
# Evaluate


def test_evaluate_scores_against_the_label():
    at = start("evaluate", dataset="wine", k=3, m=0.5)
    labels = {m.label: m.value for m in at.metric}
    assert float(labels["Purity"]) > 0.6 and float(labels["ARI"]) > 0.2
    assert labels["Clusters / classes"] == "3 / 3"
    spec = charts(at)[0]
    assert spec["layout"]["title"]["text"] == "Confusion matrix (clusters × classes)"
    assert array(spec["data"][0]["text"]).sum() == 178


def test_evaluate_without_a_label_says_so():
    at = start("evaluate", dataset="wine", label="(none)")
    assert "no label column" in at.info[0].value
    assert [m.label for m in at.metric][-1] == "Objective"
    assert chart_titles(at)[0].startswith("Cluster sizes")


# ---------------------------------------------------------------------------
# Teach


def test_teach_steps_through_the_iterations():
    at = start("teach", dataset="mixed_planted", syn_n=150, k=4)
    model = ctx(at).model
    history = model.history_
    if len(history) > 1:
        at.slider(key="teach_iter").set_value(1).run()
        assert not at.exception
    record = history[0] if len(history) > 1 else history[-1]
    values = {m.label: m.value for m in at.metric}
    assert values["Clusters after the pass"] == str(record.n_clusters)
    assert values["Clusters opened"] == str(record.n_opened)
    at.number_input(key="teach_row").set_value(5).run()
    shown = formulas(at)
    best = next(f for f in shown if f.startswith("d_{5,"))
    state = at.session_state["ctx"]
    assert best.endswith(f"= {min_distance(state, 5):.4g}")
    assert any(f.startswith(r"\lambda + D F_0 = ") for f in shown)
    # ρ lies in (0, m(1−m)): the share stops short of both ends (no "ρ = 0").
    slider = at.slider(key="teach_rho")
    assert 0 < slider.min and slider.max < 1
    slider.set_value(0.01).run()
    near_global = prior_terms(model.options_.terms.m, rho_from_share(model.options_.terms.m, 0.01))
    assert any(rf"\times 0.01 = \begin{{cases}} {near_global.selection_probability(1.0):.3f} & v_{{kd}} = 1 \\ "
               rf"{near_global.selection_probability(0.0):.3f} & v_{{kd}} = 0" in f for f in formulas(at))


def test_teach_reads_the_posterior_mean_of_nu_from_the_prior_terms(monkeypatch):
    """Teach writes no formula of its own for ν: another one in PriorTerms shows on the page."""
    at = start("teach", dataset="mixed_planted", syn_n=150, k=4)
    monkeypatch.setattr(PriorTerms, "selection_probability", lambda self, share: 0.25 + share / 8)
    at.slider(key="teach_rho").set_value(0.5).run()
    assert not at.exception, at.exception
    assert any(r"\begin{cases} 0.375 & v_{kd} = 1 \\ 0.250 & v_{kd} = 0" in f for f in formulas(at))


def min_distance(state, row: int) -> float:
    """Smallest d_nk of ``row`` after the shown iteration, straight from the engine."""
    from craft import _engine

    t = len(state.model.history_) if len(state.model.history_) == 1 else 1
    clusters = state.model.inspect_iteration(state.X, t).clusters
    data = state.model.encoder_.transform(state.X)
    return float(_engine.cost_matrix(data, clusters, state.model.options_.terms)[row].min())


# ---------------------------------------------------------------------------
# Compare and What-if


def test_compare_runs_the_chosen_methods():
    at = start("compare", dataset="fig2_numeric", syn_n=90)
    assert "Run the comparison" in at.info[0].value
    at.multiselect(key="compare_methods").set_value(["CRAFT", "DP-means", "k-means (one-hot)"])
    at.number_input(key="compare_k").set_value(3)
    at.form_submit_button[0].click().run()
    assert not at.exception
    frame = at.dataframe[0].value
    assert frame["method"].tolist() == ["CRAFT", "DP-means", "k-means (one-hot)"]
    assert frame.loc[0, "ari"] == pytest.approx(1.0)
    assert chart_titles(at) == ["Purity, NMI and ARI per method"]


def test_whatif_sweep_and_mask_stability():
    at = start("whatif", dataset="fig2_numeric", syn_n=90)
    at.selectbox(key="sweep_param").set_value("k").run()
    at.number_input(key="sweep_low_k").set_value(2.0)
    at.number_input(key="sweep_high_k").set_value(3.0)
    at.number_input(key="sweep_steps").set_value(2)
    at.number_input(key="sweep_seeds").set_value(1)
    at.form_submit_button[0].click().run()
    assert not at.exception
    titles = chart_titles(at)
    assert titles and titles[0].startswith("Sweep over k (number of clusters) (2 values × 1 seed(s)")
    at.slider(key="stability_runs").set_value(2)
    at.form_submit_button[1].click().run()
    assert not at.exception
    # One stability routine and figure (issue 33): craft.stability's seed refits, drawn as Evaluate draws them.
    assert any(t.startswith("Which selected features are solid") for t in chart_titles(at))
    found = at.session_state["results"]["stability"][1]
    assert found.method == "seed" and found.n_resamples == 2 and found.present.all()
    assert any("2 seed refits" in caption.value for caption in at.caption)


def test_whatif_invalid_range_is_explained():
    at = start("whatif", dataset="fig1_binary", syn_n=90)
    at.selectbox(key="sweep_param").set_value("rho").run()
    at.number_input(key="sweep_low_rho").set_value(1.5)
    at.number_input(key="sweep_high_rho").set_value(3.0)
    at.form_submit_button[0].click().run()
    assert not at.exception
    assert "No value of rho in [1.5, 3] lies inside its valid range (0, 1)" in " ".join(errors(at))


# ---------------------------------------------------------------------------
# Export


def _file_id(data: bytes, mime: str, name: str) -> str:
    try:
        from streamlit.runtime.memory_media_file_storage import _calculate_file_id
    except ImportError:  # pragma: no cover - depends on Streamlit internals
        pytest.skip("Streamlit no longer exposes _calculate_file_id: download contents cannot be matched")
    return _calculate_file_id(data, mime, name)


def test_export_offers_labels_masks_params_and_report(downloads):
    at = start("export", dataset="fig1_binary", syn_n=60)
    state = ctx(at)
    buttons = {b.label: b for b in at.get("download_button")}  # type: ignore[union-attr]  # AppTest.get: Element | Block
    labels = buttons["Labels (CSV, the original rows + their cluster)"]
    expected = labels_csv(state.data.table, state.model.labels_)
    assert labels.proto.url.endswith(_file_id(expected, "text/csv", "fig1_binary_craft_labels.csv") + ".csv")
    assert downloads["fig1_binary_craft_labels.csv"] == expected
    masks = buttons["Feature masks (CSV, clusters × features)"]
    assert masks.proto.url.endswith(_file_id(masks_csv(state.model), "text/csv", "fig1_binary_craft_masks.csv") + ".csv")
    assert "Parameters (JSON)" in buttons
    assert "Download the HTML report" not in buttons
    at.button(key="build_report").click().run()
    assert not at.exception
    assert "Download the HTML report" in {b.label for b in at.get("download_button")}  # type: ignore[union-attr]
    key, document = at.session_state["report"]
    assert key == f"{state.key}|{state.label}" and document.count("plotly-graph-div") >= 5
    assert at.code[0].value.endswith("?syn_n=60&n_init_auto=false&n_init=1")  # the default dataset is not repeated
    at.slider(key="m").set_value(0.5).run()
    assert at.code[0].value.endswith("?syn_n=60&m=0.5&n_init_auto=false&n_init=1")


def test_share_query_reopens_the_same_fit():
    at = start("export", dataset="fig2_numeric", syn_n=90, m="0.4", k="2", n_init="2")
    query = "?" + at.code[0].value.split("?", 1)[1]
    assert "dataset=fig2_numeric" in query
    first = ctx(at)
    st.cache_data.clear()
    STORE.clear()
    again = AppTest.from_file(APP, default_timeout=90)
    for key, value in re.findall(r"([^?&=]+)=([^&]*)", query):
        again.query_params[key] = value.replace("+", " ")
    again.run()
    assert not again.exception
    assert ctx(again).params == first.params
    assert np.array_equal(ctx(again).model.labels_, first.model.labels_)


# ---------------------------------------------------------------------------
# Uploads and bad input


def test_good_upload_with_label_roles_and_evaluation():
    rng = np.random.default_rng(0)
    groups = np.repeat([0, 1], 30)
    table = pd.DataFrame({
        "size": groups * 6.0 + rng.normal(0, 0.4, 60),
        "noise": rng.normal(0, 2, 60),
        "colour": np.where(groups == 0, "red", "blue"),
        "class": np.where(groups == 0, "A", "B"),
    })
    at = start()
    upload(at, "mine.csv", table.to_csv(index=False).encode())
    state = ctx(at)
    assert at.selectbox(key="dataset").value == "(uploaded file)"
    assert state.data.name == "mine.csv" and state.label == "class"
    assert "class" not in state.model.feature_names_in_
    assert "roles" not in at.query_params and "label" not in at.query_params  # uploads are not shared
    visit(at, "evaluate")
    assert {m.label: m.value for m in at.metric}["Purity"] == "1.000"
    visit(at, "data")
    at.selectbox(key="label_select").set_value("(none)").run()
    assert ctx(at).label is None
    visit(at, "evaluate")
    assert "no label column" in at.info[0].value
    visit(at, "data")
    at.multiselect(key="roles_columns").set_value(["noise"])
    at.radio(key="roles_role").set_value("ignored")
    at.form_submit_button[0].click().run()
    assert "noise" not in ctx(at).model.feature_names_in_
    at.button(key="roles_reset").click().run()
    assert "noise" in ctx(at).model.feature_names_in_


def test_an_uploaded_tables_reader_notes_stay_out_of_streamlits_tables(recwarn):
    """The reader's notes (``attrs``) are not handed to ``st.dataframe``, which cannot serialise them."""
    table = pd.DataFrame({"size": np.arange(40.0) % 7, "colour": np.where(np.arange(40) % 2, "red", "blue")})
    at = start()
    upload(at, "mine.csv", table.to_csv(index=False).encode())
    assert at.dataframe, "the Data page shows the table"
    for page in ("cards", "data"):
        visit(at, page)
    unserialisable = [str(w.message) for w in recwarn if "Could not serialize pd.DataFrame.attrs" in str(w.message)]
    assert not unserialisable, unserialisable


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("garbage.csv", bytes(range(256)) * 40, "it looks like binary data, not text"),
        ("empty.csv", b"", "the file is empty"),
        ("header.csv", b"a,b,c\n", "it has a header but no data rows"),
        ("one.csv", b"a,b\n1,x\n", "has only 1 data row; clustering needs at least 2 rows"),
        ("sheet.xlsx", b"PK\x03\x04 not really a workbook", "Upload a CSV/TSV, Parquet or Excel"),
    ],
)
def test_bad_uploads_are_refused_with_a_specific_message(name, content, message):
    at = start()
    upload(at, name, content)
    shown = " ".join(errors(at))
    assert message in shown and "Upload" in shown
    assert "Traceback" not in shown
    assert ctx(at).data.name == "fig1_binary"  # the previous data stay
    assert any("Still showing 'fig1_binary'" in text(i) for i in at.info)


def test_table_without_usable_column_is_explained_on_every_page_and_fixable():
    content = ("id,name\n" + "\n".join(f"{i},n{i % 4}x{i}" for i in range(40))).encode()
    at = start()
    upload(at, "ids.csv", content)
    assert ctx(at).model is None
    for page in PAGES:
        visit(at, page)
        if page in ("data",):
            continue
        assert any("No usable column" in e for e in errors(at)), page
    visit(at, "data")
    at.multiselect(key="roles_columns").set_value(["id"])
    at.radio(key="roles_role").set_value("numeric")
    at.form_submit_button[0].click().run()
    assert not at.exception and ctx(at).model is not None


def test_column_roles_that_break_the_fit_are_explained():
    bad = pd.DataFrame({"x": ["1", "2", "three", "4"] * 5, "y": np.arange(20.0)})
    at = start()
    upload(at, "mixed.csv", bad.to_csv(index=False).encode())
    at.multiselect(key="roles_columns").set_value(["x"])
    at.radio(key="roles_role").set_value("numeric")
    at.form_submit_button[0].click().run()
    assert not at.exception
    assert any("Column 'x' is numeric in the schema but" in e for e in errors(at))


def test_user_strings_are_never_rendered_as_markdown_or_html():
    evil = "[click](javascript:alert(1)) <b>$x$</b>"
    table = pd.DataFrame({evil: np.r_[np.zeros(10), np.ones(10) * 5], "c": [evil] * 10 + ["ok"] * 10})
    at = start()
    upload(at, "evil.csv", table.to_csv(index=False).encode())
    assert not at.exception
    for page in PAGES:
        visit(at, page)
        for element in list(at.markdown) + list(at.caption) + list(at.error) + list(at.info):
            assert "[click](javascript" not in element.value
            assert "<b>" not in element.value
    sources = list(ROOT.glob("pages/*.py")) + list(ROOT.glob("explorer/*.py")) + [ROOT / "app.py"]
    assert not [str(p) for p in sources if "unsafe_allow_html" in p.read_text()]


# ---------------------------------------------------------------------------
# Sessions, configuration, packaging


def test_two_sessions_share_no_mutable_state():
    one = start(dataset="fig1_binary", syn_n=90)
    two = start(dataset="fig1_binary", syn_n=90)
    assert ctx(one).key == ctx(two).key  # the same cached fit...
    assert ctx(one).model is not ctx(two).model  # ...handed out as copies
    ctx(one).model.labels_[:] = 99
    ctx(one).data.table["f1"] = "changed"
    one.slider(key="m").set_value(0.5).run()
    two.run()
    assert ctx(two).params.m == pytest.approx(0.33)
    assert set(np.unique(ctx(two).model.labels_)) == {0, 1, 2}
    assert set(ctx(two).data.table["f1"]) == {"0", "1"}


def test_upload_limit_is_configured_and_stated():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert re.search(r"^maxUploadSize = 200$", config, re.M)
    assert re.search(r'^showErrorDetails = "type"$', config, re.M)
    at = start()
    limit = st.get_option("server.maxUploadSize")
    assert any(f"Files up to {limit} MB" in c.value for c in at.caption)


def test_importing_craft_and_the_services_does_not_import_streamlit():
    code = (
        "import sys, craft, craft.plots, craft.profiles, craft.export, craft.report, explorer.services; "
        "print('streamlit' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_page_reached_directly_renders_its_own_frame():
    # A deep link to a fresh server runs the page script on its own (Streamlit's
    # first-generation multipage mode); the page then draws the sidebar and fits.
    at = AppTest.from_file(str(ROOT / "pages" / "clusters.py"), default_timeout=90).run()
    assert not at.exception
    assert at.sidebar.selectbox(key="dataset").value == "fig1_binary"
    assert at.session_state["ctx"].model.n_clusters_ == 3


def test_upload_with_zip_codes_and_dates_shows_them_ignored_with_the_reason():
    rng = np.random.default_rng(4)
    groups = np.repeat([0, 1], 60)
    days = pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 400, 120), unit="D")
    table = pd.DataFrame({
        "zip": [f"{z:05d}" for z in rng.choice(rng.integers(1000, 99_999, 40), 120)],
        "visited": days.strftime("%Y-%m-%d"),
        "spend": groups * 8.0 + rng.normal(0, 1, 120),
        "visits": groups * 5.0 + rng.normal(0, 1, 120),
    })
    at = start()
    upload(at, "shops.csv", table.to_csv(index=False).encode())
    assert set(ctx(at).model.feature_names_in_) == {"spend", "visits"}
    roles = next(frame.value for frame in at.dataframe if "reason" in frame.value.columns).set_index("column")
    assert roles.loc["zip", "role"] == "ignored" and roles.loc["visited", "role"] == "ignored"
    assert roles.loc["zip", "reason"].startswith("digit codes with leading zeros (e.g. ")
    assert "identifier-like codes" in roles.loc["zip", "reason"]
    assert roles.loc["visited", "reason"].startswith(
        f"ISO 8601 text dates: looks like a date ({days.normalize().nunique():,} distinct days, "
        f"{days.min():%Y-%m-%d} to {days.max():%Y-%m-%d}) → ignored")
    # The reason's way to switch it on works.
    at.multiselect(key="roles_columns").set_value(["visited"])
    at.radio(key="roles_role").set_value("categorical")
    at.form_submit_button[0].click().run()
    assert not at.exception and "visited" in ctx(at).model.feature_names_in_
