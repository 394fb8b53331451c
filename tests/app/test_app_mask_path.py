"""The mask path on Tune & see and Teach: fitted in the background, its grid's fits shared with the sliders.

The path job fits every value of the grid with the sidebar's parameters and
stores each outcome under that fit's own digest, so a slider moved to a
value of the grid finds its fit made (no new fit job); the figure drawn is
:func:`craft.plots.fig_mask_path` of the path, whose masks are the
stored fits' ``feature_mask_``.
"""

from __future__ import annotations

import numpy as np
import pytest
from app_helpers import array, charts, clear_caches, settle, start, text  # noqa: F401  (fixture)

from explorer import cache, mask_path

pytestmark = pytest.mark.filterwarnings("ignore:CRAFT did not converge")


def _open(at):
    at.session_state["view"] = "Mask path"
    at.run()
    assert not at.exception, at.exception
    return at


def _finish(at, knob: str = "m"):
    job = at.session_state["_path_jobs"][knob]
    assert job.wait(180), "the mask path did not finish"
    at.run()
    assert not at.exception, at.exception
    return job.key


def test_tune_and_see_draws_the_mask_path_from_the_grid_fits():
    at = _open(start("clusters", dataset="zoo", k=4))
    key = _finish(at)
    ctx = at.session_state["ctx"]
    result = cache.STORE.get(key)
    path = result.path
    assert path.values.tolist() == list(mask_path.M_GRID) and not result.sampled
    for step, m in enumerate(mask_path.M_GRID):
        fit_key = cache.fit_key(ctx.data.key, ctx.schema, ctx.params.replace(m=m))
        outcome = cache.STORE.get(fit_key)
        assert outcome is not None, f"the fit at m = {m} is not stored under its own digest"
        # Its mask heatmap as Tune & see opens it is built too (no model given: a figure not kept would fail).
        built = cache.masks_figure(fit_key, cache.default_order(ctx.data), False, None, ctx.data)
        assert built.data
        for track in np.flatnonzero(path.present[:, step]):
            mask = outcome.model.feature_mask_[path.clusters[track, step]]
            assert path.selected[track, step].tolist() == mask.tolist()
    drawn = [spec for spec in charts(at) if "The mask path over m" in spec["layout"]["title"]["text"]]
    assert len(drawn) == 1
    heatmaps = [trace for trace in drawn[0]["data"] if trace["type"] == "heatmap"]
    assert len(heatmaps) == path.n_tracks
    assert any("Moving the sidebar's slider to a value of the path" in text(c) for c in at.caption)
    # The scrubber: one frame per stored fit, opening on the sidebar's m, each frame that fit's masks and metrics.
    (scrubber,) = [spec for spec in charts(at) if spec.get("frames")]
    assert [frame["name"] for frame in scrubber["frames"]] == [f"{m:g}" for m in mask_path.M_GRID]
    assert scrubber["layout"]["sliders"][0]["active"] == mask_path.M_GRID.index(ctx.params.m)
    for step, (frame, m) in enumerate(zip(scrubber["frames"], mask_path.M_GRID, strict=True)):
        model = cache.STORE.get(cache.fit_key(ctx.data.key, ctx.schema, ctx.params.replace(m=m))).model
        z = array(frame["data"][0]["z"]).astype(float)
        columns = [path.features.index(name) for name in frame["data"][0]["x"]]
        for track in np.flatnonzero(path.present[:, step]):
            cluster = path.clusters[track, step]
            assert z[track].tolist() == model.feature_mask_[cluster][columns].astype(float).tolist()
            assert array(frame["data"][1]["x"])[track] == model.cluster_sizes_[cluster]
        assert f"K = {model.n_clusters_}, objective {model.objective_:,.6g}" in frame["layout"]["title"]["text"]
    assert any("Drag the slider under this figure" in text(c) for c in at.caption)

    # m moved to a value of the grid: the fit is there, no job is started.
    at.slider(key="m").set_value(0.3).run()
    assert not at.exception, at.exception
    assert at.session_state["ctx"].job is None and at.session_state["ctx"].model is not None
    assert at.session_state["ctx"].model.m == 0.3


