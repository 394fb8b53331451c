"""Responsiveness as a person feels it: the app in a real Chromium against ``streamlit run``.

Playwright drives Debian's Chromium (``/usr/bin/chromium``, headless) against
a ``streamlit run app.py`` server of this checkout. Every action is timed in
the page itself:

* **start**: the input event (``pointerdown`` / ``keydown`` / ``input``, caught
  on ``window`` in the capture phase before the app sees it); for a new
  session, the navigation's start (``performance.timeOrigin``);
* **end**: the last change of the DOM (a ``MutationObserver`` on the whole
  document) before the app reports it is no longer running
  (``[data-testid='stApp'][data-test-script-state='notRunning']``) and the
  DOM has then stayed unchanged for ``QUIET_MS``.

Beside it, the **server's** share: from the browser's rerun request (the
``rerun_script`` message on Streamlit's websocket) to the arrival of the
server's ``script_finished`` message, both timed in the page (Playwright
only tells which message is which). The difference is the browser's work:
drawing, Plotly, layout.

Each action is measured ``--repeats`` times (at least 5), after one warm-up
where the action would otherwise be measured cold; the median and the range
are reported with the machine's load average at the start and end of each
action. Timings are never asserted by tests (``tests/browser/test_bench_browser.py``
runs one action as a smoke test).

    python -m benchmarks.bench_browser                 # all actions, print
    python -m benchmarks.bench_browser --write-results # and the RESULTS section
    python -m benchmarks.bench_browser --actions control --repeats 1   # one action
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

from benchmarks.app_server import ServerProcess, free_port

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TITLE = "App responsiveness in the browser"

#: The app's page links: in the header (``st.navigation(position="top")``), or in the sidebar where the window is too
#: narrow for the header.
NAV_LINKS = "[data-testid='stTopNavLink'], [data-testid='stSidebarNav'] a"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
#: The DOM must stay unchanged this long after the app is idle for an action to count as settled.
QUIET_MS = 500
#: How often the page is asked whether it has settled.
POLL_MS = 20
#: Longest an action may take before it counts as failed.
ACTION_TIMEOUT_S = 120
#: How ``make run`` starts the server (the app's code loaded before it opens), and plain Streamlit.
SERVE_COMMAND = [sys.executable, "-m", "explorer.serve"]
PLAIN_COMMAND = [sys.executable, "-m", "streamlit", "run", "app.py"]

# The timer lives in the page from its first byte: input events, DOM changes,
# and the times the websocket sends and receives its messages (in order).
_TIMER_JS = """
(() => {
  const t = {input: null, last: performance.now(), mutations: 0, chart: null, sent: [], received: []};
  window.__craftTimer = t;
  for (const type of ['pointerdown', 'keydown', 'input']) {
    window.addEventListener(type, () => { if (t.input === null) { t.input = performance.now(); t.mutations = 0; } }, true);
  }
  new MutationObserver(() => {
    t.last = performance.now(); t.mutations += 1;
    // The first Plotly figure drawn (its SVG exists), timed when the DOM changed.
    if (t.chart === null && document.querySelector('.js-plotly-plot .main-svg')) { t.chart = t.last; }
  })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const Native = window.WebSocket;
  class Timed extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => t.received.push(performance.now()));
    }
    send(data) { t.sent.push(performance.now()); return super.send(data); }
  }
  window.WebSocket = Timed;
})();
"""
_STATE_JS = """
(selector) => {
  const t = window.__craftTimer;
  return {idle: document.querySelector(selector) !== null, now: performance.now(), last: t.last,
          input: t.input, mutations: t.mutations, chart: t.chart};
}
"""


# ---------------------------------------------------------------------------
# Server and browser


class Server:
    """A ``streamlit run app.py`` process of this checkout on a free port, with its own HOME."""

    def __init__(self, command: list[str] | None = None):
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self.home = Path(tempfile.mkdtemp(prefix="craft-bench-home-"))
        self.command = command or SERVE_COMMAND
        self.log = self.home / "server.log"
        self.ready_s: float | None = None
        self._process: ServerProcess | None = None

    def start(self) -> Server:
        env = dict(os.environ, HOME=str(self.home), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
                   PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        args = ["--server.headless", "true", "--server.port", str(self.port), "--server.address", "localhost",
                "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        self._process = ServerProcess([*self.command, *args], port=self.port, cwd=ROOT, env=env, log_path=self.log)
        self.ready_s = self._process.start()
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.stop()
        shutil.rmtree(self.home, ignore_errors=True)


class Frames:
    """The kinds of the websocket's messages, in order, as Playwright sees them.

    Their times come from the page (``__craftTimer.sent`` / ``received``, the
    same order), so that Playwright's event delivery adds no delay.
    """

    def __init__(self):
        self.sent: list[str | None] = []
        self.received: list[str | None] = []

    def watch(self, page) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        def kind(message_type, payload):
            if not isinstance(payload, bytes):
                return None
            try:
                return message_type.FromString(payload).WhichOneof("type")
            except Exception:  # noqa: BLE001 - not a Streamlit message
                return None

        def on_socket(socket):
            socket.on("framesent", lambda payload: self.sent.append(kind(BackMsg, payload)))
            socket.on("framereceived", lambda payload: self.received.append(kind(ForwardMsg, payload)))

        page.on("websocket", on_socket)

    def marks(self) -> tuple[int, int]:
        return len(self.sent), len(self.received)

    def server_seconds(self, page, since: tuple[int, int]) -> float | None:
        """From the first rerun request after ``since`` to the last finished run, in page time."""
        times = page.evaluate("() => ({sent: window.__craftTimer.sent, received: window.__craftTimer.received})")
        reruns = [i for i, kind in enumerate(self.sent) if i >= since[0] and kind == "rerun_script"]
        finished = [i for i, kind in enumerate(self.received) if i >= since[1] and kind == "script_finished"]
        if not finished or finished[-1] >= len(times["received"]):
            return None
        end = times["received"][finished[-1]]
        begin = times["sent"][reruns[0]] if reruns and reruns[0] < len(times["sent"]) else 0.0
        return max(end - begin, 0.0) / 1000


class Browser:
    """Headless Debian Chromium under Playwright; pages carry the timer."""

    def __init__(self):
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self.chromium = self._playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)

    def page(self, base_url: str):
        context = self.chromium.new_context(viewport={"width": 1400, "height": 1000}, base_url=base_url)
        context.set_default_timeout(ACTION_TIMEOUT_S * 1000)
        context.add_init_script(_TIMER_JS)
        page = context.new_page()
        frames = Frames()
        frames.watch(page)
        page.frames_seen = frames  # type: ignore[attr-defined]  # every timing helper reads the page's watcher
        return page

    def close(self) -> None:
        self.chromium.close()
        self._playwright.stop()


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
    if not os.access(found, os.X_OK):
        raise RuntimeError("no Chromium: install Debian's package (apt-get install -y chromium)")
    return found


# ---------------------------------------------------------------------------
# Timing


@dataclass
class Timing:
    browser_s: float
    server_s: float | None
    first_chart_s: float | None = None
    phases: dict | None = None


def settle(page, *, since_navigation: bool = False, chart: bool = False) -> Timing:
    """Wait until the app is idle and the DOM quiet; the time from the input (or navigation) to the last change.

    With ``chart``, also until a Plotly figure is drawn: under load the figure's JavaScript can arrive
    after the DOM has been quiet for ``QUIET_MS``.
    """
    deadline = time.perf_counter() + ACTION_TIMEOUT_S
    while True:
        state = page.evaluate(_STATE_JS, APP_IDLE)
        start = 0.0 if since_navigation else state["input"]
        changed = since_navigation or (start is not None and state["mutations"] > 0)
        drawn = not chart or state["chart"] is not None
        if changed and drawn and state["idle"] and state["now"] - state["last"] >= QUIET_MS:
            break
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the page did not settle within {ACTION_TIMEOUT_S} s: {state}")
        page.wait_for_timeout(POLL_MS)
    first = None if state["chart"] is None or state["chart"] < (start or 0.0) else (state["chart"] - start) / 1000
    return Timing((state["last"] - start) / 1000, None, first)


def _armed(page) -> tuple[int, int]:
    """Forget the last input and DOM changes; the websocket's message counts from here."""
    page.evaluate("() => { window.__craftTimer.input = null; window.__craftTimer.mutations = 0; }")
    return page.frames_seen.marks()


