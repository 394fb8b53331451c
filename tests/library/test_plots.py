"""Figure functions: what is drawn (cells on, orders, samples), checked without a browser."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from library_helpers import fit_example, load_example
from craft import CRAFT, plots, prior_terms, synthetic
from craft.priors import PriorTerms
from craft.metrics import align_clusters
from craft.profiles import cluster_profiles


@pytest.fixture(scope="module")
def fig1():
    """The paper's Figure 1(a) data (60 rows) and a fit with m = 1/3, k = 3."""
    model, X = fit_example("fig1_binary", n_samples=60, m=1 / 3, k=3, n_init=2)
    return load_example("fig1_binary", n_samples=60), model, X


@pytest.fixture(scope="module")
def mixed():
    """Mixed data: 6 numeric + 4 categorical features, 3 planted clusters."""
    X, y, mask = synthetic.mixed_planted(n_samples=150, n_clusters=3, n_numeric=6, n_categorical=4, random_state=1)
    model = CRAFT(m=0.5, k=3, n_init=2, random_state=0).fit(X)
    return X, y, mask, model


def heatmap_traces(figure):
    return [trace for trace in figure.data if isinstance(trace, go.Heatmap)]


# ---------------------------------------------------------------------------
# Masks and orders


def test_subspace_order_makes_staircase_blocks():
    mask = np.array(
        [
            [0, 0, 1, 1, 0, 0],
            [1, 0, 0, 0, 0, 1],
            [0, 1, 0, 0, 1, 0],
        ],
        dtype=bool,
    )
    rows, cols = plots.subspace_order(mask)
    assert rows.tolist() == [0, 1, 2]
    assert cols.tolist() == [2, 3, 0, 5, 1, 4]
    ordered = mask[np.ix_(rows, cols)]
    # every cluster's features are one contiguous block, left to right
    assert ordered.tolist() == [
        [1, 1, 0, 0, 0, 0],
        [0, 0, 1, 1, 0, 0],
        [0, 0, 0, 0, 1, 1],
    ]


def test_subspace_order_puts_shared_features_next_to_the_next_cluster_and_unused_last():
    mask = np.array([[1, 1, 0, 0, 0], [0, 1, 1, 0, 0]], dtype=bool)
    _, cols = plots.subspace_order(mask)
    # f0 only in cluster 0, f1 shared (last of cluster 0's block), f2 cluster 1, f3/f4 in none
    assert cols.tolist() == [0, 1, 2, 3, 4]
    rows, _ = plots.subspace_order(mask, sizes=[5, 50])
    assert rows.tolist() == [1, 0]  # largest cluster first


def test_mask_frame_orders_and_keeps_cells(fig1):
    _, model, _ = fig1
    frame = plots.mask_frame(model, order="natural")
    assert frame.shape == model.feature_mask_.shape
    assert list(frame.columns) == [str(c) for c in model.feature_names_in_]
    assert (frame.to_numpy() == model.feature_mask_).all()
    block = plots.mask_frame(model, order="subspace")
    # same cells, permuted: every row keeps its count of selected features
    assert sorted(block.sum(axis=1).tolist()) == sorted(model.feature_mask_.sum(axis=1).tolist())
    assert set(block.columns) == set(frame.columns)
    with pytest.raises(ValueError, match="order='diagonal'"):
        plots.mask_frame(model, order="diagonal")


def test_mask_frame_count_order():
    frame = plots.mask_frame(np.array([[0, 1, 1], [0, 1, 0]], dtype=bool), features=["a", "b", "c"], order="count")
    assert list(frame.columns) == ["b", "c", "a"]


def test_fig_feature_masks_cells_on_match_the_mask(fig1):
    _, model, _ = fig1
    figure = plots.fig_feature_masks(model, order="natural")
    (trace,) = heatmap_traces(figure)
    z = np.asarray(trace.z)
    assert z.shape == model.feature_mask_.shape
    assert (z == model.feature_mask_.astype(float)).all()
    assert list(trace.x) == [str(c) for c in model.feature_names_in_]
    assert list(trace.y)[0].startswith("cluster 0 (")


