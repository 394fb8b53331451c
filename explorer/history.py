"""The browser's history: the app writes no entry that Back could not show again.

A widget bound to the URL (``bind="query-params"``) that the user moves
rewrites the current entry (Streamlit's ``replaceState``); a value the app
sets in code, such as a dataset's presets applied by the dataset picker,
reaches the URL through the server, which adds an entry (``pushState``) for
each parameter written. Those entries hold half-written states: after five
changes, Back showed ``?dataset=zoo&k=4&m=0.5``, a view never displayed (Zoo
opens at k = 7), a second Back Zoo at the previous dataset's m, and a third
left the app.

So a change of the query alone rewrites the current entry, whoever made it;
only a change of page adds one (Streamlit's page navigation), and the entry
left keeps the address of the last view shown on it (Streamlit empties it
while switching pages). Back then
opens the page looked at before, with the parameters it was last shown
with: every parameter is in the URL (those at their defaults left out), and
on Back Streamlit sets each bound widget from it (a missing one to its
default), which is the view that was on screen (:func:`explorer.state.init_session`
reads the label and roles again).

The rule runs in the page (a ``st.components.v2`` component, no iframe,
mounted once in the sidebar of every run) and patches ``history.pushState``
of the app's window once.
"""

from __future__ import annotations

import functools

import streamlit as st

_JS = """
export default function () {
  if (window.__craftHistory) return;
  window.__craftHistory = true;
  const push = window.history.pushState.bind(window.history);
  const replace = window.history.replaceState.bind(window.history);
  // The address of the last view shown: taken each time a run ends.
  let shown = window.location.href;
  const app = document.querySelector("[data-testid='stApp']");
  const note = () => {
    if (app && app.getAttribute("data-test-script-state") === "notRunning") shown = window.location.href;
  };
  if (app) new MutationObserver(note).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  note();
  window.addEventListener("popstate", () => { shown = window.location.href; });
  window.history.pushState = function (state, title, url) {
    const next = url === undefined || url === null ? null : new URL(String(url), window.location.href);
    // Same page, another query: rewrite the entry (an entry per page, each one a view that was shown).
    if (next !== null && next.pathname === window.location.pathname) return replace(state, title, url);
    // Another page: the entry left keeps the view that was on screen. Streamlit empties its query first (the
    // sidebar's parameters count as bound to the page being left), which Back would have opened.
    const last = new URL(shown);
    if (last.pathname === window.location.pathname) replace(window.history.state, "", last.href);
    return push(state, title, url);
  };
}
"""


@functools.cache
def _component():
    return st.components.v2.component("craft_history", js=_JS, isolate_styles=False)


def keep_entries_restorable() -> None:
    """Install the rule in the page (once per page load; a no-op in later runs' browsers)."""
    with st.sidebar:
        _component()(key="craft_history")