def timed(page, action) -> Timing:
    """Run ``action`` (Playwright input) and time it in the page."""
    since = _armed(page)
    action()
    timing = settle(page)
    timing.server_s = page.frames_seen.server_seconds(page, since)
    return timing


_PHASES_JS = """
() => {
  const scripts = performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'script');
  return {scripts: Math.max(0, ...scripts.map((e) => e.responseEnd)), sent: window.__craftTimer.sent,
          received: window.__craftTimer.received};
}
"""


def open_page(page, path: str, *, chart: bool = False) -> Timing:
    """Load ``path`` in ``page`` (a new Streamlit session) and time it from the navigation's start.

    ``chart``: the page draws a Plotly figure; wait for it too.
    """
    since = page.frames_seen.marks()
    page.goto(path, wait_until="commit")
    timing = settle(page, since_navigation=True, chart=chart)
    timing.server_s = page.frames_seen.server_seconds(page, since)
    # Where a new session's time goes: the app's JavaScript, its first rerun request, the first run's end.
    phases = page.evaluate(_PHASES_JS)
    frames = page.frames_seen
    first_run = [i for i, kind in enumerate(frames.sent) if kind == "rerun_script"]
    finished = [i for i, kind in enumerate(frames.received) if kind == "script_finished"]
    timing.phases = {
        "scripts_loaded": phases["scripts"] / 1000,
        "run_requested": phases["sent"][first_run[0]] / 1000 if first_run and first_run[0] < len(phases["sent"]) else None,
        "run_finished": phases["received"][finished[0]] / 1000 if finished and finished[0] < len(phases["received"]) else None,
    }
    return timing


# ---------------------------------------------------------------------------
# Widgets


def slider_step(page, key: str, keys: str) -> None:
    """Move the slider ``key`` with the keyboard (``keys``: e.g. "ArrowRight")."""
    thumb = page.locator(f".st-key-{key} input[type=range]")
    thumb.focus()
    page.keyboard.press(keys)


def set_number(page, key: str, value) -> None:
    field = page.locator(f".st-key-{key} input")
    field.fill(str(value))
    field.press("Enter")


def click_tab(page, title: str) -> None:
    page.locator("[data-testid='stTab']", has_text=title).first.click()


def click_option(page, key: str, label: str) -> None:
    page.locator(f".st-key-{key} button", has_text=label).first.click()


def fit_time_shown(page) -> str | None:
    """The fit's time as the page shows it: the "Fit time" metric, or Tune & see's header line."""
    metric = page.locator("[data-testid='stMetric']", has_text="Fit time")
    if metric.count():
        return metric.first.locator("[data-testid='stMetricValue']").inner_text().strip()
    header = page.locator(".st-key-fit_numbers")
    found = re.search(r"Fit time\s+([\d.]+ s)", header.first.inner_text()) if header.count() else None
    return found.group(1) if found else None


_UNTIL_JS = """
(selector) => new Promise((resolve) => {
  const check = () => document.querySelector(selector) ? resolve(performance.now()) : requestAnimationFrame(check);
  check();
})
"""


def timed_until(page, action, selector: str) -> Timing:
    """Run ``action`` and time it in the page until ``selector`` matches (checked at every frame).

    For a page that never settles (a long fit's progress moves on it five times a second), the time to
    the element the user waits for, not to a quiet DOM.
    """
    since = _armed(page)
    action()
    shown = page.evaluate(_UNTIL_JS, selector)
    start = page.evaluate("() => window.__craftTimer.input")
    return Timing((shown - start) / 1000, page.frames_seen.server_seconds(page, since))


def wide_table(n_columns: int = 10_000, n_rows: int = 4) -> bytes:
    """A CSV of a few rows and many five-level columns (``c0``, ``c1``, ...): every page's per-column work."""
    header = ",".join(f"c{i}" for i in range(n_columns))
    rows = [",".join(str((r * 7 + i) % 5) for i in range(n_columns)) for r in range(n_rows)]
    return ("\n".join([header, *rows]) + "\n").encode()