def test_fig_feature_masks_beside_truth_aligns_clusters(fig1):
    data, model, _ = fig1
    match = align_clusters(data.true_labels, model.labels_)
    figure = plots.fig_feature_masks(
        model, order="natural", true_mask=data.true_mask, true_features=data.mask_features, cluster_match=match
    )
    truth, found = heatmap_traces(figure)
    # the paper's Figure 1(b): CRAFT recovers the planted subspaces exactly, row for row
    assert np.array_equal(np.asarray(truth.z), data.true_mask.astype(float))
    assert np.array_equal(np.asarray(found.z), np.asarray(truth.z))
    assert list(truth.y) == ["planted 0", "planted 1", "planted 2"]


def test_fig_feature_masks_rejects_bad_shapes():
    with pytest.raises(ValueError, match="2-D"):
        plots.fig_feature_masks(np.array([True, False]))
    with pytest.raises(ValueError, match="2 feature names for a mask with 3 columns"):
        plots.fig_feature_masks(np.ones((2, 3), dtype=bool), features=["a", "b"])


# ---------------------------------------------------------------------------
# Data heatmap


def test_sample_rows_keeps_everything_when_small():
    labels = np.array([2, 0, 1, 0, 2])
    assert plots.sample_rows(labels, 10).tolist() == [1, 3, 2, 0, 4]


def test_sample_rows_is_stratified_and_keeps_tiny_clusters():
    labels = np.array([0] * 990 + [1] * 9 + [2] * 1)
    rows = plots.sample_rows(labels, 100, random_state=0)
    assert rows.size == 100
    counts = np.bincount(labels[rows], minlength=3)
    assert counts[2] == 1 and counts[1] >= 1
    assert counts[0] >= 97
    assert (np.diff(labels[rows]) >= 0).all()  # sorted by cluster
    assert len(set(rows.tolist())) == 100


def test_heatmap_panel_classes_cells_and_shades_levels_by_the_clusters_most_frequent_level():
    X = pd.DataFrame({"x": [0.0, 0.2, 5.0, 5.2, 0.1, 5.1], "c": ["a", "a", "b", "b", "b", "a"]})
    model = CRAFT(m=0.5, k=2, categorical=["c"], n_init=1, random_state=0).fit(X)
    panel = plots.heatmap_panel(model, X, model.labels_, model.feature_mask_)
    assert (np.diff(panel.groups) >= 0).all()  # sorted by cluster
    assert (panel.selected == model.feature_mask_[panel.groups]).all()
    # a level is dark where it is the row's cluster's most frequent level, light elsewhere
    levels = X["c"].to_numpy()[panel.rows]
    modal = {k: X["c"][model.labels_ == k].mode().iloc[0] for k in range(model.n_clusters_)}
    expected = [plots.MODAL_VALUE if level == modal[g] else plots.OTHER_LEVEL_VALUE
                for level, g in zip(levels, panel.groups, strict=True)]
    assert panel.values[:, 1].tolist() == expected
    assert ((panel.values[:, 0] >= 0) & (panel.values[:, 0] <= 1)).all()
    assert not panel.sampled and panel.caption() == "Showing all 6 rows."


def test_heatmap_panel_marks_missing_cells():
    X = pd.DataFrame({"x": [0.0, np.nan, 2.0, 9.0], "y": [1.0, 2.0, 1.5, 8.0]})
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0).fit(X)
    panel = plots.heatmap_panel(model, X, model.labels_, model.feature_mask_)
    position = int(np.flatnonzero(panel.rows == 1)[0])
    assert panel.values[position, 0] == 0.0 and panel.text[position, 0] == "missing"


def cell_classes(figure, first: int = 0):
    """Selected / unselected cells of one panel: where its two heatmap traces draw a value."""
    selected, unselected = heatmap_traces(figure)[first : first + 2]
    assert selected.name == plots.SELECTED_NAME and unselected.name == plots.UNSELECTED_NAME
    on = ~np.isnan(np.asarray(selected.z, dtype=float))
    off = ~np.isnan(np.asarray(unselected.z, dtype=float))
    assert not (on & off).any() and (on | off).all()  # every cell in exactly one class
    return on