def test_teach_shows_the_same_path():
    at = start("teach", dataset="zoo", k=4)
    key = _finish(at)
    assert cache.STORE.get(key).path.knob == "m"
    assert any("The mask path" in h.value for h in at.subheader)
    assert [spec for spec in charts(at) if "The mask path over m" in spec["layout"]["title"]["text"]]


def test_a_large_table_is_fitted_on_a_sample_and_says_so(monkeypatch):
    monkeypatch.setattr(mask_path, "PATH_ROWS", 60)
    at = _open(start("clusters", dataset="zoo", k=3))
    key = _finish(at)
    result = cache.STORE.get(key)
    assert result.sampled and result.n_rows == 60
    assert any("fixed sample of 60 of the 101 rows" in text(m) for m in [*at.markdown, *at.caption, *at.info])


def test_tune_and_see_starts_fitting_the_m_grid_at_once():
    at = start("clusters", dataset="zoo", k=4)
    job = at.session_state["_path_jobs"]["m"]
    assert job.wait(180) and job.result().path.values.tolist() == list(mask_path.M_GRID)


def test_a_path_longer_than_the_budget_is_not_prefetched_but_fitted_when_its_tab_opens(monkeypatch):
    # Zoo fits in well under a second: a budget below nine of its fits stands for a table whose fit is slow.
    monkeypatch.setattr(mask_path, "PREFETCH_BUDGET_S", 0.0)
    at = start("clusters", dataset="zoo", k=4)
    assert at.session_state["ctx"].outcome.seconds > 0.0
    assert "m" not in (at.session_state["_path_jobs"] if "_path_jobs" in at.session_state else {})
    at = _open(at)
    key = _finish(at)
    assert cache.STORE.get(key).path.values.tolist() == list(mask_path.M_GRID)


def test_a_parameter_moved_before_the_prefetch_starts_cancels_it(monkeypatch):
    monkeypatch.setattr(mask_path, "PREFETCH_DELAY_S", 60.0)
    at = start("clusters", dataset="zoo", k=4)
    first = at.session_state["_path_jobs"]["m"]
    ctx = at.session_state["ctx"]
    at.number_input(key="k").set_value(5).run()
    assert not at.exception, at.exception
    assert first.wait(10) and first.cancelled and first.result() is None
    # No value of its grid was fitted (the fit on screen, m = 0.5, is the page's own).
    assert cache.STORE.get(cache.fit_key(ctx.data.key, ctx.schema, ctx.params.replace(m=0.1))) is None
    # The new settings' path starts once their fit is refined (a provisional fit is shown meanwhile).
    settle(at)
    second = at.session_state["_path_jobs"]["m"]
    assert second is not first
    mask_path.JOBS.cancel(second.key)  # not left waiting to fit in a later test


def test_teach_asks_before_a_path_longer_than_the_budget(monkeypatch):
    # A budget below nine of Zoo's fits stands for a slow table: Teach's section, below the lecture, waits.
    monkeypatch.setattr(mask_path, "PREFETCH_BUDGET_S", 0.0)
    at = start("teach", dataset="zoo", k=4)
    assert "m" not in (at.session_state["_path_jobs"] if "_path_jobs" in at.session_state else {})
    assert any("so it starts when you ask" in text(c) for c in at.caption)
    assert not [spec for spec in charts(at) if "The mask path over m" in spec["layout"]["title"]["text"]]
    at.button(key="path_start_teach_m").click().run()
    assert not at.exception, at.exception
    key = _finish(at)
    assert cache.STORE.get(key).path.values.tolist() == list(mask_path.M_GRID)
    assert [spec for spec in charts(at) if "The mask path over m" in spec["layout"]["title"]["text"]]
    assert not any("so it starts when you ask" in text(c) for c in at.caption)