def noise_table(n_rows: int, seed: int) -> bytes:
    """A CSV of structureless rows (8 numeric, 8 five-level columns): fits that take tens of seconds."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    table = pd.DataFrame({**{f"x{i}": rng.normal(size=n_rows).round(3) for i in range(8)},
                          **{f"c{i}": rng.choice(list("abcde"), n_rows) for i in range(8)}})
    return table.to_csv(index=False).encode()


# ---------------------------------------------------------------------------
# Actions


@dataclass
class Result:
    key: str
    action: str
    target_s: float
    browser_s: list = field(default_factory=list)
    server_s: list = field(default_factory=list)
    first_chart_s: list = field(default_factory=list)
    phases: list = field(default_factory=list)
    baseline_s: list = field(default_factory=list)
    load: tuple = ()
    note: str = ""
    ratio: float | None = None  # the target as a multiple of the baseline's median (``baseline_s``)

    def add(self, timing: Timing) -> None:
        self.browser_s.append(timing.browser_s)
        self.server_s.append(timing.server_s)
        if timing.first_chart_s is not None:
            self.first_chart_s.append(timing.first_chart_s)
        if timing.phases:
            self.phases.append(timing.phases)

    def phase_note(self) -> str:
        """Medians of a new session's phases, from the navigation's start."""
        if not self.phases:
            return ""
        parts = []
        for name, text in (("scripts_loaded", "last JavaScript chunk loaded"), ("run_requested", "first run requested"),
                           ("run_finished", "first run finished")):
            values = [p[name] for p in self.phases if p.get(name) is not None]
            if values:
                parts.append(f"{text} {statistics.median(values):.2f} s")
        return "; ".join(parts)


def _view_control(browser, server, repeats) -> Result:
    result = Result("control", "a view-only control inside a fragment (Tune & see › Feature masks › Feature order, "
                               "Zoo: the mask figure redrawn in the other order)", 0.15)
    page = browser.page(server.url)
    # Not the default example: its planted subspaces are blocks in table order, so both orders draw the same
    # figure, nothing is redrawn, and the click was timed to the button's own change.
    open_page(page, "/clusters?dataset=zoo&view=Feature+masks")
    options = ["subspaces as blocks", "table order"]
    click_option(page, "mask_order", options[0])  # warm: both orders' figures cached
    settle(page)
    for i in range(repeats):
        result.add(timed(page, lambda i=i: click_option(page, "mask_order", options[(i + 1) % 2])))
    page.context.close()
    return result


def _toggle(browser, server, repeats) -> Result:
    result = Result("toggle", "a view-only toggle inside a fragment (Tune & see › Feature masks › beside the planted subspaces)", 0.15)
    page = browser.page(server.url)
    open_page(page, "/clusters?view=Feature+masks")
    toggle = page.locator(".st-key-mask_truth label")
    toggle.click()
    settle(page)
    for _ in range(repeats):
        result.add(timed(page, toggle.click))
    page.context.close()
    return result


def _tab_switch(browser, server, repeats) -> Result:
    result = Result("tab", "switching tabs on Tune & see (Feature masks ↔ Data heatmap)", 0.30)
    page = browser.page(server.url)
    open_page(page, "/clusters?view=Feature+masks")
    tabs = ["Data heatmap", "Feature masks"]
    click_tab(page, tabs[0])  # warm: both tabs' figures cached
    settle(page)
    click_tab(page, tabs[1])
    settle(page)
    for i in range(repeats):
        result.add(timed(page, lambda i=i: click_tab(page, tabs[i % 2])))
    page.context.close()
    return result


def _cached_value(browser, server, repeats) -> Result:
    result = Result("cached", "m ± 0.01 on the bundled 1,000-row mixed example (credit-g), back to a cached value", 0.30)
    page = browser.page(server.url)
    open_page(page, "/clusters?dataset=credit-g&view=Feature+masks")
    timed(page, lambda: slider_step(page, "m", "ArrowRight"))  # m = 0.51, a new fit, then cached
    timed(page, lambda: slider_step(page, "m", "ArrowLeft"))
    for i in range(repeats):
        result.add(timed(page, lambda i=i: slider_step(page, "m", "ArrowRight" if i % 2 == 0 else "ArrowLeft")))
    page.context.close()
    return result


def _teach_step(browser, server, repeats) -> Result:
    result = Result("teach", "Teach: the iteration slider one step, default example (300 rows)", 0.20)
    page = browser.page(server.url)
    open_page(page, "/teach")
    for i in range(repeats + 1):
        timing = timed(page, lambda i=i: slider_step(page, "teach_iter", "ArrowLeft" if i % 2 == 0 else "ArrowRight"))
        if i:  # the first step computes the iteration's state; later ones alternate between cached ones
            result.add(timing)
    page.context.close()
    return result


def _new_fit_10k(browser, server, repeats) -> Result:
    result = Result("fit10k", "a new fit on 10,000 mixed rows (mixed_planted, m one step to a value not seen yet)", 1.0)
    page = browser.page(server.url)
    open_page(page, "/clusters?dataset=mixed_planted&syn_n=10000&view=Feature+masks")
    fits = []
    for _ in range(repeats):
        result.add(timed(page, lambda: slider_step(page, "m", "ArrowRight")))
        fits.append(fit_time_shown(page))
    result.note = "Fit time shown: " + ", ".join(str(f) for f in fits)
    page.context.close()
    return result


def _new_session(browser, server, repeats) -> Result:
    result = Result("session", "a new browser session to its first chart (Tune & see, default example)", 3.0)
    for _ in range(repeats):
        page = browser.page(server.url)
        result.add(open_page(page, "/clusters?view=Feature+masks", chart=True))
        page.context.close()
    result.note = result.phase_note()
    return result


#: A bare Streamlit page: one Plotly heatmap of the given shape and size, nothing else.
BARE_PAGE = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st

z = np.random.default_rng(0).integers(0, 2, size=({rows}, {columns}))
st.plotly_chart(go.Figure(go.Heatmap(z=z), layout=dict(height={height})))
"""
#: The app's first chart as the browser drew it: heatmap rows and columns, the figure's height.
_CHART_SIZE_JS = """
() => {
  const plot = document.querySelector('.js-plotly-plot');
  const z = plot.data.find((trace) => trace.type === 'heatmap').z;
  // A NumPy array arrives as {dtype, bdata, shape: "rows,columns"}; a list as nested arrays.
  const [rows, columns] = z.shape !== undefined ? String(z.shape).split(',').map(Number) : [z.length, z[0].length];
  return {rows, columns, height: plot._fullLayout.height};
}
"""
#: The app's first view may take at most this many times the bare page's (median against median, one run).
FIRST_VIEW_RATIO = 1.25