def test_fig_data_heatmap_pairs_dataset_and_craft(fig1):
    data, model, X = fig1
    figure = plots.fig_data_heatmap(model, X, max_rows=400, order="natural", y_true=data.true_labels,
                                    true_mask=data.true_mask, true_features=data.mask_features)
    planted, found = cell_classes(figure, 0), cell_classes(figure, 2)
    assert planted.shape == found.shape == (60, 24)
    # Figure 1(a): rows of planted cluster t are selected on its 8 features only
    assert planted[:20, :8].all() and not planted[:20, 8:].any()
    # CRAFT recovers it: the same picture
    assert np.array_equal(found, planted)
    assert "rows shown" not in figure.layout.title.text
    assert [t.name for t in figure.data if isinstance(t, go.Scatter)] == ["selected (planted) feature (blue)",
                                                                          "not selected"]
    # Planted groups and clusters are numbered the same way (from 0), as in the mask figure.
    assert list(figure.layout.yaxis.ticktext) == ["planted 0", "planted 1", "planted 2"]
    assert sorted(figure.layout.yaxis2.ticktext) == ["cluster 0", "cluster 1", "cluster 2"]


def test_fig_data_heatmap_says_when_rows_are_sampled(mixed):
    X, _, _, model = mixed
    figure = plots.fig_data_heatmap(model, X, max_rows=50)
    assert cell_classes(figure).shape == (50, X.shape[1])
    assert "50 of 150 rows shown (stratified sample)" in figure.layout.title.text


def test_fig_data_heatmap_selected_cells_follow_each_rows_cluster(mixed):
    X, _, _, model = mixed
    figure = plots.fig_data_heatmap(model, X, max_rows=1000, order="natural")
    rows = np.lexsort((np.arange(len(X)), model.labels_))  # every row, sorted by cluster
    expected = model.feature_mask_[model.labels_[rows]]
    assert np.array_equal(cell_classes(figure), expected)
    assert expected.any() and (~expected).any()


def drawn_colors(trace) -> np.ndarray:
    """The colour every cell of a heatmap trace is drawn in ("" where the trace draws nothing)."""
    from plotly.colors import sample_colorscale

    z = np.asarray(trace.z, dtype=float)
    low, high = trace.zmin, trace.zmax
    colors = np.full(z.shape, "", dtype=object)
    drawn = ~np.isnan(z)
    colors[drawn] = sample_colorscale([list(stop) for stop in trace.colorscale], (z[drawn] - low) / (high - low))
    return colors


def test_missing_cells_of_soybean_have_a_colour_no_value_has():
    from craft import datasets

    X, _ = datasets.load("soybean")
    model = CRAFT(m=0.4, k=19, n_init=1, random_state=0).fit(X)
    figure = plots.fig_data_heatmap(model, X, max_rows=683)
    missing, values = set(), set()
    for trace in heatmap_traces(figure):
        colors = drawn_colors(trace)
        absent = np.vectorize(lambda text: " = missing (" in text)(np.asarray(trace.text, dtype=object))
        missing |= set(colors[absent & (colors != "")])
        values |= set(colors[~absent & (colors != "")])
    assert missing and values
    assert not missing & values, sorted(missing & values)[:5]
    # the mark is named in the legend and the caption
    legend = [t.name for t in figure.data if isinstance(t, go.Scatter) and t.showlegend]
    assert plots.MISSING_NAME in legend
    assert "missing" in plots.HEATMAP_CAPTION.lower()


def test_heatmap_labels_of_small_neighbouring_clusters_do_not_touch():
    from craft import datasets

    X, _ = datasets.load("soybean")
    model = CRAFT(m=0.4, k=19, n_init=1, random_state=0).fit(X)
    figure = plots.fig_data_heatmap(model, X, max_rows=400)
    rows = len(heatmap_traces(figure)[0].z)
    plot_px = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    centres = np.sort(np.asarray(figure.layout.yaxis.tickvals, dtype=float)) * plot_px / rows
    assert np.diff(centres).min() >= 1.2 * plots.TICK_FONT_PX  # a line of 14 px text
    assert len(centres) >= 0.5 * model.n_clusters_


