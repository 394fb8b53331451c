"""Progressive answers and cluster numbers that follow the clusters (issue 35, sections 2 and 3), in AppTest.

A slider moved to a value whose fit is not known shows at once the warm
refit of the fit on screen, marked provisional, while the default fit of
those settings runs in the background; when it ends the page shows it,
marked refined, with one line on how the two differ. Other pages never
show the provisional fit. Each new view keeps the previous view's cluster
numbers (``craft.relabel``), and the link carries them.

The background fit is held at a gate (as in ``test_app_background.py``) so
that "while it refines" is a state the test controls.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from app_helpers import APP, Gate, chart_elements, clear_caches, ctx, gate_fixture, opened, pytestmark, text  # noqa: F401  (fixture, marks)
from streamlit.testing.v1 import AppTest

from craft.relabel import changed_share
from explorer import cache, view


#: The app's fits, held while the gate is closed (it starts open).
gate = gate_fixture(closed=False)


def tuned(**query) -> AppTest:
    """Tune & see opened on a refined fit."""
    at = opened(**query)
    at.switch_page("pages/clusters.py").run()
    assert not at.exception, at.exception
    assert ctx(at).model is not None and not ctx(at).provisional
    return at


def status(at: AppTest) -> str:
    return " ".join(text(m) for m in at.markdown if "provisional]" in m.value or "refined]" in m.value)


def refine(at: AppTest, gate: Gate) -> None:
    """Let the background fit end and rerun, as the page's polling fragment does in a browser."""
    job = at.session_state["ctx"].job
    gate.event.set()
    if job is None:  # it ended within the run that started it
        return
    assert job.wait(60)
    at.run()
    assert not at.exception, at.exception


def test_a_new_value_shows_a_provisional_fit_then_the_refined_one(gate):
    at = tuned(dataset="mixed_planted", syn_n=300, k=4)
    gate.event.clear()
    at.slider(key="m").set_value(0.55).run()
    assert not at.exception, at.exception
    state = at.session_state["ctx"]
    assert state.provisional and state.job is not None and not state.job.done
    assert state.model.warm_started_ and state.model.m == 0.55
    assert "provisional" in status(at) and chart_elements(at)
    assert state.key != state.fit_key  # figures of the provisional fit are never filed under the fit's digest
    provisional = state.model
    refine(at, gate)
    state = at.session_state["ctx"]
    assert not state.provisional and state.job is None
    assert state.model.m == 0.55 and not state.model.warm_started_
    assert "refined" in status(at) and state.refined_line.startswith("Refined: objective")
    # The refined fit is the one the link reproduces: the default fit of the settings, as stored.
    stored = cache.STORE.get(state.fit_key).model
    assert stored.objective_ == pytest.approx(state.model.objective_)
    moved = changed_share(state.model.labels_, provisional.labels_)
    assert f"({moved:.1%}) changed cluster" in state.refined_line


def test_a_cached_value_shows_its_refined_fit_at_once(gate):
    at = tuned(dataset="mixed_planted", syn_n=300, k=4)
    first = ctx(at).params.m
    at.slider(key="m").set_value(0.5).run()
    refine(at, gate)
    gate.event.clear()
    at.slider(key="m").set_value(first).run()  # the first value: its fit is stored
    state = at.session_state["ctx"]
    assert not state.provisional and state.job is None and "refined" in status(at)


def test_a_second_move_cancels_the_refinement_of_the_value_left(gate):
    at = tuned(dataset="mixed_planted", syn_n=300, k=4)
    gate.event.clear()  # values off the mask path's grid (0.1, 0.2, ...), which Tune & see prefetches
    at.slider(key="m").set_value(0.55).run()
    first = at.session_state["ctx"].job
    at.slider(key="m").set_value(0.65).run()
    second = at.session_state["ctx"].job
    assert first.cancelled and not second.cancelled
    assert "value left was stopped" in status(at)
    assert at.session_state["ctx"].provisional and at.session_state["ctx"].model.m == 0.65
    refine(at, gate)
    assert first.result() is None and ctx(at).model.m == 0.65


def test_the_data_page_never_reports_a_provisional_fit(gate):
    at = tuned(dataset="mixed_planted", syn_n=300, k=4)
    gate.event.clear()
    at.slider(key="m").set_value(0.57).run()
    assert at.session_state["ctx"].provisional
    at.switch_page("pages/data.py").run()
    assert not at.exception, at.exception
    state = at.session_state["ctx"]
    assert not state.provisional and state.model is None and state.job is not None
    assert not any(text(s).startswith("Clustered into") for s in at.success)
    refine(at, gate)


