"""craft.path and craft.plots.mask_path: the mask path over a knob, its matched cluster tracks and its figure.

The planted table has three groups of 60 rows: A far from the other two on
f0 and f1, B and C apart only on f2 (4 sd), three noise columns. With k = 2
CRAFT finds A and B ∪ C; with k = 3 it finds A, B and C: going up in k the
cluster B ∪ C splits, going down it merges. Every check of the path reads
the truth from the fits (labels_, feature_mask_, cluster_sizes_) or from the
planted groups, never from the path's own matching.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, CraftInputError
from craft.path import PathEvent, fit_path, mask_path
from craft.plots import fig_mask_path, fig_path_scrubber

GROUP_ROWS = 60


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(0)

    def group(centre_01, centre_2):
        return np.c_[rng.normal(centre_01, 0.3, (GROUP_ROWS, 2)), rng.normal(centre_2, 0.3, (GROUP_ROWS, 1)),
                     rng.normal(0.0, 1.0, (GROUP_ROWS, 3))]

    X = pd.DataFrame(np.r_[group(8, 0), group(0, -2), group(0, 2)], columns=[f"f{i}" for i in range(6)])
    groups = np.repeat([0, 1, 2], GROUP_ROWS)  # A, B, C
    models, path = fit_path(CRAFT(m=0.5, random_state=0), X, "k", [3, 2])
    return X, groups, models, path


def _cluster_of(model, rows) -> int:
    """The one cluster of ``model`` holding all of ``rows`` (the planted structure was found)."""
    found = np.unique(np.asarray(model.labels_)[rows])
    assert len(found) == 1, f"the fit cuts a planted group: {found}"
    return int(found[0])


def _track_of(path, step: int, cluster: int) -> int:
    tracks = np.flatnonzero(path.clusters[:, step] == cluster)
    assert len(tracks) == 1, "every cluster of every fit is on exactly one track"
    return int(tracks[0])


def test_fits_find_the_planted_groups(planted):
    _, groups, (two, three), _ = planted
    a, b_and_c = _cluster_of(two, groups == 0), _cluster_of(two, groups > 0)
    assert a != b_and_c and two.n_clusters_ == 2
    assert len({_cluster_of(three, groups == g) for g in range(3)}) == 3 and three.n_clusters_ == 3


def test_a_cluster_that_splits_is_matched_along_the_path(planted):
    _, groups, (two, three), path = planted
    assert path.values.tolist() == [2.0, 3.0] and path.knob == "k"  # increasing, whatever order was asked
    a_track = _track_of(path, 0, _cluster_of(two, groups == 0))
    bc_track = _track_of(path, 0, _cluster_of(two, groups > 0))
    b_track = _track_of(path, 1, _cluster_of(three, groups == 1))
    c_track = _track_of(path, 1, _cluster_of(three, groups == 2))
    # A goes on as itself, with all its rows; B ∪ C goes on as B or as C, and the other is split off it.
    assert _track_of(path, 1, _cluster_of(three, groups == 0)) == a_track and path.jaccard[a_track, 1] == 1.0
    assert bc_track in (b_track, c_track)
    new = c_track if bc_track == b_track else b_track
    assert path.n_tracks == 4 - 1 and not path.present[new, 0]
    assert path.events == (PathEvent("split", 1, bc_track, new, 0.5),)  # 60 of the 120 rows


def test_a_merge_is_matched_going_down_in_clusters(planted):
    _, groups, (two, three), _ = planted
    assert three.lam_ < two.lam_  # a larger cost of a cluster gives fewer clusters
    path = mask_path([two, three], [two.lam_, three.lam_], knob="lam")
    bc_track = _track_of(path, 1, _cluster_of(two, groups > 0))
    ends = [_track_of(path, 0, _cluster_of(three, groups == g)) for g in (1, 2)]
    ended = [track for track in ends if not path.present[track, 1]]
    assert len(ended) == 1 and path.n_tracks == 3
    assert path.events == (PathEvent("merge", 1, ended[0], bc_track, 0.5),)


def test_the_path_reads_the_fits_masks_and_sizes(planted):
    _, _, models, path = planted
    for step, model in enumerate(models):
        for cluster in range(model.n_clusters_):
            track = _track_of(path, step, cluster)
            assert path.selected[track, step].tolist() == np.asarray(model.feature_mask_)[cluster].tolist()
            assert path.sizes[track, step] == model.cluster_sizes_[cluster]
        absent = path.clusters[:, step] < 0
        assert not path.selected[absent, step].any() and (path.sizes[absent, step] == 0).all()
    assert path.n_clusters.tolist() == [model.n_clusters_ for model in models]
    assert path.objective.tolist() == [model.objective_ for model in models]
    assert path.lam.tolist() == [model.lam_ for model in models] and path.rho.tolist() == [model.rho_ for model in models]
    assert path.n_iter.tolist() == [model.n_iter_ for model in models]
    assert path.features == [str(name) for name in models[0].feature_names_in_]


def test_selected_ranges_are_the_runs_of_the_masks(planted):
    _, _, _, path = planted
    ranges = path.selected_ranges()
    rebuilt = np.zeros_like(path.selected)
    for row in ranges.itertuples():
        steps = (path.values >= row.start) & (path.values <= row.stop)
        assert steps.sum() == row.n_values
        rebuilt[row.track, steps, path.features.index(row.feature)] = True
    assert (rebuilt == path.selected).all()
    frame = path.frame()
    assert len(frame) == path.present.sum() * len(path.features) and frame["selected"].sum() == path.selected.sum()


def test_each_point_of_the_path_is_the_fit_of_its_value(planted):
    X, _, models, _ = planted
    alone = CRAFT(m=0.5, k=3, random_state=0).fit(X)
    assert np.array_equal(alone.labels_, models[1].labels_) and np.array_equal(alone.feature_mask_, models[1].feature_mask_)


def test_fit_path_reports_progress_and_moves_m():
    X = pd.DataFrame(np.random.default_rng(1).normal(size=(80, 4)), columns=list("abcd"))
    seen = []
    models, path = fit_path(CRAFT(k=2, random_state=0), X, "m", [0.75, 0.25],
                            callback=lambda share, text: seen.append((share, text)))
    assert [model.m for model in models] == [0.25, 0.75] and path.selected[:, 0].sum(axis=1).max() == 1
    assert seen[-1] == (1.0, "done") and {text for _, text in seen[:-1]} == {"m = 0.25", "m = 0.75"}


@pytest.mark.parametrize(("models", "values", "message"), [
    ([], [], "one value per model"),
    (["fit", "fit"], [0.5, 0.5], "appears twice"),
    (["fit", "unfitted"], [0.2, 0.5], "is not fitted"),
    (["fit", "other"], [0.2, 0.5], "fitted on another table"),
    (["fit"], [np.nan], "finite"),
])
def test_bad_paths_are_refused(planted, models, values, message):
    X, _, (two, _), _ = planted
    known = {"fit": two, "unfitted": CRAFT(), "other": CRAFT(k=2, random_state=0).fit(X.iloc[:100])}
    with pytest.raises(CraftInputError, match=message):
        mask_path([known[name] for name in models], values)


def test_fit_path_refuses_an_unknown_knob(planted):
    with pytest.raises(CraftInputError, match="knob='mm' is not a parameter of CRAFT"):
        fit_path(CRAFT(), planted[0], "mm", [0.2])


def test_the_figure_draws_the_path(planted):
    _, _, _, path = planted
    fig = fig_mask_path(path)
    cells = [trace for trace in fig.data if trace.type == "heatmap"]
    assert [trace.name for trace in cells] == [f"track {t}" for t in range(path.n_tracks)]
    for track, trace in enumerate(cells):
        z = np.array(trace.z, dtype=float)
        rows = [path.features.index(name) for name in trace.y]
        assert sorted(rows) == list(range(len(path.features)))
        expected = path.selected[track][:, rows].T.astype(float)
        assert np.array_equal(np.isnan(z), np.broadcast_to(~path.present[track], z.shape))
        assert np.array_equal(z[:, path.present[track]], expected[:, path.present[track]])
    lanes = {trace.name: trace for trace in fig.data if trace.type == "scatter" and trace.name.startswith("track")}
    for track in range(path.n_tracks):
        assert list(lanes[f"track {track}"].x) == [f"{v:g}" for v in path.values[path.present[track]]]
    splits = next(trace for trace in fig.data if trace.name.startswith("split"))
    event = path.events[0]
    assert splits.name == "split (1)" and list(splits.y) == [event.source, event.target, None]
    assert list(splits.x) == ["2", "3", None]
    assert next(trace for trace in fig.data if trace.name.startswith("merge")).name == "merge (0)"


def test_the_scrubber_holds_every_fit_of_the_path_as_a_frame(planted):
    _, _, models, path = planted
    fig = fig_path_scrubber(path, at=2.9)
    (slider,) = fig.layout.sliders
    assert [frame.name for frame in fig.frames] == ["2", "3"] == [step.label for step in slider.steps]
    assert slider.active == 1  # the value nearest to 2.9
    for step, (frame, model) in enumerate(zip(fig.frames, models, strict=True)):
        cells, sizes = frame.data
        columns = [path.features.index(name) for name in cells.x]
        assert sorted(columns) == list(range(len(path.features)))
        z = np.array(cells.z, dtype=float)
        for cluster in range(model.n_clusters_):
            track = _track_of(path, step, cluster)
            assert z[track].tolist() == np.asarray(model.feature_mask_)[cluster][columns].astype(float).tolist()
            assert sizes.x[track] == model.cluster_sizes_[cluster]
            assert frame.layout.yaxis.ticktext[track] == f"track {track}: cluster {cluster} ({model.cluster_sizes_[cluster]:,})"
        absent = path.clusters[:, step] < 0
        assert np.isnan(z[absent]).all() and not np.asarray(sizes.x)[absent].any()
        assert frame.layout.title.text == (f"The fit at k = {model.k:g}: K = {model.n_clusters_}, objective "
                                           f"{model.objective_:,.6g}, λ {model.lam_:.4g}, ρ {model.rho_:.4f}, "
                                           f"{model.n_iter_} iterations")
        # A step of the slider shows its frame at once, with nothing to ask of a server.
        (name,), options = slider.steps[step].args
        assert slider.steps[step].method == "animate" and name == frame.name
        assert options["frame"] == {"duration": 0, "redraw": True} and options["transition"] == {"duration": 0}
    # The figure opens on the frame of its slider's active step.
    assert np.array_equal(np.array(fig.data[0].z, dtype=float), np.array(fig.frames[1].data[0].z, dtype=float),
                          equal_nan=True)
    assert fig.layout.title.text == fig.frames[1].layout.title.text


@pytest.mark.slow  # a fresh Python process: in `make test`, not `make test-fast`
def test_the_path_needs_no_plotly():
    code = "import sys; sys.modules['plotly'] = None\nimport craft.path\nprint('plotly' in sys.modules and sys.modules['plotly'] is not None)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