def test_feature_axes_leave_crowded_names_to_the_browser(mixed):
    X, _, _, model = mixed
    wide = pd.DataFrame(np.repeat(X.select_dtypes("number").to_numpy(), 10, axis=1)[:, :60],
                        columns=[f"days_since_last_login_{j:02d}" for j in range(60)])
    fitted = CRAFT(m=0.5, k=3, n_init=1, random_state=0).fit(wide)
    for figure in (plots.fig_feature_masks(fitted), plots.fig_data_heatmap(fitted, wide),
                   plots.fig_mask_panels([fitted.feature_mask_] * 4, list("abcd"), features=list(wide.columns),
                                         title="t")):
        for axis in [figure.layout[name] for name in figure.layout if name.startswith("xaxis")]:
            # thinned to what fits, upright or vertical (so no two names touch), never forced all at once
            assert axis.tickmode == "auto" and list(axis.autotickangles) == [0, -90] and axis.showticklabels is not False
        longest = plots.label_px(wide.columns)
        assert figure.layout.margin.b >= longest  # vertical names fit under the plot


def test_profile_axis_titles_wrap_under_their_panel(mixed):
    _, _, _, model = mixed
    figure = plots.fig_profile_overview(cluster_profiles(model), 0, budget=model.budget)
    titles = [figure.layout[name].title.text for name in figure.layout if name.startswith("xaxis")]
    assert len(titles) == 2
    for title in titles:
        assert max(len(line) for line in title.split("<br>")) <= plots.PANEL_TITLE_CHARS
    lines = max(title.count("<br>") + 1 for title in titles)
    assert figure.layout.margin.b >= 20 + plots.TITLE_LINE_PX * lines


# ---------------------------------------------------------------------------
# Sizes, profiles, projection, history


def test_fig_cluster_sizes(fig1):
    _, model, _ = fig1
    figure = plots.fig_cluster_sizes(model)
    assert list(figure.data[0].y) == model.cluster_sizes_.tolist()
    assert figure.data[0].text[0].endswith("(33%)")


def test_fig_margins_stacks_every_rows_margin_in_its_cluster_colour(mixed):
    X, _, _, model = mixed
    assignment = model.assign(X)
    frame = plots.margin_frame(assignment, bins=25)
    assert frame.groupby("cluster")["rows"].sum().tolist() == np.bincount(assignment["cluster"]).tolist()
    assert frame["left"].min() == assignment["margin"].min() and frame["right"].max() == assignment["margin"].max()
    figure = plots.fig_margins(assignment, n_clusters=model.n_clusters_, bins=25)
    colors = plots.cluster_colors(model.n_clusters_)
    assert [trace.name for trace in figure.data] == [f"cluster {k}" for k in range(model.n_clusters_)]
    assert [trace.marker.color for trace in figure.data] == colors
    assert sum(int(np.sum(trace.y)) for trace in figure.data) == len(X)
    assert figure.layout.barmode == "stack"


def test_fig_profile_overview_draws_the_rules_numbers_and_cut(mixed):
    X, _, _, model = mixed
    profiles = cluster_profiles(model)
    figure = plots.fig_profile_overview(profiles, 0, budget=model.budget)
    bars = [trace for trace in figure.data if isinstance(trace, go.Bar)]
    assert [trace.name for trace in bars] == ["selected feature", "not selected"] * 2
    for trace, (kind, chosen) in zip(bars, [("numeric", True), ("numeric", False), ("categorical", True),
                                            ("categorical", False)], strict=True):
        rows = profiles[(profiles.cluster == 0) & (profiles.kind == kind) & (profiles.selected == chosen)]
        rows = rows.sort_values("rank", ascending=False)
        assert list(trace.y) == rows.feature.tolist()
        assert np.allclose(trace.x, rows.criterion)
        assert trace.marker.color == (plots.SELECTED_COLOR if chosen else plots.UNSELECTED_COLOR)
    cuts = [shape.x0 for shape in figure.layout.shapes]
    part = profiles[profiles.cluster == 0]
    assert cuts == pytest.approx([part[part.kind == "numeric"].cut.iloc[0], part[part.kind == "categorical"].cut.iloc[0]])