def test_other_pages_wait_for_the_refined_fit(gate):
    at = tuned(dataset="mixed_planted", syn_n=300, k=4)
    gate.event.clear()
    at.slider(key="m").set_value(0.57).run()
    assert at.session_state["ctx"].provisional
    threading.Timer(1.0, gate.event.set).start()
    at.switch_page("pages/export.py").run()
    assert not at.exception, at.exception
    state = at.session_state["ctx"]
    assert not state.provisional and not state.model.warm_started_ and state.model.m == 0.57


def test_clusters_keep_their_numbers_and_the_link_carries_them(gate):
    at = tuned(dataset="fig2_numeric", syn_n=300, k=4)
    before = ctx(at).model.labels_.copy()
    renumbered = False
    for m in (0.5, 0.55, 0.6):
        at.slider(key="m").set_value(m).run()
        refine(at, gate)
        shown = ctx(at).model
        fitted = cache.STORE.get(ctx(at).fit_key).model
        # No renumbering of the fit keeps more rows on the previous view's numbers than the one shown.
        assert changed_share(shown.labels_, before) <= changed_share(fitted.labels_, before)
        renumbered |= not np.array_equal(shown.labels_, fitted.labels_)
        before = shown.labels_.copy()
    assert renumbered, "no move renumbered the fit: the test shows nothing"
    # Every view reads the one numbering: the projection's and the cards' clusters are the shown model's.
    state = ctx(at)
    frame = cache.projection(state.key, 4000, state.model, state.X)
    assert np.array_equal(frame["cluster"].to_numpy(), shown.labels_[frame["row"].to_numpy()])
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    assert np.array_equal(ctx(at).model.labels_, shown.labels_)
    at.switch_page("pages/clusters.py").run()
    assert at.query_params[view.PERM_PARAM] == view.perm_text(
        [int(shown.labels_[fitted.labels_ == j][0]) for j in range(fitted.n_clusters_)])
    # The Export page's link, opened afresh, shows the same numbers.
    at.switch_page("pages/export.py").run()
    query = "?" + at.code[0].value.split("?", 1)[1]
    assert f"{view.PERM_PARAM}=" in query
    cache.STORE.clear()
    fresh = AppTest.from_file(APP, default_timeout=90)
    for key, value in re.findall(r"([^?&=]+)=([^&]*)", query):
        fresh.query_params[key] = value.replace("+", " ")
    fresh.run().run()
    fresh.switch_page("pages/clusters.py").run()
    assert not fresh.exception, fresh.exception
    assert np.array_equal(ctx(fresh).model.labels_, before)


def test_a_link_with_an_unusable_numbering_says_so():
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update({"n_init": "1", "dataset": "fig2_numeric", "k": "4", "clusters": "0.0.1"})
    at.run()
    said = " ".join(text(w) for w in at.warning)
    job = at.session_state["ctx"].job
    if job is not None:  # the first view comes in the run after the fit (the link is read there)
        assert job.wait(60)
        at.run()
        said += " ".join(text(w) for w in at.warning)
    assert not at.exception, at.exception
    assert "clusters='0.0.1'" in said and "must list each of 0..3 once" in said
    at.switch_page("pages/clusters.py").run()
    assert np.array_equal(ctx(at).model.labels_, cache.STORE.get(ctx(at).fit_key).model.labels_)


def test_a_fit_shown_again_keeps_the_numbers_it_had(gate):
    """Back (or a slider moved back) shows the view that was on screen, even after views of other sizes."""
    at = tuned(dataset="zoo", k=6)
    for m in (0.5, 0.51):
        at.slider(key="m").set_value(m).run()
        refine(at, gate)
    shown = ctx(at).model.labels_.copy()
    link = at.query_params.get(view.PERM_PARAM)
    at.number_input(key="k").set_value(2).run()  # matched afresh to these two clusters, the six would renumber
    refine(at, gate)
    at.number_input(key="k").set_value(6).run()
    refine(at, gate)
    assert np.array_equal(ctx(at).model.labels_, shown)
    assert at.query_params.get(view.PERM_PARAM) == link
