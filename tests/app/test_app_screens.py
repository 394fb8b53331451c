"""Screens that must not mislead (issue 30, items 8-15): AppTest.

The same points in a real browser are in ``tests/browser/test_screens.py``.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from app_helpers import clear_caches, pytestmark, visit
from test_app_lecture import open_app

__all__ = ["clear_caches", "pytestmark"]  # the autouse cache fixture and the warning filters of test_app


# ---------------------------------------------------------------------------
# Export's share link (item 11)


@pytest.mark.parametrize(("page", "title"), [("cards", "Cluster cards"), ("data", "Data"), ("score", "Score new rows")])
def test_export_share_link_opens_the_page_you_came_from(page, title):
    at = open_app(dataset="fig2_numeric", syn_n="90", n_init="1")
    visit(at, page)
    visit(at, "export")
    picker = at.selectbox(key="share_page")
    assert picker.value == page
    assert title in picker.options
    link = at.code[-1].value
    assert f"/{page}?" in link or link.startswith("?")


def test_export_share_link_offers_every_page():
    at = open_app(dataset="fig2_numeric", syn_n="90", n_init="1")
    visit(at, "export")
    assert at.selectbox(key="share_page").options == [
        "Data", "Tune & see", "Cluster cards", "Evaluate", "Teach", "Compare", "What-if", "Score new rows", "Export"]


# ---------------------------------------------------------------------------
# The mask path: its features in the masks tab's order (item 14), its scrubber saved as the frame (item 9)


def _path_charts(at):
    from app_helpers import charts

    path = [spec for spec in charts(at) if "The mask path over m" in spec["layout"]["title"]["text"]]
    scrubber = [spec for spec in charts(at) if spec.get("frames")]
    return path[0], scrubber[0]


def _masks_tab_order(at, order: str) -> list[str]:
    from craft import plots

    return list(plots.mask_frame(at.session_state["ctx"].model, order=order).columns)


def test_the_mask_path_draws_the_features_in_the_masks_tabs_order():
    from app_helpers import start
    from test_app_mask_path import _finish, _open

    # Figure 1(a): the masks tab opens in table order, where the planted subspaces are blocks.
    at = _open(start("clusters", dataset="fig1_binary", syn_n=120))
    _finish(at)
    control = at.segmented_control(key="path_order_tune")
    assert control.value == "natural"
    path, scrubber = _path_charts(at)
    heatmaps = [trace for trace in path["data"] if trace["type"] == "heatmap"]
    assert list(heatmaps[0]["y"]) == _masks_tab_order(at, "natural")
    assert list(scrubber["data"][0]["x"]) == _masks_tab_order(at, "natural")
    control.set_value("subspace").run()
    assert not at.exception, at.exception
    path, scrubber = _path_charts(at)
    heatmaps = [trace for trace in path["data"] if trace["type"] == "heatmap"]
    assert list(heatmaps[0]["y"]) == _masks_tab_order(at, "subspace") != _masks_tab_order(at, "natural")
    assert list(scrubber["data"][0]["x"]) == _masks_tab_order(at, "subspace")


def test_the_scrubbers_download_is_the_fit_it_names_without_the_slider():
    from craft.plots import fig_path_scrubber
    from app_helpers import start
    from test_app_mask_path import _finish, _open

    at = _open(start("clusters", dataset="zoo", k=4))
    key = _finish(at)
    from explorer import cache

    path = cache.STORE.get(key).path
    scrubber = fig_path_scrubber(path, at=0.5)
    for m in (0.1, 0.5, 0.9):
        still = fig_path_scrubber(path, at=m, slider=False)
        assert not still.frames and not still.layout.sliders
        assert still.layout.title.text.startswith(f"The fit at m = {m:g}:")
        step = list(path.values).index(m)
        assert still.layout.title.text == scrubber.frames[step].layout.title.text
        assert np.array_equal(np.asarray(still.data[0].z, dtype=float), np.asarray(scrubber.frames[step].data[0].z, dtype=float), equal_nan=True)
    # The browser's camera lays the frame on screen out as the still picture (plotly_view's frameCamera).
    still = fig_path_scrubber(path, at=0.5, slider=False)
    meta = scrubber.layout.meta["still"]
    assert meta == {"height": still.layout.height, "margin_b": still.layout.margin.b, "title_y": still.layout.title.y,
                    "legend_y": still.layout.legend.y}
    assert meta["height"] < scrubber.layout.height
    # The page says what the buttons save and what the camera saves.
    assert any("buttons save the fit at m = 0.5" in c.value and "camera" in c.value for c in at.caption)


# ---------------------------------------------------------------------------
# Cards: stability beside the name and in the picker, rows named as the file names them (item 12)


def test_card_rows_are_named_by_the_identifier_column_and_the_files_line():
    from app_helpers import start, upload

    rng = np.random.default_rng(0)
    n = 60
    table = pd.DataFrame({"customer": [f"C{1000 + i}" for i in range(n)],
                          "a": np.r_[rng.normal(0, 1, n // 2), rng.normal(6, 1, n // 2)],
                          "b": np.r_[rng.normal(0, 1, n // 2), rng.normal(6, 1, n // 2)],
                          "note": ["two\nlines" if i == 3 else "x" for i in range(n)]})
    at = upload(start(), "customers.csv", table.to_csv(index=False).encode())
    visit(at, "data")
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    ctx = at.session_state["ctx"]
    assert "customer" in ctx.schema.ignored
    paragons = [d.value for d in at.dataframe if "cost" in d.value.columns][0]
    assert list(paragons.columns[:3]) == ["customer", "row", "line in the file"]
    content = table.to_csv(index=False).splitlines()
    for _, shown in paragons.iterrows():
        position = shown["row"] - 1
        assert shown["customer"] == table["customer"][position]
        # The file's line holds the row's identifier (row 4's note spans two lines: the rows after it move down).
        assert content[shown["line in the file"] - 1].startswith(shown["customer"] + ",")


def test_stability_sits_beside_the_clusters_name_and_in_the_picker(monkeypatch):
    from test_app_cards import open_cards, run_stability_on_the_card

    from explorer import evidence

    monkeypatch.setattr(evidence, "STABILITY_RESAMPLES", 4)
    at = open_cards(dataset="mixed_planted", k=4, label="(none)")
    badges = [m.value for m in at.markdown if ":gray-badge[" in m.value or "badge" in m.value]
    assert any("not run yet" in b for b in badges), [m.value for m in at.markdown][:5]
    found = run_stability_on_the_card(at)
    options = at.selectbox(key="card_cluster").options
    assert all(("unstable" in option) == bool(found.unstable[k]) and "stable" in option
               for k, option in enumerate(options))
    first = [m.value for m in at.markdown][:3]
    assert any(f"mean Jaccard {found.mean_jaccard[0]:.2f}" in m for m in first), first


# ---------------------------------------------------------------------------
# Teach: iteration 1's caption is true for the fit shown, and the paper's start can be shown (item 10)


def test_teach_says_how_the_fit_started_and_shows_the_papers_start():
    from app_helpers import charts, ctx

    from craft import CRAFT

    at = open_app(dataset="fig1_binary", n_init="1")
    visit(at, "teach")
    seeded = ctx(at).model
    assert seeded.init == "craft++" and seeded.history_[0].n_clusters > 1
    at.slider(key="teach_iter").set_value(1).run()
    captions = " ".join(c.value for c in at.caption)
    assert "seeded before the first pass" in captions and "paper's initial state" not in captions
    at.radio(key="teach_start").set_value("paper").run()
    assert not at.exception, at.exception
    # The paper's start: the same parameters and seed, init="random" — one cluster, then the passes open the others.
    expected = CRAFT(**{**seeded.get_params(), "init": "random"}).fit(ctx(at).X)
    history = expected.history_
    assert history[0].n_opened == history[0].n_clusters - 1 > 0
    if len(history) > 1:
        at.slider(key="teach_iter").set_value(1).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Clusters opened"] == str(history[0].n_opened)
    assert metrics["Clusters after the pass"] == str(history[0].n_clusters)
    assert metrics["Points that changed cluster"] == f"{history[0].n_changed:,}"
    captions = " ".join(c.value for c in at.caption)
    assert "paper's initial state: one cluster" in captions and f"opened {history[0].n_opened} cluster" in captions
    projection = next(spec for spec in charts(at) if "Assignments after iteration 1" in spec["layout"]["title"]["text"])
    assert projection["data"]
    # The fit on screen is unchanged (the sidebar's parameters did not move).
    assert ctx(at).model.init == "craft++"


# ---------------------------------------------------------------------------
# Downloads made on click arrive or say why (item 15); in Chromium beside CPU-bound processes: tests/browser


def test_an_image_not_made_in_time_is_refused_with_its_reason_and_the_button_shows_it(monkeypatch):
    import asyncio

    import plotly.graph_objects as go
    from streamlit.proto.BackMsg_pb2 import BackendOperationRequest
    from streamlit.runtime.backend_operation_handler import DeferredFileHandler
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    from explorer import figure_export

    monkeypatch.setattr(figure_export, "RENDER_TIMEOUT_S", 0.001)
    figure = go.Figure(go.Bar(y=[1, 2, 3]))
    with pytest.raises(figure_export.ImageNotMade, match=r"The SVG was not made within 0.001 s: .* camera"):
        figure_export.figure_image(figure, "svg")
    # Through Streamlit's handler of a deferred file: the answer is the reason, not "Failed to generate file".
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    manager.add_deferred(lambda: figure_export.figure_image(figure, "png"), "image/png", "coords", file_name="x.png")
    (file_id,) = manager._deferred_callables
    request = BackendOperationRequest(request_id="r1")
    request.deferred_file.file_id = file_id
    # In a thread of its own: a session-wide Playwright browser (tests/browser) keeps an event loop running in
    # the main thread, where asyncio.run() refuses to start another.
    answers: list = []
    runner = threading.Thread(target=lambda: answers.append(
        asyncio.run(DeferredFileHandler(lambda: manager).handle(request, "session"))))
    runner.start()
    runner.join(60)
    (response,) = answers
    assert response.error_msg.startswith("The PNG was not made within 0.001 s")


# ---------------------------------------------------------------------------
# Readability (item 13): numbers written as elsewhere, the margin histogram's overflow bin


def test_a_few_huge_margins_go_to_an_overflow_bin_and_the_rest_keep_their_bins():
    from craft import plots

    rng = np.random.default_rng(0)
    margins = np.r_[rng.uniform(0, 1, 200), [900.0, 1200.0, 5000.0]]
    assignment = pd.DataFrame({"cluster": np.r_[np.zeros(100, int), np.ones(103, int)], "margin": margins})
    frame = plots.margin_frame(assignment, bins=40)
    over = frame[frame["overflow"]]
    assert over["rows"].sum() == 3 and over["rows"].tolist() == [0, 3] and over["right"].max() == 5000.0
    regular = frame[~frame["overflow"]]
    # The 200 ordinary rows spread over the 40 bins (they were all in the first of 40 bins up to 5000).
    assert regular["right"].max() < 1 and regular.groupby("left")["rows"].sum().max() < 20
    assert frame.groupby("cluster")["rows"].sum().tolist() == [100, 103]
    figure = plots.fig_margins(assignment, n_clusters=2)
    assert sum(int(np.sum(trace.y)) for trace in figure.data) == 203
    assert any("up to 5,000" in a.text for a in figure.layout.annotations)
    # Without far-out margins there is no overflow bin.
    assert not plots.margin_frame(assignment.iloc[:200], bins=40)["overflow"].any()


def test_the_objective_is_written_with_thousands_separators_on_every_page():
    from app_helpers import ctx, text

    from explorer.ui import number

    at = open_app(dataset="credit-g", k=3, n_init="1")
    model = ctx(at).model
    assert model.objective_ >= 10_000
    said = " ".join(text(s) for s in at.success)
    assert f"objective {number(model.objective_)})" in said and "e+" not in said
    visit(at, "evaluate")
    objective = [m.value for m in at.metric if m.label == "Objective"]
    assert all(value == number(model.objective_) for value in objective)


def test_the_stability_figure_labels_its_clusters_once_at_the_left():
    from craft import CRAFT
    from craft.plots import stability as stability_plots
    from craft.stability import bootstrap_stability
    from craft.synthetic import mixed_planted

    X, _ = mixed_planted(n_samples=150, random_state=0)[:2]
    X = X.iloc[:, :12]
    model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    found = bootstrap_stability(model, X, n_resamples=3, random_state=0)
    figure = stability_plots.fig_selection_frequency(model, found)
    assert X.shape[1] <= stability_plots.SIDE_BY_SIDE_FEATURES
    # The right panel shares the left one's rows and draws no labels of its own (they covered the left heatmap).
    assert figure.layout.yaxis2.matches == "y" and figure.layout.yaxis2.showticklabels is False
    # Many features (Soybean's 35 ran into each other at half the width): the panels are stacked, full width,
    # the feature labels drawn once, under the lower one.
    wide = pd.concat([X, X.add_suffix("_again")], axis=1)
    assert wide.shape[1] > stability_plots.SIDE_BY_SIDE_FEATURES
    model = CRAFT(k=3, n_init=1, random_state=0).fit(wide)
    figure = stability_plots.fig_selection_frequency(model, bootstrap_stability(model, wide, n_resamples=3,
                                                                                random_state=0))
    assert figure.layout.xaxis.matches == "x2" and figure.layout.xaxis.showticklabels is False
    assert figure.layout.yaxis2.domain[1] < figure.layout.yaxis.domain[0]  # one above the other
    assert list(figure.data[1].x) == list(figure.data[0].x)


def test_scored_rows_that_fit_no_cluster_list_their_cluster_first():
    from app_helpers import start, visit
    from test_app_score import score_table

    from explorer import services

    at = start("data", dataset="fig2_numeric", syn_n=120)
    visit(at, "score")
    table = services.load_example("fig2_numeric", n_samples=120, seed=0).table.copy()
    numbers = table.select_dtypes("number").columns
    table.loc[:4, numbers] = table.loc[:4, numbers] * 40
    score_table(at, "new.csv", table.to_csv(index=False).encode())
    listed = at.dataframe[0].value
    craft_columns = ["craft_cluster", "craft_cost", "craft_margin", "craft_fits_no_cluster", "craft_nothing_known",
                     "craft_unseen_cells", "craft_unseen_columns"]
    assert list(listed.columns[: len(craft_columns)]) == craft_columns
    assert list(listed.columns[len(craft_columns):]) == list(table.columns)
