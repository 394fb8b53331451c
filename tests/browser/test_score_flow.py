"""Score new rows in a real browser: fit an uploaded table, upload a second one on the Score page, see its margins."""

from __future__ import annotations

import pytest
from test_flows import RUN_TIMEOUT_MS, alerts, assert_clean, go_to, mixed_csv, open_app, upload, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

#: The margin histogram's traces as drawn: names, rows per trace and the bars' painted rectangles.
_MARGINS_JS = """
() => {
  const graph = document.querySelector('.st-key-score_margins .js-plotly-plot');
  if (!graph || !graph.data) return null;
  const rows = (y) => Array.from(y && y._inputArray ? y._inputArray : y).reduce((a, b) => a + b, 0);
  return {
    names: graph.data.map((d) => d.name),
    rows: graph.data.map((d) => rows(d.y)),
    painted: graph.querySelectorAll('g.trace.bars path').length,
    title: (graph.querySelector('.gtitle') || {}).textContent,
  };
}
"""


def test_a_second_table_uploaded_on_the_score_page_draws_its_margin_histogram(page):
    open_app(page)
    upload(page, "people.csv", mixed_csv())
    go_to(page, "Score new rows")
    page.locator(".st-key-score_uploader input[type=file]").set_input_files(
        files=[{"name": "more_people.csv", "mimeType": "text/csv", "buffer": mixed_csv(24)}])
    wait_idle(page)
    page.wait_for_function(f"({_MARGINS_JS})()?.painted > 0", timeout=RUN_TIMEOUT_MS)
    drawn = page.evaluate(_MARGINS_JS)
    assert drawn is not None and sum(drawn["rows"]) == 24, drawn
    assert drawn["painted"] > 0 and drawn["title"].startswith("How sure each assignment is"), drawn
    assert all(name.startswith("cluster ") for name in drawn["names"]), drawn
    assert not alerts(page, "error"), alerts(page, "error")
    assert_clean(page)
