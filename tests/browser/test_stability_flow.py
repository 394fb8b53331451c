"""Stability in a real browser: on an uploaded 10,000-row table, the Evaluate page runs 20 bootstrap
refits in the background, another page is usable while they run, and the result is drawn on return.

The table is ``craft.synthetic.mixed_planted`` (four planted clusters; the upload's k is the app's
suggestion, 3, so two of them share a cluster), and every cluster must come out stable. With ten
restarts per refit the run takes tens of seconds on a loaded 2-core machine, long enough that the
visit to the Data page happens while it runs (the progress is still there on return).
"""

from __future__ import annotations

import re

import pytest
from test_flows import RUN_TIMEOUT_MS, assert_clean, go_to, open_app, wait_idle

from craft import synthetic

pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

PROGRESS = ".st-key-evidence_stability_progress [data-testid='stProgress']"


def planted_csv(n_rows: int) -> bytes:
    X, _ = synthetic.mixed_planted(n_samples=n_rows, random_state=0)[:2]
    return X.round(3).to_csv(index=False).encode()


def test_stability_runs_in_the_background_on_an_upload(page):
    open_app(page, "/?n_init=10")
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader input[type=file]").set_input_files(
        files=[{"name": "planted.csv", "mimeType": "text/csv", "buffer": planted_csv(10_000)}])
    page.wait_for_function("() => document.body.innerText.includes('10,000 rows × 24 columns')",
                           timeout=RUN_TIMEOUT_MS)
    go_to(page, "Evaluate")
    page.wait_for_selector("text=How much to trust this partition", timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    page.locator(".st-key-run_evidence_stability button").first.click()
    page.wait_for_selector(PROGRESS, timeout=RUN_TIMEOUT_MS)
    assert "in the background" in page.locator(PROGRESS).inner_text()
    assert_clean(page)
    # Another page is drawn and answers while the refits go on.
    go_to(page, "Data")
    page.wait_for_function("() => document.body.innerText.includes('10,000 rows × 24 columns')",
                           timeout=RUN_TIMEOUT_MS)
    page.get_by_text("Upload your own table").first.click()
    assert_clean(page)
    # Back on Evaluate: the same job, still running (its progress), never a new start.
    go_to(page, "Evaluate")
    page.wait_for_selector(PROGRESS, timeout=RUN_TIMEOUT_MS)
    assert page.locator(".st-key-run_evidence_stability").count() == 0
    page.wait_for_function("() => document.body.innerText.includes('20 bootstrap refits')", timeout=300_000)
    summary = page.locator("[data-testid='stMarkdownContainer']", has_text="20 bootstrap refits").first.inner_text()
    found = re.search(r"(\d+) of (\d+) clusters are stable", summary)
    assert found and found.group(1) == found.group(2), summary
    # The summary is sent before the figures: on a busy machine they arrive a moment later.
    for key in ("trust_jaccard", "trust_frequency"):
        page.wait_for_selector(f".st-key-{key} .js-plotly-plot", timeout=RUN_TIMEOUT_MS)
        assert page.locator(f".st-key-{key} .js-plotly-plot").count() == 1
    assert page.locator(".st-key-run_evidence_stability").count() == 0
    assert_clean(page)