def test_fig_feature_detail_both_kinds(mixed):
    X, _, _, model = mixed
    numeric = plots.fig_feature_detail(model, X, 1, "f1")
    assert [trace.type for trace in numeric.data] == ["histogram", "histogram"]
    assert len(numeric.data[1].x) == int((model.labels_ == 1).sum())
    categorical = plots.fig_feature_detail(model, X, 1, "f7")
    assert [trace.type for trace in categorical.data] == ["bar", "bar"]
    assert sum(categorical.data[1].y) == pytest.approx(1.0)


def test_feature_detail_marks_the_fits_moments_where_no_cell_was_observed():
    """Marginalised cells: a cluster without an observed value of x has the column's mean and sd in the fit."""
    X = pd.DataFrame({"c": ["a", "a", "a", "b", "b", "b"], "x": [np.nan, np.nan, np.nan, 4.0, 4.5, 5.0]})
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0).fit(X)
    empty = int(model.labels_[0])
    assert (model.labels_[:3] == empty).all() and (model.labels_[3:] != empty).all()
    figure = plots.fig_feature_detail(model, X, empty, "x")
    (line,) = [shape for shape in figure.layout.shapes if shape.type == "line"]
    assert line.x0 == pytest.approx(4.5)
    (band,) = [shape for shape in figure.layout.shapes if shape.type == "rect"]
    assert band.x1 - band.x0 == pytest.approx(2 * np.std([4.0, 4.5, 5.0]))
    assert "which has no observed cell" in figure.layout.annotations[-1].text
    full = plots.fig_feature_detail(model, X, 1 - empty, "x")
    assert [shape.x0 for shape in full.layout.shapes if shape.type == "line"] == [pytest.approx(4.5)]
    assert "over its 3 rows" in full.layout.annotations[-1].text


def test_projection_frame_and_figure(mixed):
    X, _, _, model = mixed
    frame = plots.projection_frame(model, X, max_points=60)
    assert len(frame) == 60 and frame.attrs["n_total"] == 150
    assert set(frame.columns) == {"row", "pc1", "pc2", "cluster"}
    assert (frame["cluster"].to_numpy() == model.labels_[frame["row"]]).all()
    figure = plots.fig_projection(frame)
    assert len(figure.data) == len(np.unique(frame["cluster"]))
    assert "60 of 150 rows shown" in figure.layout.title.text
    changed = np.zeros(60, dtype=bool)
    changed[:3] = True
    outlined = plots.fig_projection(frame, highlight=changed)
    rings = [trace for trace in outlined.data if trace.marker.symbol == "circle-open"]
    assert len(rings) == 1 and sorted(rings[0].customdata) == sorted(frame["row"].to_numpy()[:3])
    assert len(plots.fig_projection(frame, highlight=np.zeros(60, dtype=bool)).data) == len(figure.data)


def test_every_figure_has_readable_ticks(mixed):
    """Tick labels of at least TICK_FONT_PX (14 px): readable on a projector at 1280 x 720."""
    X, _, _, model = mixed
    figures = [
        plots.fig_feature_masks(model),
        plots.fig_data_heatmap(model, X),
        plots.fig_cluster_sizes(model),
        plots.fig_projection(plots.projection_frame(model, X)),
        plots.fig_history(model),
    ]
    assert plots.TICK_FONT_PX >= 14
    for figure in figures:
        assert figure.layout.font.size >= 14
        axes = [value for name, value in figure.layout.to_plotly_json().items() if name.startswith(("xaxis", "yaxis"))]
        assert axes and all(axis["tickfont"]["size"] >= 14 for axis in axes)


def test_history_frame_and_figure(fig1):
    _, model, _ = fig1
    frame = plots.history_frame(model)
    assert len(frame) == model.n_iter_
    assert frame["objective"].iloc[-1] == pytest.approx(model.objective_)
    assert frame["n_changed"].iloc[-1] == 0 or not model.converged_
    figure = plots.fig_history(model, current=1)
    assert list(figure.data[0].y) == frame["objective"].tolist()
    assert list(figure.data[1].y) == frame["n_clusters"].tolist()


