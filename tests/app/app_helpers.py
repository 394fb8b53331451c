"""What the app's tests share: starting the app in ``streamlit.testing.v1.AppTest``, pages, its figures, caches.

The app's test modules (``tests/app/test_*.py``) import these from
here; a module that imports ``clear_caches`` gets it as an autouse fixture, and one that imports
``pytestmark`` the warnings every app test expects. No test lives here (pytest collects ``test_*.py`` only).
"""

from __future__ import annotations

import base64
import json
import re
import threading
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from explorer import mask_path
from explorer.cache import STORE
from explorer.services import EXAMPLES, fitting
from explorer.state import CONTINUED

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = {
    "data": "pages/data.py",
    "clusters": "pages/clusters.py",
    "cards": "pages/cards.py",
    "evaluate": "pages/evaluate.py",
    "teach": "pages/teach.py",
    "compare": "pages/compare.py",
    "whatif": "pages/whatif.py",
    "score": "pages/score.py",
    "export": "pages/export.py",
}
SYNTHETIC = [name for name in EXAMPLES if name.startswith(("fig", "mixed"))]

# Expected while tuning: the engine warns (and the app says in words) when k is not reached.
pytestmark = [
    pytest.mark.filterwarnings("ignore:k=.* clusters were not reachable:UserWarning"),
    pytest.mark.filterwarnings("ignore:CRAFT did not converge"),
]


@pytest.fixture(autouse=True)
def clear_caches():
    """Caches live in the process: every AppTest starts from empty ones."""
    st.cache_data.clear()
    STORE.clear()
    yield
    # The mask path's background fits of this test must not run into the next one (nor land in its store).
    for job in mask_path.JOBS.cancel_all():
        job.wait(60)
    st.cache_data.clear()
    STORE.clear()


def start(page: str = "data", **query) -> AppTest:
    """The app opened with ``query`` in its URL (one restart by default, for speed)."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.setdefault("n_init", "1")
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    if page != "data":
        visit(at, page)
    return settle(at)


def opened(**query) -> AppTest:
    """The app opened with ``query`` in its URL (one restart), not waiting for its fit: what runs meanwhile is
    the test's."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["n_init"] = "1"
    for key, value in query.items():
        at.query_params[key] = str(value)
    # Twice: AppTest's first run writes the URL, and a widget set right after it would be ignored.
    at.run().run()
    assert not at.exception, at.exception
    return at


def visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(PAGES[page]).run()
    assert not at.exception, at.exception
    return settle(at)


def settle(at: AppTest) -> AppTest:
    """Where the page drew a background fit's progress (the Data page), wait for the fit and rerun.

    In a browser the page's polling fragment reruns the app when the fit is
    done; AppTest runs no timers, so this does it.
    """
    job = at.session_state["ctx"].job if "ctx" in at.session_state else None
    if job is not None:
        assert job.wait(90), "the background fit did not finish"
        at.session_state[CONTINUED] = True
        at.run()
        assert not at.exception, at.exception
    return at


def ctx(at: AppTest):
    return settle(at).session_state["ctx"]


def text(element) -> str:
    """An element's text with the Markdown escapes removed."""
    return re.sub(r"\\(.)", r"\1", element.value)


def errors(at: AppTest) -> list[str]:
    return [text(e) for e in settle(at).error]


def chart_elements(at: AppTest) -> list:
    """The figures the app drew (``explorer.plotly_view``'s component), as AppTest elements."""
    return [element for element in at.get("bidi_component") if element.proto.component_name == "craft_chart"]


def chart_spec(element) -> str:
    """A drawn figure's JSON, as the browser draws it."""
    return json.loads(element.proto.json)["figure"]


def chart_config(element) -> str:
    """A drawn figure's Plotly config, as JSON."""
    return json.loads(element.proto.json)["config"]


def charts(at: AppTest) -> list[dict]:
    return [json.loads(chart_spec(chart)) for chart in chart_elements(at)]


def array(value) -> np.ndarray:
    """A Plotly JSON array: a list, or the typed-array form ``{"dtype", "bdata", "shape"}``."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", flat.size)).split(",")]
        return flat.reshape(shape)
    return np.asarray(value)


def formulas(at: AppTest) -> list[str]:
    return [latex.value.strip("$").strip() for latex in at.latex]


def chart_titles(at: AppTest) -> list[str]:
    return [spec["layout"].get("title", {}).get("text", "") for spec in charts(at)]


def upload(at: AppTest, name: str, content: bytes) -> AppTest:
    if not at.get("file_uploader"):
        visit(at, "data")
    at.file_uploader(key="uploader").set_value((name, content, "text/csv")).run()
    assert not at.exception, at.exception
    return settle(at)


class Gate:
    """Holds every fit started through the app (``services.fitting.fit_craft``) while closed; counts them.

    So that "while the fit runs" is a state a test controls, not a race with the machine's speed.
    """

    def __init__(self, *, closed: bool):
        self.event = threading.Event()
        if not closed:
            self.event.set()
        self.started: list = []

    def open(self) -> None:
        self.event.set()


def gate_fixture(*, closed: bool):
    """A ``gate`` fixture: the app's fits go through a :class:`Gate` (``closed``: held from the start) for the test,
    opened at its end. A module takes it as ``gate = gate_fixture(closed=...)``."""

    @pytest.fixture
    def gate(monkeypatch):
        gate = gated_fits(monkeypatch, closed=closed)
        yield gate
        gate.open()

    return gate


def gated_fits(monkeypatch, *, closed: bool) -> Gate:
    """Route the app's fits through a :class:`Gate` (``closed``: held from the start) for this test."""
    gate = Gate(closed=closed)
    real = fitting.fit_craft

    def gated(table, schema, params, callback=None):
        gate.started.append(params)
        # Report iterations while held, so a cancellation is seen as it would be in a long fit.
        while not gate.event.wait(0.01):
            if callback is not None:
                callback(type("Record", (), {"lam": 0.0, "restart": 0})())
        return real(table, schema, params, callback=callback)

    monkeypatch.setattr(fitting, "fit_craft", gated)
    return gate
