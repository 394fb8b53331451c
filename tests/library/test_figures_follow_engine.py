"""Pixels tied to the engine: what every figure draws is the fitted model's own decision.

For every bundled example the colour class (blue = selected, grey = not)
of every cell of the mask heatmap and of the data heatmap is checked against
``feature_mask_`` of the row's cluster, every profile's "selected" and rank
against the inspection surface, and the report's figures of a wide table
(>= 40 features, k >= 9) against the names they must show.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.colors import find_intermediate_color, hex_to_rgb

from library_helpers import EXAMPLES, fit_example, load_example
from craft import plots
from craft.profiles import cluster_profiles
from craft.report import report_sections


def hue_class(color: str) -> str:
    """"blue", "grey" or "other" for a ``#rrggbb`` or ``rgb(r, g, b)`` colour."""
    if color.startswith("#"):
        r, g, b = hex_to_rgb(color)
    else:
        r, g, b = (float(v) for v in re.findall(r"[\d.]+", color)[:3])
    if max(r, g, b) - min(r, g, b) < 16:
        return "grey"
    return "blue" if b > r + 40 and b > g else "other"


def color_at(scale, z: float) -> str:
    """The colour a Plotly colour scale gives ``z`` in [0, 1] (the last stop at a repeated position wins)."""
    stops = [(float(position), color) for position, color in scale]
    for (low, low_color), (high, high_color) in zip(stops, stops[1:], strict=False):
        if low <= z <= high and high > low:
            if z == high:
                continue
            share = (z - low) / (high - low)
            mixed = find_intermediate_color(hex_to_rgb(low_color), hex_to_rgb(high_color), share)
            return "rgb({}, {}, {})".format(*mixed)
    return stops[-1][1] if z >= stops[-1][0] else stops[0][1]


def test_the_two_cell_classes_have_distinct_hues_whatever_the_value():
    for z in np.linspace(0, 1, 101):
        assert hue_class(color_at(plots.SELECTED_SCALE, z)) == "blue"
        assert hue_class(color_at(plots.UNSELECTED_SCALE, z)) == "grey"
    assert hue_class(plots.SELECTED_COLOR) == "blue" and hue_class(plots.UNSELECTED_COLOR) == "grey"


@pytest.fixture(scope="module", params=EXAMPLES)
def example(request):
    model, X = fit_example(request.param, n_init=1)
    return load_example(request.param), model, X


def test_every_mask_cell_is_coloured_by_feature_mask(example):
    data, model, _ = example
    names = [str(c) for c in model.feature_names_in_]
    for order in ("subspace", "natural"):
        figure = plots.fig_feature_masks(model, order=order)
        (trace,) = [t for t in figure.data if isinstance(t, go.Heatmap)]
        z = np.asarray(trace.z, dtype=float)
        rows = [int(re.match(r"cluster (\d+)", label).group(1)) for label in trace.y]
        columns = [names.index(name) for name in trace.x]
        for i, k in enumerate(rows):
            classes = [hue_class(color_at(trace.colorscale, value)) for value in z[i]]
            assert classes == ["blue" if on else "grey" for on in model.feature_mask_[k, columns]]
        # every name is a category of the axis (the browser thins the drawn ones to what fits)
        assert sorted(trace.x) == sorted(names) and figure.layout.xaxis.tickmode == "auto"


