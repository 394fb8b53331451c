"""A lecture with the app: the paper's examples reproduce their figures, ρ visibly acts, views are shareable.

AppTest, like ``test_app.py`` (whose helpers are reused); the same points in
a real browser are in ``tests/browser/test_presentation.py``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from app_helpers import (
    APP,
    PAGES,
    SYNTHETIC,
    array,
    chart_config,
    chart_elements,
    chart_spec,
    charts,
    clear_caches,
    ctx,
    errors,
    pytestmark,
    text,
    upload,
    visit,
)

from explorer import figure_export, state
from explorer.services import EXAMPLE_ROWS, PRESETS, truth_agreement

__all__ = ["clear_caches", "pytestmark"]  # the autouse cache fixture and the warning filters of test_app


def open_app(**query) -> AppTest:
    """The app as a visitor opens it: no parameter but those in ``query`` (the defaults' restarts)."""
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    return at


def agreement_text(at: AppTest) -> str:
    return " ".join(text(box) for box in [*at.success, *at.warning] if "planted truth" in box.value)


# ---------------------------------------------------------------------------
# Every paper example reproduces its figure in its default view


@pytest.mark.slow
@pytest.mark.parametrize("name", SYNTHETIC)
def test_every_paper_example_default_view_shows_full_agreement(name):
    at = open_app(dataset=name)
    visit(at, "clusters")
    model, data = ctx(at).model, ctx(at).data
    agreement = truth_agreement(model, data)
    n = data.true_mask.shape[0]
    assert agreement["exact"], (name, agreement)
    shown = agreement_text(at)
    assert f"{n} of {n} clusters matched" in shown and f"{n} of {n} masks equal" in shown
    assert "The figure of the paper is reproduced" in shown
    assert len(data.table) == EXAMPLE_ROWS.get(name, state.DEFAULT_SYNTHETIC_ROWS)


def test_a_wrong_fit_shows_its_disagreement_as_numbers():
    # One restart at m = 0.1 cannot select Figure 1's 8-feature subspaces.
    at = open_app(dataset="fig1_binary", m="0.1", n_init="1")
    visit(at, "clusters")
    shown = agreement_text(at)
    assert "3 of 3 clusters matched" in shown and "0 of 3 masks equal" in shown
    assert at.warning and not [box for box in at.success if "planted truth" in box.value]


def test_planted_and_found_clusters_are_numbered_from_zero():
    at = open_app(dataset="fig1_binary", n_init="1")
    visit(at, "clusters")
    labels = set(ctx(at).data.table["true_cluster"])
    assert labels == {"planted 0", "planted 1", "planted 2"}
    masks = next(spec for spec in charts(at) if "Planted subspaces" in spec["layout"]["title"]["text"])
    planted_rows = masks["data"][0]["y"]
    found_rows = masks["data"][1]["y"]
    assert list(planted_rows) == ["planted 0", "planted 1", "planted 2"]
    assert all(re.match(r"cluster [0-2] ", row) for row in found_rows)


# ---------------------------------------------------------------------------
# Presets: the same from the list and from the URL; uploads get their own k


@pytest.mark.parametrize("name", ["splice", "fig3_numeric", "fig1_binary_modified"])
def test_presets_apply_the_same_from_the_list_and_from_the_url(name):
    from_url = open_app(dataset=name, n_init="1")
    from_list = open_app(n_init="1")
    from_list.selectbox(key="dataset").set_value(name).run()
    assert not from_list.exception
    assert ctx(from_url).params == ctx(from_list).params
    for key, value in PRESETS[name].items():
        assert getattr(ctx(from_url).params, key) == value
    assert len(ctx(from_url).data.table) == len(ctx(from_list).data.table)


def test_a_link_value_wins_over_the_preset():
    at = open_app(dataset="splice", m="0.3", n_init="1")
    assert ctx(at).params.m == 0.3 and ctx(at).params.k == PRESETS["splice"]["k"]


def _classes_table(n_classes: int, rows_per_class: int = 12) -> bytes:
    rng = np.random.default_rng(0)
    classes = np.repeat(np.arange(n_classes), rows_per_class)
    table = pd.DataFrame({
        "a": classes * 5.0 + rng.normal(0, 0.3, classes.size),
        "b": rng.normal(0, 1, classes.size),
        "class": [chr(ord("A") + c) for c in classes],
    })
    return table.to_csv(index=False).encode()


def test_a_new_upload_gets_k_from_its_label_column_not_the_previous_datasets():
    at = open_app(dataset="zoo", n_init="1")
    assert ctx(at).params.k == 7
    upload(at, "letters.csv", _classes_table(5))
    assert ctx(at).label == "class" and ctx(at).params.k == 5
    assert at.number_input(key="k").value == 5
    assert any("the number of classes in the label column 'class'" in text(box) for box in at.info)
    # Without a label column: the default k, said so.
    table = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7})
    upload(at, "plain.csv", table.to_csv(index=False).encode())
    assert ctx(at).label is None and ctx(at).params.k == 3
    assert any("no label column is chosen" in text(box) for box in at.info)