# ---------------------------------------------------------------------------
# Evaluate, compare, what-if, rho


def test_fig_confusion_counts_and_shares():
    table = pd.DataFrame([[8, 2], [0, 5]], index=pd.Index([0, 1], name="cluster"), columns=["a", "b"])
    figure = plots.fig_confusion(table)
    trace = figure.data[0]
    assert np.asarray(trace.text).tolist() == [[8, 2], [0, 5]]
    assert np.allclose(trace.z, [[0.8, 0.2], [0.0, 1.0]])
    assert list(trace.y) == ["cluster 0", "cluster 1"]


def test_sweep_summary_and_figure():
    frame = pd.DataFrame(dict(value=[0.2, 0.2, 0.4, 0.4], seed=[0, 1, 0, 1], K=[3, 5, 2, 2],
                              objective=[10.0, 12.0, 8.0, 8.0], lam=1.0, purity=[0.9, 0.7, 0.5, 0.5],
                              nmi=0.5, ari=0.4, seconds=0.1, note=""))
    summary = plots.sweep_summary(frame)
    assert summary["K_mean"].tolist() == [4.0, 2.0]
    assert summary["K_sd"].tolist() == [1.0, 0.0]
    figure = plots.fig_sweep(frame, "m")
    assert [trace.name for trace in figure.data] == ["K", "objective", "purity", "NMI", "ARI"]
    unlabelled = plots.fig_sweep(frame.assign(purity=np.nan, nmi=np.nan, ari=np.nan), "lam")
    assert [trace.name for trace in unlabelled.data] == ["K", "objective"]
    assert unlabelled.layout.xaxis.type == "log"


def test_rho_demo_moves_between_m_and_v():
    frame = plots.rho_demo_frame(0.3, n=11)
    upper = 0.3 * 0.7
    assert 0 < frame["rho"].min() and frame["rho"].max() < upper  # the prior is proper only strictly inside
    assert frame["nu_selected"].iloc[0] == pytest.approx(0.3 + 0.7 / 12)
    assert frame["nu_unselected"].iloc[0] == pytest.approx(0.3 - 0.3 / 12)
    assert frame["nu_selected"].iloc[-1] == pytest.approx(0.3 + 0.7 * 11 / 12)
    assert frame["nu_unselected"].iloc[-1] == pytest.approx(0.3 - 0.3 * 11 / 12)
    figure = plots.fig_rho_demo(prior_terms(0.3, 0.105))
    marker = figure.data[2]
    assert list(marker.y) == pytest.approx([0.3 + 0.7 * 0.5, 0.3 - 0.3 * 0.5])


def test_rho_demo_reads_the_posterior_mean_of_nu_from_the_prior_terms(monkeypatch):
    """The figure draws PriorTerms.selection_probability, the engine's one formula, and writes none of its own."""
    terms = prior_terms(0.3, 0.105)
    frame = plots.rho_demo_frame(0.3, n=11)
    for row in frame.itertuples():
        at = prior_terms(0.3, row.rho)
        assert (row.nu_selected, row.nu_unselected) == (at.selection_probability(1.0), at.selection_probability(0.0))
    # Another formula there moves the figure with it: nothing is computed beside it.
    monkeypatch.setattr(PriorTerms, "selection_probability", lambda self, share: 0.25 + share / 8)
    figure = plots.fig_rho_demo(terms)
    assert list(figure.data[2].y) == [0.375, 0.25]
    assert set(figure.data[0].y) == {0.375} and set(figure.data[1].y) == {0.25}


def test_user_strings_are_escaped_in_figures():
    evil = "<img src=x onerror=alert(1)>"
    frame = plots.mask_frame(np.array([[True]]), features=[evil])
    figure = plots.fig_feature_masks(frame.to_numpy(), features=[evil])
    trace = figure.data[0]
    assert trace.x[0] == "&lt;img src=x onerror=alert(1)&gt;"
    assert "<img" not in trace.text[0][0]
    table = pd.DataFrame([[1]], index=[0], columns=[evil])
    assert "<img" not in plots.fig_confusion(table).data[0].x[0]