def _first_view(browser, server, repeats) -> Result:
    """A new session's first chart, the app against a bare page with one heatmap of the same size, alternated."""
    path = "/clusters?view=Feature+masks"
    result = Result("first_view", "a new session's first chart (a shared link to Tune & see, default example) "
                                  "against a bare Streamlit page with one Plotly heatmap of the same size", 0.0)
    probe = browser.page(server.url)
    open_page(probe, path, chart=True)
    size = probe.evaluate(_CHART_SIZE_JS)
    probe.context.close()
    folder = Path(tempfile.mkdtemp(prefix="craft-bench-bare-"))
    script = folder / "bare.py"
    script.write_text(BARE_PAGE.format(**size), encoding="utf-8")
    bare = Server([sys.executable, "-m", "streamlit", "run", str(script)]).start()
    bare_s: list[float] = []
    try:
        warm = browser.page(bare.url)  # the bare server warmed by one session, as the app's is
        open_page(warm, "/", chart=True)
        warm.context.close()
        for _ in range(repeats):
            page = browser.page(bare.url)
            drawn = open_page(page, "/", chart=True).first_chart_s
            if drawn is None:
                raise RuntimeError("the bare page drew no chart: nothing to compare the app's first view with")
            bare_s.append(drawn)
            page.context.close()
            page = browser.page(server.url)
            result.add(open_page(page, path, chart=True))
            page.context.close()
    finally:
        bare.stop()
        shutil.rmtree(folder, ignore_errors=True)
    result.baseline_s = bare_s
    result.target_s = FIRST_VIEW_RATIO * statistics.median(bare_s)
    ratio = statistics.median(result.first_chart_s) / statistics.median(bare_s)
    result.note = (f"bare page's first chart {_stats(bare_s)} ({size['rows']} × {size['columns']} heatmap, "
                   f"{size['height']} px); ratio of the medians {ratio:.2f} (target ≤ {FIRST_VIEW_RATIO}); "
                   + result.phase_note())
    return result


#: A bare Streamlit page: one slider and one Plotly heatmap of the given shape that it redraws.
BARE_SLIDER_PAGE = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st

k = st.slider("k", 2, 40, 2, key="k")
z = np.random.default_rng(k).integers(0, 2, size=({rows}, {columns}))
st.plotly_chart(go.Figure(go.Heatmap(z=z), layout=dict(height={height})))
"""
#: The mask path's caption names its knob once its figure is drawn (the page reruns when the path is done).
_PATH_DRAWN_JS = "(knob) => document.body.innerText.includes('The mask path over ' + knob)"


def _bare_slider_steps(browser, size: dict, repeats: int) -> list[float]:
    """The bare page's slider one step right, ``repeats`` times, timed as the app's actions are."""
    folder = Path(tempfile.mkdtemp(prefix="craft-bench-slider-"))
    script = folder / "slider.py"
    script.write_text(BARE_SLIDER_PAGE.format(**size), encoding="utf-8")
    bare = Server([sys.executable, "-m", "streamlit", "run", str(script)]).start()
    try:
        page = browser.page(bare.url)
        open_page(page, "/", chart=True)
        timed(page, lambda: slider_step(page, "k", "ArrowRight"))  # warm
        steps = [timed(page, lambda: slider_step(page, "k", "ArrowRight")).browser_s for _ in range(repeats)]
        page.context.close()
    finally:
        bare.stop()
        shutil.rmtree(folder, ignore_errors=True)
    return steps


def _zoo_path_page(browser, server):
    """Tune & see's Mask path tab on Zoo at k = 2, its m and k paths fitted (the k path shown)."""
    page = browser.page(server.url)
    open_page(page, "/clusters?dataset=zoo&k=2&view=Mask+path")
    _k_path_drawn(page)
    return page


def _upload_path_page(browser, server):
    """The same on a 10,000-row upload (12 numeric + 12 categorical columns, six planted clusters)."""
    page = browser.page(server.url)
    open_page(page, "/")
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader input[type='file']").set_input_files(
        files=[{"name": "mixed10k.csv", "mimeType": "text/csv", "buffer": _upload_table(10_000, 0)}])
    settle_until(page, lambda: page.locator("[data-testid='stSidebar']", has_text="mixed10k.csv").count() > 0)
    timed(page, lambda: set_number(page, "k", 2))
    page.locator(NAV_LINKS, has_text="Tune & see").first.click()
    settle(page)
    click_tab(page, "Mask path")
    _k_path_drawn(page)
    return page


def _k_path_drawn(page) -> None:
    settle_until(page, lambda: page.evaluate(_PATH_DRAWN_JS, "m"))
    click_option(page, "path_knob_tune", "k")
    settle_until(page, lambda: page.evaluate(_PATH_DRAWN_JS, "k"))


def _scrubbed(browser, page, result: Result, repeats: int) -> Result:
    """From Tune & see's Mask path tab at k = 2, the k path drawn: time k = 3, 4... on Feature masks."""
    click_tab(page, "Feature masks")
    settle(page, chart=True)
    size = page.evaluate(_CHART_SIZE_JS)
    # k = 3, 4, ... : each a value of the grid (2 to 8) not shown yet, so its figures are built in this step.
    for k in range(3, 3 + min(repeats, 6)):
        result.add(timed(page, lambda k=k: set_number(page, "k", k)))
    shown = fit_time_shown(page)
    page.context.close()
    result.baseline_s = _bare_slider_steps(browser, size, repeats)
    result.note = (f"bare slider one step, its heatmap redrawn: {_stats(result.baseline_s)} "
                   f"({size['rows']} × {size['columns']} heatmap, {size['height']} px); fit time shown at the last "
                   f"step: {shown} (the stored fit's own time: no fit ran)")
    return result


#: Page coordinates of each step of Tune & see's path scrubber's slider, with its label (Plotly draws a slider as
#: SVG: one label per step under the rail, in its label group (the current value above the rail is a label too,
#: outside it); a click on the rail above a step's label moves the slider there).
SCRUBBER_STEPS_JS = """
() => {
  const plot = document.querySelector('.st-key-fig_scrub_tune .js-plotly-plot');
  const rail = plot.querySelector('.slider-rail-rect').getBoundingClientRect();
  return [...plot.querySelectorAll('.slider-label-group .slider-label')].map((label) => {
    const box = label.getBoundingClientRect();
    return {x: box.left + box.width / 2, y: rail.top + rail.height / 2, label: label.textContent};
  });
}
"""
#: The scrubber's title: the metrics of the fit it shows.
_SCRUBBER_TITLE_JS = "() => document.querySelector('.st-key-fig_scrub_tune .js-plotly-plot .gtitle').textContent"


