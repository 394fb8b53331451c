"""Fits in the background (AppTest): pages that do not need the fit are drawn at once, a changed
parameter cancels the fit nobody waits for, sessions share a running fit, a cancelled fit says so.

The fit is held at a gate (``services.fitting.fit_craft`` wrapped) so that "while it runs" is a state the
test controls, not a race with the machine's speed. The Cancel button itself, clicked while a
page waits, is exercised in a real browser (``tests/browser/test_background_fit.py``).
"""

from __future__ import annotations

import threading

from app_helpers import APP, chart_elements, clear_caches, ctx, gate_fixture, opened, pytestmark, settle, text  # noqa: F401  (fixture, marks)

from explorer import cache


#: The app's fits, held until ``gate.open()``.
gate = gate_fixture(closed=True)


def test_the_data_page_is_usable_while_the_fit_runs(gate):
    at = opened()
    state = at.session_state["ctx"]
    assert at.title[0].value == "Data"
    assert state.model is None and state.job is not None and not state.job.done
    assert any("Fitting CRAFT in the background" in bar.proto.text for bar in at.get("progress"))
    assert at.dataframe  # the table preview is drawn, not waiting for the fit
    # The page's controls work meanwhile (here: a column role), and the fit goes on.
    at.multiselect(key="roles_columns").set_value(["f1"]).run()
    assert not at.exception and at.title[0].value == "Data"
    gate.open()
    model = ctx(at).model
    assert model is not None and model.n_clusters_ == 3
    assert any(text(s).startswith("Clustered into K = 3") for s in at.success)
    assert not at.get("progress")


def test_a_changed_parameter_cancels_the_fit_nobody_waits_for(gate):
    at = opened()
    first = at.session_state["ctx"].job
    at.slider(key="m").set_value(0.5).run()
    second = at.session_state["ctx"].job
    assert second is not None and second is not first
    assert first.cancelled and not second.cancelled
    gate.open()
    assert first.wait(30) and first.result() is None
    assert ctx(at).model.m == 0.5
    # The cancelled fit left nothing behind: asking for it again starts a new fit.
    at.slider(key="m").set_value(0.33).run()
    assert ctx(at).model.m == 0.33
    assert len(gate.started) == 3


def test_a_second_session_joins_the_running_fit_and_keeps_it_alive(gate):
    first, second = opened(), opened()
    job = first.session_state["ctx"].job
    assert second.session_state["ctx"].job is job
    first.slider(key="m").set_value(0.5).run()
    assert not job.cancelled  # the second session still waits for it
    gate.open()
    assert job.wait(60) and job.result().model is not None
    assert ctx(second).model.n_clusters_ == 3
    assert len(gate.started) == 2  # one fit per parameter set, not per session


def test_a_page_that_needs_the_fit_waits_for_the_running_one():
    # No gate: the real fit, started by the Data page, is the one Tune & see waits for.
    at = opened(syn_n=3000)
    job = at.session_state["ctx"].job
    at.switch_page("pages/clusters.py").run()
    assert not at.exception
    state = at.session_state["ctx"]
    assert state.model is not None and state.job is None
    assert at.subheader[0].value == "Tune & see" and chart_elements(at)
    if job is not None:  # the fit outlasted the Data page's grace: the page waited for that same job
        assert job.done and cache.STORE.get(job.key) is not None


def test_a_cancelled_fit_says_so_and_fits_again_on_request(gate):
    at = opened()
    job = at.session_state["ctx"].job
    # What the Cancel button's callback does (the click itself is tested in the browser).
    at.session_state["_fit_cancelled"] = (job.key, 12)
    cache.JOBS.cancel(job.key)
    at.switch_page("pages/clusters.py").run()
    assert not at.exception
    assert any("you cancelled this fit after 12 iterations" in text(n) for n in at.info)
    assert not chart_elements(at)
    gate.open()
    assert job.wait(30) and job.result() is None
    at.button(key="fit_again").click().run()
    assert not at.exception
    assert at.session_state["ctx"].model is not None and chart_elements(at)


def test_the_cancel_button_goes_with_the_bar_when_the_fit_ends(gate):
    at = opened()
    # The fit ends while Tune & see waits for it with its bar and Cancel button.
    threading.Timer(1.0, gate.open).start()
    at.switch_page("pages/clusters.py").run()
    assert not at.exception
    assert at.session_state["ctx"].model is not None and chart_elements(at)
    # A Cancel button left on the finished page would throw the finished fit away when clicked.
    assert "cancel_fit" not in [button.key for button in at.button]
    assert not at.get("progress")


def test_a_cancel_that_reaches_a_finished_fit_keeps_it(gate):
    at = opened()
    job = at.session_state["ctx"].job
    gate.open()
    assert job.wait(30)
    # What the Cancel button's callback leaves when the click arrives as the fit ends: the fit is kept.
    at.session_state["_fit_cancelled"] = (job.key, 386)
    at.switch_page("pages/clusters.py").run()
    assert not at.exception
    assert at.session_state["ctx"].model is not None and chart_elements(at)
    assert not any("you cancelled this fit" in text(box) for box in at.info)
    # It is forgotten, so it cannot come back on a later run either.
    assert "_fit_cancelled" not in at.session_state