def test_the_k_note_of_an_upload_follows_the_label_and_k_the_user_picks():
    at = open_app(n_init="1")
    table = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7, "group": list("WXYZ") * 10})
    upload(at, "plain.csv", table.to_csv(index=False).encode())
    assert ctx(at).label is None and ctx(at).params.k == 3
    at.selectbox(key="label_select").set_value("group").run()
    assert ctx(at).label == "group"
    said = [text(box) for box in at.info]
    assert not any("no label column" in line for line in said), said
    assert any("the label column 'group' has 4 classes: set k = 4" in line for line in said), said
    at.number_input(key="k").set_value(4).run()
    assert ctx(at).params.k == 4
    assert any("k = 4: the number of classes in the label column 'group'" in text(box) for box in at.info)


def test_only_tables_with_a_planted_truth_offer_the_planted_toggles():
    at = open_app(dataset="fig2_numeric", n_init="1")
    visit(at, "clusters")
    assert [toggle.key for toggle in at.toggle] == ["mask_truth"]
    visit(at, "data")
    upload(at, "letters.csv", _classes_table(3))
    visit(at, "clusters")
    assert ctx(at).data.kind == "upload" and chart_elements(at)
    assert not at.toggle  # no switch shown on (and greyed) for a table that has no planted subspaces
    at.session_state["view"] = "Data heatmap"
    at.run()
    assert chart_elements(at) and not at.toggle


def test_a_shared_link_to_an_upload_asks_for_the_table_again():
    at = open_app(dataset=state.UPLOAD, k="5", m="0.4", n_init="1")
    assert ctx(at).model is None and ctx(at).data is None
    message = " ".join(errors(at))
    assert "uploaded table" in message and "upload it on the Data page" in message
    assert at.selectbox(key="dataset").value == state.UPLOAD
    for page in ("clusters", "teach", "export"):
        visit(at, page)
        assert any("has to be uploaded again" in e for e in errors(at)), page
    # Uploading the table again applies the link's parameters to it.
    upload(at, "again.csv", _classes_table(3))
    assert ctx(at).model is not None and ctx(at).params.k == 5 and ctx(at).params.m == 0.4
    assert not errors(at)


def test_export_share_link_keeps_the_page_and_tab():
    at = open_app(dataset="fig2_numeric", syn_n="90", n_init="1")
    visit(at, "clusters")
    at.session_state["view"] = "Data heatmap"
    at.run()
    visit(at, "export")
    assert at.selectbox(key="share_page").value == "clusters"
    link = at.code[-1].value
    assert "dataset=fig2_numeric" in link and "view=Data+heatmap" in link
    at.selectbox(key="share_page").set_value("teach").run()
    assert "view=" not in at.code[-1].value


# ---------------------------------------------------------------------------
# ρ: the sidebar's rule, what it does, and the Teach demonstration


def test_rho_rule_in_the_sidebar_reaches_the_engine():
    at = open_app(dataset="fig2_numeric", n_init="1")
    assert ctx(at).model.rho_selection == "paper"
    assert any("does not change which features" in c.value for c in at.sidebar.caption)
    at.radio(key="rho_selection").set_value("shrink").run()
    at.checkbox(key="rho_auto").uncheck().run()
    at.slider(key="rho_share").set_value(0.01).run()
    mask = ctx(at).model.feature_mask_
    assert ctx(at).model.rho_selection == "shrink" and (mask == mask[0]).all()


def disagreements(captions: list[str], mode: str) -> list[int]:
    """Features on which the clusters disagree, per ρ of the demonstration, from its caption for ``mode``."""
    line = next(c for c in captions if c.startswith(f"{mode}: clusters disagree on"))
    return [int(n) for n in re.findall(r"(\d+) feature\(s\) at ρ = ", line)]


def test_teach_rho_demonstration_changes_the_masks_under_shrink_only():
    at = open_app(dataset="fig2_numeric", n_init="1")
    visit(at, "teach")
    shown = [c.value for c in at.caption]
    paper, shrink = disagreements(shown, "paper"), disagreements(shown, "shrink")
    assert len(paper) == len(shrink) == 4  # 4 values of rho x 2 rules
    assert all(d > 0 for d in paper)  # the paper's rule stays cluster-specific at every rho
    assert shrink[0] == 0 and shrink[-1] > 0  # shrink: one common set near 0, cluster-specific near m(1-m)
    panels = {spec["layout"]["title"]["text"]: spec for spec in charts(at)}
    for mode in ("paper", "shrink"):
        figure = panels[f"ρ acts on: {mode}"]
        assert len([trace for trace in figure["data"] if trace["type"] == "heatmap"]) == 4
    # The panels show the masks the captions count: the first shrink panel has identical rows.
    first = array(panels["ρ acts on: shrink"]["data"][0]["z"])
    assert (first == first[0]).all()