def _frames_scrubbed(browser, page, result: Result, repeats: int) -> Result:
    """The k path's scrubber clicked one step right at a time (k = 3, 4, ...: the path opens on k = 2, its first
    step), each step timed as any action."""
    page.locator(".st-key-fig_scrub_tune .slider-rail-rect").first.scroll_into_view_if_needed()
    settle(page, since_navigation=True)
    steps = page.evaluate(SCRUBBER_STEPS_JS)
    titles = []
    for step in steps[1:1 + min(repeats, len(steps) - 1)]:
        result.add(timed(page, lambda step=step: page.mouse.click(step["x"], step["y"])))
        titles.append(page.evaluate(_SCRUBBER_TITLE_JS))
        if f"k = {step['label']}:" not in titles[-1]:
            raise RuntimeError(f"the scrubber's step {step['label']} showed another fit: {titles[-1]!r}")
    size = page.evaluate(_CHART_SIZE_JS)
    page.context.close()
    result.baseline_s = _bare_slider_steps(browser, size, repeats)
    reruns = sum(1 for seconds in result.server_s if seconds is not None)
    result.note = (f"bare slider one step, its heatmap redrawn: {_stats(result.baseline_s)}; the app's page ran "
                   f"{reruns} times in {len(result.server_s)} steps; last title: {titles[-1]}")
    return result


_UPLOAD_SAME = "the same on a 10,000-row upload (12 numeric + 12 categorical columns)"
_UPLOAD_SCRUBBER = "the same on the scrubber of a 10,000-row upload (12 numeric + 12 categorical columns)"


def _scrub_action(key: str, text: str, path_page, scrubbed):
    """An action that opens a page with the k path drawn (``path_page``) and times its steps (``scrubbed``)."""
    def action(browser, server, repeats) -> Result:
        return scrubbed(browser, path_page(browser, server), Result(key, text, 0.10), repeats)

    return action


#: k along the path the Mask path tab fitted in the background: on the sidebar (a rerun drawing a stored fit the
#: first time) and on the scrubber's own slider (the browser drawing a frame), on Zoo and on an upload.
_scrub = _scrub_action(
    "scrub", "k one step along the precomputed path (Zoo, k = 2–8 fitted in the background by the Mask path tab): "
             "the mask heatmap, sizes and metrics of a stored fit, drawn the first time, against a bare Streamlit "
             "slider redrawing one heatmap of the same size", _zoo_path_page, _scrubbed)
_scrub_10k = _scrub_action("scrub10k", _UPLOAD_SAME, _upload_path_page, _scrubbed)
_scrub_frames = _scrub_action(
    "scrub_frames", "k one step on the mask path's own slider (Zoo, the k = 2–8 path of the Mask path tab): the "
                    "stored fit's masks, sizes and metrics drawn by the browser from the figure's frames, against a "
                    "bare Streamlit slider redrawing one heatmap", _zoo_path_page, _frames_scrubbed)
_scrub_frames_10k = _scrub_action("scrub_frames10k", _UPLOAD_SCRUBBER, _upload_path_page, _frames_scrubbed)


def _fresh_server(browser, server, repeats, command) -> Result:
    result = Result("fresh", "the first session after a fresh server start, to its first chart", 3.0)
    shown: list[str | None] = []
    ready: list[float] = []
    for _ in range(repeats):
        fresh = Server(command).start()
        assert fresh.ready_s is not None  # start() returns once the health check answers
        ready.append(fresh.ready_s)
        try:
            page = browser.page(fresh.url)
            result.add(open_page(page, "/clusters?view=Feature+masks", chart=True))
            shown.append(fit_time_shown(page))
            page.context.close()
        finally:
            fresh.stop()
    result.note = (f"server ready (health check) after {statistics.median(ready):.1f} s (median), not counted; "
                   + result.phase_note() + "; Fit time shown: " + ", ".join(str(s) for s in shown))
    return result


def _fresh_plain(browser, server, repeats, command) -> Result:
    result = _fresh_server(browser, server, repeats, PLAIN_COMMAND)
    result.key = "fresh_plain"
    result.action = "the same, started with plain `streamlit run app.py` (code loaded by the first session)"
    return result


def _upload_k26(browser, server, repeats) -> Result:
    result = Result("k26", "20,000-row upload (12 numeric + 12 categorical columns), k 3 → 26: a new fit", 3.0)
    fits = []
    for seed in range(repeats):
        # Each repeat its own table (another draw), so no fit of an earlier repeat is cached.
        name = f"mixed20k_{seed}.csv"
        page = browser.page(server.url)
        open_page(page, "/")
        page.get_by_text("Upload your own table").first.click()
        page.locator(".st-key-uploader input[type='file']").set_input_files(
            files=[{"name": name, "mimeType": "text/csv", "buffer": _upload_table(20_000, seed)}])
        settle_until(page, lambda name=name, page=page: page.locator("[data-testid='stSidebar']", has_text=name).count() > 0)
        if page.locator(".st-key-k input").input_value() != "3":
            timed(page, lambda page=page: set_number(page, "k", 3))
        result.add(timed(page, lambda page=page: set_number(page, "k", 26)))
        page.locator(NAV_LINKS, has_text="Tune & see").first.click()
        settle(page)
        fits.append(fit_time_shown(page))
        page.context.close()
    result.note = "Fit time shown: " + ", ".join(str(f) for f in fits)
    return result


def _during_fit(browser, server, repeats) -> Result:
    result = Result("during_fit", "another page during a long fit (100,000-row upload, 20 restarts): Tune & see "
                                  "waiting → the Data page drawn, its progress shown", 0.30)
    waiting = []
    for seed in range(repeats):
        # Each repeat its own table, so the fit is never cached; closing the page cancels its fit.
        page = browser.page(server.url)
        open_page(page, "/?n_init=20")
        page.get_by_text("Upload your own table").first.click()
        page.locator(".st-key-uploader input[type='file']").set_input_files(
            files=[{"name": f"noise_{seed}.csv", "mimeType": "text/csv", "buffer": noise_table(100_000, seed)}])
        page.wait_for_selector(".st-key-background_fit", timeout=ACTION_TIMEOUT_S * 1000)
        waiting.append(timed_until(page, lambda page=page: page.locator(
            NAV_LINKS, has_text="Tune & see").first.click(), ".st-key-fit_progress").browser_s)
        result.add(timed_until(page, lambda page=page: page.locator(
            NAV_LINKS, has_text="Data").first.click(),
            ".st-key-background_fit [data-testid='stProgress']"))
        page.context.close()
    result.note = ("timed to the progress being drawn (the page's run ends later: server column); the fit went on; "
                   "Tune & see showed its progress and Cancel button "
                   f"{_stats(waiting)} after its click")
    return result