def test_every_data_heatmap_cell_is_coloured_by_its_rows_cluster(example):
    data, model, X = example
    names = [str(c) for c in model.feature_names_in_]
    kwargs = {}
    if data.true_mask is not None:
        kwargs = dict(y_true=data.true_labels, true_mask=data.true_mask, true_features=data.mask_features)
    figure = plots.fig_data_heatmap(model, X, max_rows=200, **kwargs)
    traces = [t for t in figure.data if isinstance(t, go.Heatmap)]
    panel = traces[-1].xaxis  # the CRAFT panel (the right one when the planted panel is drawn)
    found = [t for t in traces if t.xaxis == panel]
    assert [t.name for t in found][:2] == [plots.SELECTED_NAME, plots.UNSELECTED_NAME]
    assert found[0].colorscale == tuple(tuple(stop) for stop in plots.SELECTED_SCALE) or \
        [list(stop) for stop in found[0].colorscale] == plots.SELECTED_SCALE
    blue, grey, *absent = (~np.isnan(np.asarray(t.z, dtype=float)) for t in found)
    missing = absent[0] if absent else np.zeros_like(blue)
    assert not (blue & grey).any() and not ((blue | grey) & missing).any() and (blue | grey | missing).all()
    columns = [names.index(name) for name in found[0].x]
    for i, cells in enumerate(found[0].text):
        row, cluster = map(int, re.match(r"row (\d+) · cluster (\d+)", cells[0]).groups())
        assert cluster == model.labels_[row]
        np.testing.assert_array_equal((blue | missing)[i] & ~missing[i], model.feature_mask_[cluster, columns] & ~missing[i])
        np.testing.assert_array_equal(missing[i], X[list(found[0].x)].iloc[row].isna().to_numpy())
    values = np.concatenate([np.asarray(t.z, dtype=float).ravel() for t in found])
    values = values[~np.isnan(values)]
    assert ((values >= 0) & (values <= 1)).all()


def test_every_profile_is_the_engines_selection_and_rank(example):
    _, model, _ = example
    profiles = cluster_profiles(model)
    names = [str(c) for c in model.feature_names_in_]
    engine = model.engine_features_
    for row in profiles.itertuples():
        assert row.selected == model.feature_mask_[row.cluster, names.index(row.feature)]
        j = engine.index(row.feature)
        assert row.rank == model.selection_.rank[row.cluster, j]
        assert row.score == model.selection_.score[row.cluster, j]
        assert row.cut == model.selection_.cut[row.cluster, j]
    figure = plots.fig_profile_overview(profiles, 0, budget=model.budget)
    drawn = {}
    for trace in figure.data:
        if isinstance(trace, go.Bar):
            assert hue_class(trace.marker.color) == ("blue" if trace.name.startswith(plots.SELECTED_NAME) else "grey")
            for feature in trace.y:
                drawn[feature] = trace.name.startswith(plots.SELECTED_NAME)
    expected = profiles[profiles.cluster == 0].set_index("feature")["selected"].to_dict()
    assert drawn == expected


# ---------------------------------------------------------------------------
# The report on a wide table: every name shown, margins that hold them


def _tick_texts(axis) -> list[str]:
    return [str(t) for t in (axis.ticktext or ())]


def test_report_figures_show_every_feature_and_cluster_name(wide_survey):
    X, classes, model = wide_survey
    sections = report_sections(model, X, params={"m": 0.4, "k": 9}, y=classes)
    figures = {section.title: section.figures for section in sections if section.figures}
    features = set(X.columns)
    clusters = {f"cluster {k}" for k in range(model.n_clusters_)}
    (masks,) = figures["Selected features per cluster"]
    # every feature is a category of the x axis; the browser draws every name that fits (tests/browser)
    assert set(masks.data[0].x) == features
    assert {t.split(" (")[0] for t in _tick_texts(masks.layout.yaxis)} == clusters
    (heatmap,) = figures["Data by cluster"]
    assert set(heatmap.data[0].x) == features
    # a cluster of a few rows lies closer than a line of text to its neighbour: one of them keeps the label there
    largest = f"cluster {int(np.argmax(model.cluster_sizes_))}"
    assert largest in set(_tick_texts(heatmap.layout.yaxis)) <= clusters
    (sizes,) = figures["Cluster sizes"]
    assert set(_tick_texts(sizes.layout.xaxis)) == clusters
    (confusion,) = figures["Evaluation against the label column"]
    assert set(_tick_texts(confusion.layout.yaxis)) == clusters
    assert set(_tick_texts(confusion.layout.xaxis)) == set(classes)
    longest = max(len(name) for name in features)
    for figure in (masks, heatmap, confusion):
        margin = figure.layout.margin
        # rotated names need their length times sin(60 degrees) in pixels below the plot
        assert margin.b >= 0.8 * 6 * longest * np.sin(np.deg2rad(60)) or figure is confusion
        assert margin.l >= 6 * max(len(t) for t in _tick_texts(figure.layout.yaxis))