def test_teach_rho_demonstration_of_a_large_table_refits_a_sample_and_says_so():
    at = open_app(dataset="fig2_numeric", syn_n="2100", n_init="1")
    visit(at, "teach")
    said = " ".join(c.value for c in at.caption)
    assert "on a sample of 2,000 of the table's 2,100 rows" in said
    assert "the slider above does not move them" in said
    assert len(disagreements([c.value for c in at.caption], "shrink")) == 4
    assert "masks further down are refitted at four fixed shares" in at.slider(key="teach_rho").help


def test_teach_iteration_one_rings_only_the_points_the_counter_counts():
    at = open_app(dataset="fig1_binary", n_init="1")
    visit(at, "teach")
    history = ctx(at).model.history_
    at.slider(key="teach_iter").set_value(1).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Points that changed cluster"] == f"{history[0].n_changed:,}"
    assert any(m.value == "**After iteration 1 of " + f"{len(history)}**" for m in at.markdown)
    projection = next(spec for spec in charts(at) if "Assignments after iteration 1" in spec["layout"]["title"]["text"])
    rings = [trace for trace in projection["data"] if trace.get("marker", {}).get("symbol") == "circle-open"]
    assert len(rings) == 1 and array(rings[0]["customdata"]).size == history[0].n_changed < len(ctx(at).data.table)
    # The fit on screen started from seeded clusters (init="craft++"), and its caption says so.
    assert any("seeded before the first pass" in c.value for c in at.caption)
    assert not any("every point in cluster 0" in c.value for c in at.caption)


def test_teach_steps_leave_an_unchanged_figure_as_it_is():
    """A step whose masks equal the previous step's sends the same figure and config: the browser keeps it."""
    at = open_app(dataset="fig1_binary", n_init="1")
    visit(at, "teach")
    history = ctx(at).model.history_
    same = [t for t in range(2, len(history) + 1)
            if np.array_equal(history[t - 1].feature_mask, history[t - 2].feature_mask)]
    assert same, "the example's kept run has no two iterations with equal masks"
    shown = {}
    for t in (same[0] - 1, same[0]):
        at.slider(key="teach_iter").set_value(t).run()
        masks, projection = chart_elements(at)[:2]
        shown[t] = (chart_spec(masks), chart_config(masks), chart_spec(projection))
    (masks_before, config_before, projection_before), (masks_after, config_after, projection_after) = shown.values()
    assert masks_before == masks_after and config_before == config_after
    # The assignments did change (other rings), so that figure is sent anew.
    assert projection_before != projection_after


# ---------------------------------------------------------------------------
# Presentation


def test_approximate_budget_thresholds_are_in_view_not_in_an_expander():
    at = open_app(dataset="fig3_categorical", n_init="1")
    assert at.sidebar.slider(key="eps_c").value == PRESETS["fig3_categorical"]["eps_c"]
    for expander in at.sidebar.expander:
        inside = {getattr(element, "key", None) for element in expander}
        assert not inside & {"eps_c", "eps_v", "budget"}
    at.radio(key="budget").set_value("fixed").run()
    assert not [s for s in at.sidebar.slider if s.key == "eps_c"]


@pytest.mark.parametrize("page", ["clusters", "evaluate", "teach"])
def test_every_figure_has_svg_and_png_downloads(page):
    at = open_app(dataset="fig1_binary", syn_n="90", n_init="1")
    visit(at, page)
    keys = {button.key for button in at.get("download_button")}
    figures = chart_elements(at)
    assert figures
    if figure_export.server_export_available():
        chart_keys = {chart.proto.id for chart in figures}
        svg = {key for key in keys if key and key.endswith("_svg")}
        png = {key for key in keys if key and key.endswith("_png")}
        assert len(svg) == len(png) == len(figures), (svg, chart_keys)
    for chart in figures:
        config = chart_config(chart)
        assert '"format": "svg"' in config or '"format":"svg"' in config


def test_export_page_lists_every_figure_of_the_fit():
    at = open_app(dataset="fig1_binary", syn_n="90", n_init="1")
    visit(at, "export")
    keys = {button.key for button in at.get("download_button")}
    for name in ("craft_feature_masks", "craft_data_heatmap", "craft_cluster_sizes", "craft_iterations",
                 "craft_projection"):
        assert {f"export_{name}_svg", f"export_{name}_png"} <= keys


def test_static_export_renders_svg_and_png_offline():
    if not figure_export.server_export_available():
        pytest.skip("kaleido or a Chromium is not installed: the figures' toolbar camera is the export route")
    import plotly.graph_objects as go

    spec = go.Figure(go.Heatmap(z=[[0, 1], [1, 0]])).to_json()
    assert figure_export.static_image(spec, "svg").lstrip().startswith(b"<svg")
    assert figure_export.static_image(spec, "png").startswith(b"\x89PNG")


def test_no_deploy_button_configured():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    assert config["client"]["toolbarMode"] in ("viewer", "minimal")


def test_every_page_still_runs_after_the_presentation_changes():
    at = open_app(dataset="mixed_planted", syn_n="120", n_init="1")
    for page in PAGES:
        visit(at, page)
        assert not errors(at), (page, errors(at))