def settle_until(page, condition) -> None:
    deadline = time.perf_counter() + ACTION_TIMEOUT_S
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the page never reached the expected state")
        page.wait_for_timeout(100)
    settle(page, since_navigation=True)


#: The pages in the sidebar's order after the Data page, by title (the wide action visits each, then Data again).
WIDE_PAGES = ("Tune & see", "Cluster cards", "Evaluate", "Teach", "Compare", "What-if", "Score new rows", "Export",
              "Data")


def _wide_pages(browser, server, repeats) -> Result:
    """Every page of a 4-row × 10,000-column upload, each opened from the sidebar; the slowest page is the verdict."""
    result = Result("wide", "every page of a 4-row × 10,000-column upload, opened from the sidebar one after "
                            "another: the slowest page of each pass", 10.0)
    pages: dict[str, list[float]] = {title: [] for title in WIDE_PAGES}
    for _ in range(max(1, repeats // 3)):  # a pass costs about a minute
        page = browser.page(server.url)
        open_page(page, "/")
        page.get_by_text("Upload your own table").first.click()
        page.locator(".st-key-uploader input[type='file']").set_input_files(
            files=[{"name": "wide.csv", "mimeType": "text/csv", "buffer": wide_table()}])
        settle_until(page, lambda page=page: page.locator("[data-testid='stSidebar']", has_text="wide.csv").count() > 0
                     and page.locator(".st-key-background_fit").count() == 0)
        for title in WIDE_PAGES:
            link = page.locator(NAV_LINKS, has_text=title).first
            timing = timed(page, link.click)
            pages[title].append(timing.browser_s)
            result.server_s.append(timing.server_s)
        page.context.close()
        result.browser_s.append(max(times[-1] for times in pages.values()))
    result.note = "; ".join(f"{title} {_stats(times)}" for title, times in pages.items())
    return result


def _upload_table(n_rows: int, seed: int) -> bytes:
    from craft.synthetic import mixed_planted

    X, _, _ = mixed_planted(n_rows, n_clusters=6, random_state=seed)
    buffer = io.StringIO()
    X.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


#: Targets of a slider's answers on Tune & see, as multiples of a bare Streamlit slider's step in the same run
#: (issue 35): the provisional picture of a new value, its refined picture, a value already fitted.
PROGRESSIVE_RATIOS = {"provisional": 2.0, "refined": 8.0, "cached": 2.0}
#: The provisional fit's line on Tune & see; the refined fit's, once no provisional line is left (explorer.context).
PROVISIONAL = ".st-key-fit_status_provisional"
REFINED = "body:not(:has(.st-key-fit_status_provisional)) .st-key-fit_status_refined"
#: When ``selector`` matches and the run that drew it has ended (the app idle: every figure of the run sent),
#: a frame later (the figures drawn): the time the page shows that answer. A status line alone comes first
#: in the run, before the figures are built.
_SHOWN_JS = """
([selector, idle]) => new Promise((resolve) => {
  const check = () => {
    if (document.querySelector(selector) && document.querySelector(idle)) {
      requestAnimationFrame(() => resolve(performance.now()));
    } else requestAnimationFrame(check);
  };
  check();
})
"""


def _shown_at(page, selector: str) -> float:
    """The page's clock when ``selector`` is shown with its run's figures (:data:`_SHOWN_JS`)."""
    return page.evaluate(_SHOWN_JS, [selector, APP_IDLE])


def _progressive(browser, server, repeats) -> list[Result]:
    """m one step on a 10,000-row upload: the provisional picture, the refined one, a step back to a fitted value.

    Each is timed from the key press (the slider's release) to the end of the run that shows the status line
    saying which fit is drawn, with its figures (:data:`_SHOWN_JS`), against the bare slider page's step (a heatmap of the mask's size) timed
    in the same run; the targets are multiples of its median.
    """
    upload = "the 10,000-row upload (12 numeric + 12 categorical columns), Tune & see, m one step"
    results = {
        "provisional": Result("progressive_provisional", f"{upload} to a value not fitted yet: the provisional "
                                                         "picture (a warm refit of the fit on screen)", 0.0),
        "refined": Result("progressive_refined", f"{upload} to a value not fitted yet: the refined picture (its "
                                                 "default fit, run in the background)", 0.0),
        "cached": Result("progressive_cached", f"{upload} back to a value fitted before: its refined picture", 0.0),
    }
    page = _upload_page(browser, server, "mixed10k_progressive.csv", _upload_table(10_000, 1))
    page.locator(NAV_LINKS, has_text="Tune & see").first.click()
    settle_until(page, lambda: page.locator(REFINED).count() > 0)
    size = page.evaluate(_CHART_SIZE_JS)
    for _ in range(repeats):
        since = _armed(page)
        slider_step(page, "m", "ArrowRight")
        provisional = _shown_at(page, PROVISIONAL)
        start = page.evaluate("() => window.__craftTimer.input")
        results["provisional"].add(Timing((provisional - start) / 1000, page.frames_seen.server_seconds(page, since)))
        results["refined"].add(Timing((_shown_at(page, REFINED) - start) / 1000, None))
        settle(page, since_navigation=True)
        # Back one step (fitted: refined at once), then forward again to the value just refined.
        results["cached"].add(timed(page, lambda: slider_step(page, "m", "ArrowLeft")))
        timed(page, lambda: slider_step(page, "m", "ArrowRight"))
    page.context.close()
    floor = _bare_slider_steps(browser, size, repeats)
    for key, result in results.items():
        result.baseline_s = floor
        result.ratio = PROGRESSIVE_RATIOS[key]
        result.target_s = PROGRESSIVE_RATIOS[key] * statistics.median(floor)
        ratio = statistics.median(result.browser_s) / statistics.median(floor)
        result.note = (f"bare slider's step {_stats(floor)} ({size['rows']} × {size['columns']} heatmap); ratio of "
                       f"the medians {ratio:.2f} (target ≤ {PROGRESSIVE_RATIOS[key]:g})")
    return list(results.values())


#: Where on the screen the CRAFT mask heatmap draws cell (feature, cluster label): its axes' own pixel mapping.
CELL_JS = """([feature, row]) => {
  const graph = document.querySelector('.st-key-fig_masks .js-plotly-plot');
  const index = graph._fullData.findIndex((d) => d.type === 'heatmap' && d.name === 'CRAFT');
  const trace = graph._fullData[index];
  const axis = (ref) => graph._fullLayout[ref.charAt(0) + 'axis' + ref.slice(1)];
  const xa = axis(trace.xaxis), ya = axis(trace.yaxis);
  const box = graph.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.d2p(feature), y: box.top + ya._offset + ya.d2p(row), feature, row};
}"""
_FIRST_CELL_JS = """() => {
  const graph = document.querySelector('.st-key-fig_masks .js-plotly-plot');
  const trace = graph.data.find((d) => d.type === 'heatmap' && d.name === 'CRAFT');
  return [String(trace.x[0]), String(trace.y[0])];
}"""


def _steer_50k(browser, server, repeats) -> list[Result]:
    """A pin (a click on a mask cell) and a link (two rows put together) on a 50,000-row upload: each timed from
    the click to the page quiet with the steered fit drawn (explorer.steering: one warm refit, shown as final)."""
    upload = "the 50,000-row upload (12 numeric + 12 categorical columns), Tune & see"
    pin = Result("steer_pin50k", f"{upload}: a click on a mask cell, to the steered masks drawn (pin cycled on, "
                                 "off, free)", TARGETS["steer50k"])
    link = Result("steer_link50k", f"{upload}: two picked rows put together, to the steered fit drawn",
                  TARGETS["steer50k"])
    page = _upload_page(browser, server, "mixed50k_steer.csv", _upload_table(50_000, 2))
    page.locator(NAV_LINKS, has_text="Tune & see").first.click()
    settle_until(page, lambda: page.locator(REFINED).count() > 0)
    settle(page, since_navigation=True)
    feature, row = page.evaluate(_FIRST_CELL_JS)
    for _ in range(repeats):
        for _ in range(3):  # on, off, free: back to the fit as it was
            point = page.evaluate(CELL_JS, [feature, row])
            pin.add(timed(page, lambda at=point: page.mouse.click(at["x"], at["y"])))
    rows = page.locator(".st-key-steer_row_input input")
    for repeat in range(repeats):
        for value in (str(repeat), str(49_999 - repeat)):
            rows.fill(value)
            rows.press("Enter")
            settle(page, since_navigation=True)
            page.locator(".st-key-steer_pick button").click()
            settle(page, since_navigation=True)
        link.add(timed(page, lambda: page.locator(".st-key-steer_must button").click()))
        timed(page, lambda: page.locator(".st-key-steer_undo button").click())
    page.context.close()
    return [pin, link]


def _upload_page(browser, server, name: str, content: bytes):
    """A new session with ``content`` uploaded as ``name`` on the Data page."""
    page = browser.page(server.url)
    open_page(page, "/")
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader input[type='file']").set_input_files(
        files=[{"name": name, "mimeType": "text/csv", "buffer": content}])
    settle_until(page, lambda: page.locator("[data-testid='stSidebar']", has_text=name).count() > 0)
    return page


#: Each action's target (seconds).
TARGETS = {"control": 0.15, "toggle": 0.15, "tab": 0.30, "cached": 0.30, "teach": 0.20, "fit10k": 1.0, "k26": 3.0,
           "during_fit": 0.30, "scrub": 0.10, "scrub10k": 0.10, "scrub_frames": 0.10, "scrub_frames10k": 0.10,
           "wide": 10.0, "session": 3.0, "first_view": 0.0, "fresh": 3.0, "fresh_plain": 3.0, "progressive": 0.0,
           "steer50k": 1.0}

#: Actions timed to a new session's first chart.
NEW_SESSIONS = ("session", "first_view", "fresh", "fresh_plain")

ACTIONS: dict[str, Callable[..., Result | list[Result]]] = {
    "control": _view_control,
    "toggle": _toggle,
    "tab": _tab_switch,
    "cached": _cached_value,
    "teach": _teach_step,
    "fit10k": _new_fit_10k,
    "k26": _upload_k26,
    "during_fit": _during_fit,
    "scrub": _scrub,
    "scrub10k": _scrub_10k,
    "scrub_frames": _scrub_frames,
    "scrub_frames10k": _scrub_frames_10k,
    "wide": _wide_pages,
    "session": _new_session,
    "first_view": _first_view,
    "fresh": _fresh_server,
    "fresh_plain": _fresh_plain,
    "progressive": _progressive,
    "steer50k": _steer_50k,
}


# ---------------------------------------------------------------------------
# Report


def _stats(values) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    median = statistics.median(values)
    return f"{median * 1000:,.0f} ms ({min(values) * 1000:,.0f}–{max(values) * 1000:,.0f})"


def _target(result: Result) -> str:
    if result.ratio is not None:
        return f"≤ {result.ratio:g} × the bare slider ({result.target_s * 1000:,.0f} ms)"
    if result.key != "first_view":
        return f"≤ {result.target_s * 1000:,.0f} ms"
    bare = f" ({result.target_s * 1000:,.0f} ms)" if result.baseline_s else ""
    return f"≤ {FIRST_VIEW_RATIO} × the bare page{bare}"


def provenance(info: dict) -> str:
    return (
        f"*Produced by `python -m benchmarks.bench_browser --write-results` on {time.strftime('%Y-%m-%d %H:%M')}, "
        f"commit {info['commit']}, on {info['cpu']}, {info['cores']} cores, shared with other work (load average "
        f"{info['load_average']} at the start).*"
    )


def markdown(results: list[Result], repeats: int) -> str:
    how = (
        "A real headless Chromium (Debian's, driven by Playwright) against the app's server, started as `make run` "
        "starts it (`python -m explorer.serve`: `streamlit run app.py` with the app's code loaded first). Each "
        "action is timed in the page from the input event (pointerdown / keydown, or the navigation's start for a "
        "new session) to the last change of the DOM before the app is idle and the DOM has stayed unchanged for "
        f"{QUIET_MS} ms. *Server* is the script's share: from the browser's rerun request to the server's "
        "`script_finished` message on the websocket, timed in the page; the rest is the browser's drawing. Median "
        f"(min–max) of {repeats} repetitions per action after a warm-up; 1-minute load average before and after "
        "each action (2 cores)."
    )
    lines = [
        how,
        "",
        "| action | browser, median (min–max) | server, median (min–max) | target | | load before → after | note |",
        "|---|---|---|---|---|---|---|",
    ]
    misses = []
    for r in results:
        if r.note.startswith("error"):
            lines.append(f"| {r.action} | — | — | {_target(r)} | not measured | | {r.note} |")
            continue
        measured = r.first_chart_s if r.key in NEW_SESSIONS and r.first_chart_s else r.browser_s
        median = statistics.median(measured)
        shown = _stats(measured)
        if r.key in NEW_SESSIONS:
            shown = f"first chart {shown}; settled {_stats(r.browser_s)}"
        lines.append(
            f"| {r.action} | {shown} | {_stats(r.server_s)} | {_target(r)} | "
            f"{'met' if median <= r.target_s else 'missed'} | {r.load[0]:.1f} → {r.load[1]:.1f} | {r.note} |"
        )
        if median > r.target_s:
            ran = [v for v in r.server_s if v is not None]
            split = (f"the server's share {statistics.median(ran) * 1000:,.0f} ms, the browser's the rest" if ran
                     else "the page did not run: all of it is the browser's")
            misses.append(
                f"- *{r.action}*: {median * 1000:,.0f} ms against {_target(r)}; {split}; 1-minute load "
                f"{max(r.load):.1f} on 2 cores."
            )
    if misses:
        lines += ["", "**Targets missed in this run, measured split:**", "", *misses]
    lines += ["", LONG_FITS]
    return "\n".join(lines)


#: What the app does while a fit takes long.
LONG_FITS = (
    "**Long fits.** Every fit runs in a background thread keyed by the fit's digest (`explorer/jobs.py`), shared by "
    "the sessions that ask for it. A page that needs the fit shows its progress (iterations, runs, seconds; λ search "
    "included) with a Cancel button once it has lasted 0.25 s (at once on a page opened while it runs); the Data "
    "page does not wait for it (its progress polls in a fragment, the action *another page during a long fit* "
    "above); changing a parameter releases the fit, and "
    "a fit nobody waits for any more, or whose sessions have all closed, stops at its next iteration and is not "
    "cached (`docs/architecture.md`, \"Fits run in the background\")."
)


def _section(path: Path) -> str | None:
    """The body of this benchmark's section in the results file, or None."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = re.search(rf"(?ms)^## {re.escape(TITLE)}\n(.*?)(?=^## |\Z)", text)
    return found.group(1).strip() if found else None


def merged_section(old: str | None, results: list[Result], info: dict, args) -> str:
    """The section with the rows of a run of some actions put in: each replaces its action's row, a new one
    comes after the table; the other rows, and the line that says which run made them, stay."""
    fresh = markdown(results, args.repeats)
    if old is None or "\n| action |" not in old:
        return provenance(info) + "\n\n" + fresh
    rows = [line for line in fresh.splitlines() if line.startswith("| ") and not line.startswith("| action |")]
    lines = old.splitlines()
    table = [i for i, line in enumerate(lines) if line.startswith("|")]
    for row in rows:
        cell = row.split(" | ")[0]
        same = [i for i in table if lines[i].split(" | ")[0] == cell]
        if same:
            lines[same[0]] = row
        else:
            lines.insert(table[-1] + 1, row)
            table.append(table[-1] + 1)
    command = f"python -m benchmarks.bench_browser --actions {' '.join(args.actions)} --repeats {args.repeats} --write-results"
    said = (f"*The row(s) of {', '.join(r.key for r in results)}: produced by `{command}` on "
            f"{time.strftime('%Y-%m-%d %H:%M')}, commit {info['commit']}, load average {info['load_average']} "
            "at the start; the other rows come from the run named above.*")
    misses = fresh.split("**Targets missed in this run, measured split:**")
    if len(misses) > 1:
        said += "\n\n**Targets missed in that run:**" + misses[1].split("\n\n**Long fits.**")[0].rstrip()
    end = table[-1] + 1
    lines = _without_run(lines, said.split(":")[0] + ":")  # an earlier run of these actions
    return "\n".join([*lines[:end], "", said, *lines[end:]]).strip()


def _without_run(lines: list[str], prefix: str) -> list[str]:
    """``lines`` without the block of an earlier partial run: its line starting with ``prefix`` and its misses."""
    kept: list[str] = []
    dropping = False
    for line in lines:
        if line.startswith(prefix):
            dropping = True
            continue
        if dropping and (not line.strip() or line == "**Targets missed in that run:**" or line.startswith("- *")):
            continue
        dropping = False
        kept.append(line)
    return kept


def run(keys, repeats: int, serve_command: list[str] | None) -> list[Result]:
    browser = Browser()
    server = Server(serve_command).start()
    results = []
    try:
        # Warm the server as a visitor would have: the default example fitted, the kernels loaded.
        warm = browser.page(server.url)
        open_page(warm, "/clusters")
        warm.context.close()
        for key in keys:
            load_before = os.getloadavg()[0]
            try:
                if key in ("fresh", "fresh_plain"):
                    result = ACTIONS[key](browser, server, repeats, serve_command)
                else:
                    result = ACTIONS[key](browser, server, repeats)
            except Exception as error:  # noqa: BLE001 - one failed action is reported, the others still run
                message = " ".join(str(error).split())[:200]
                result = Result(key, key, TARGETS[key], note=f"error: {type(error).__name__}: {message}")
            for one in result if isinstance(result, list) else [result]:  # an action may time several answers
                one.load = (load_before, os.getloadavg()[0])
                results.append(one)
                print(f"  {one.key}: browser {_stats(one.browser_s)}, server {_stats(one.server_s)} {one.note}",
                      flush=True)
    finally:
        server.stop()
        browser.close()
    return results


def run_suite(repeats: int = 5) -> dict:
    """Every action, for ``benchmarks.run_all`` (``make bench``): raw numbers and the section's body."""
    results = run(list(ACTIONS), repeats, None)
    return {"results": [r.__dict__ for r in results], "markdown": markdown(results, repeats)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", nargs="*", choices=list(ACTIONS), default=list(ACTIONS))
    parser.add_argument("--repeats", type=int, default=5, help="measurements per action (5 or more for the results)")
    parser.add_argument("--serve", nargs="*", default=None,
                        help="command that starts the server (default: python -m explorer.serve, as make run)")
    parser.add_argument("--write-results", action="store_true", help="replace the section in docs/RESULTS.md")
    parser.add_argument("--results", type=Path, default=None, help="the file --write-results updates")
    parser.add_argument("--json", type=Path, default=OUT / "bench_browser.json")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import RESULTS, machine, write_sections

    info = machine()
    results = run(args.actions, args.repeats, args.serve)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": info, "results": [r.__dict__ for r in results]}, indent=1, default=str))
    text = provenance(info) + "\n\n" + markdown(results, args.repeats)
    print(text)
    if args.write_results:
        path = args.results or RESULTS
        if set(args.actions) != set(ACTIONS):
            text = merged_section(_section(path), results, info, args)
        write_sections({TITLE: text}, path)
    return 0 if not any(r.note.startswith("error") for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