# ---------------------------------------------------------------------------
# One value per quantity: the feature chart and the profiles read the same statistics


@pytest.fixture(scope="module")
def soybean_imputed():
    """Soybean with five columns taken as numbers (their missing cells imputed): the app's Data-page roles."""
    numeric = ["date", "plant.stand", "precip", "temp", "germ"]
    model, X = fit_example("soybean", roles={"numeric": numeric}, missing="impute", n_init=1)
    assert X[numeric].isna().to_numpy().any()
    return model, X


def test_feature_chart_and_profile_show_one_mean_and_spread_with_imputed_cells(soybean_imputed):
    model, X = soybean_imputed
    profiles = cluster_profiles(model).set_index(["cluster", "feature"])
    labels = np.asarray(model.labels_)
    differing, n_with_missing = [], 0
    for feature in ("date", "plant.stand", "germ"):  # 1, 36 and 112 missing cells
        for cluster in range(model.n_clusters_):
            shown = profiles.loc[(cluster, feature)]
            figure = plots.fig_feature_detail(model, X, cluster, feature)
            drawn = (
                [shape.x0 for shape in figure.layout.shapes if shape.type == "line"],
                [(shape.x0, shape.x1) for shape in figure.layout.shapes if shape.type == "rect"],
                [annotation.text for annotation in figure.layout.annotations][:1],
            )
            # The line, the band and their label are the profile's mean and sd, the numbers of its sentence.
            profile = ([shown["mean"]], [(shown["mean"] - shown["sd"], shown["mean"] + shown["sd"])],
                       [f"{shown['mean']:.3g} ± {shown['sd']:.3g}"])
            if drawn != profile:
                differing.append((feature, cluster, drawn, profile))
                continue
            assert f"σ = {shown['sd']:.3g} in the cluster" in shown["reason"]
            n_missing = int(X[feature].isna().to_numpy()[labels == cluster].sum())
            if n_missing:
                n_with_missing += 1
                note = figure.layout.annotations[-1].text.replace("<br>", " ")
                assert f"the {n_missing:,} missing cell(s) counted at the column mean" in note
    assert not differing, differing[:3]
    assert n_with_missing >= 5


def test_level_chart_and_profile_read_the_fits_level_counts(soybean_imputed):
    model, X = soybean_imputed
    template = model.encoder_.template()
    # Other counts in the fit (each feature's levels in reverse order) show on the chart and in the profile:
    # neither counts the table again.
    altered = copy.deepcopy(model)
    for q in range(len(model.schema_.categorical)):
        window = slice(int(template.offsets[q]), int(template.offsets[q] + template.n_levels[q]))
        altered.statistics_.level_counts[:, window] = model.statistics_.level_counts[:, window][:, ::-1]
    profiles = cluster_profiles(altered).set_index(["cluster", "feature"])
    for q, feature in enumerate(model.schema_.categorical[:8]):
        window = slice(int(template.offsets[q]), int(template.offsets[q] + template.n_levels[q]))
        for cluster in range(3):
            figure = plots.fig_feature_detail(altered, X, cluster, feature)
            counts = altered.statistics_.level_counts[cluster, window]
            np.testing.assert_array_equal(figure.data[0].y, counts / counts.sum())
            np.testing.assert_array_equal(figure.data[1].y, template.eta0[window])
            assert max(figure.data[0].y) == profiles.loc[(cluster, feature), "top_share"]
