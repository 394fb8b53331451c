"""A long fit in a real browser: the Data page stays usable while it runs, a page that needs it shows
its progress (the same fit, not a new one), and its Cancel button stops it.

The table is 100,000 rows of noise with k = 3 and 20 restarts: a fit of tens of seconds on a
2-core machine (about 8 s for 40,000 rows here), long enough that every step below happens
while it runs. Closing the session at the end leaves no fit running for nobody (the server
cancels a fit whose sessions have all gone).
"""

from __future__ import annotations

import re

import pytest
from test_flows import CHART, RUN_TIMEOUT_MS, alerts, assert_clean, open_app, wait_idle

from benchmarks.bench_browser import NAV_LINKS, noise_table

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PROGRESS = ".st-key-background_fit [data-testid='stProgress']"
WAITING = ".st-key-fit_progress"


def iterations(text: str) -> int:
    return int(re.search(r"([\d,]+) iterations", text).group(1).replace(",", ""))


def seconds(text: str) -> int:
    return int(re.search(r", (\d+) s", text).group(1))


def nav(page, title: str) -> None:
    page.locator(NAV_LINKS, has_text=title).first.click()
    page.wait_for_selector(f"[data-testid='stHeading']:has-text('{title.split()[0]}')", timeout=RUN_TIMEOUT_MS)


def test_a_long_fit_leaves_the_app_usable_and_can_be_cancelled(page):
    open_app(page, "/?n_init=20")
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader input[type=file]").set_input_files(
        files=[{"name": "noise.csv", "mimeType": "text/csv", "buffer": noise_table(100_000, 0)}])
    # The Data page is drawn with the new table while the fit runs behind it.
    page.wait_for_selector(PROGRESS, timeout=RUN_TIMEOUT_MS)
    assert "Fitting CRAFT in the background" in page.locator(PROGRESS).inner_text()
    page.wait_for_function("() => document.body.innerText.includes('100,000 rows × 16 columns')",
                           timeout=RUN_TIMEOUT_MS)
    assert_clean(page)
    # Its progress moves (the polling fragment) for 2 s, and the page's own controls answer meanwhile.
    first = iterations(page.locator(PROGRESS).inner_text())
    page.wait_for_function(
        f"() => {{ const el = document.querySelector(\"{PROGRESS}\"); if (!el) return false; "
        "const seconds = Number((el.innerText.match(/, (\\d+) s/) || ['', '0'])[1]); "
        "return seconds >= 2; }", timeout=RUN_TIMEOUT_MS)
    page.get_by_text("Upload your own table").first.click()  # closes the expander: a control of the page
    before = page.locator(PROGRESS).inner_text()
    assert iterations(before) > first
    # A page that needs the fit waits for the same one: its count and its time go on from where they were
    # (a new fit would start again from 0 s).
    nav(page, "Tune & see")
    page.wait_for_selector(WAITING, timeout=RUN_TIMEOUT_MS)
    waiting = page.locator(WAITING).inner_text()
    assert iterations(waiting) >= iterations(before) and seconds(waiting) >= 2, (before, waiting)
    assert page.locator(CHART).count() == 0
    # Cancel: the page says so, with the count the fit reached, and offers to fit again.
    page.get_by_role("button", name="Cancel the fit").click()
    page.wait_for_function(
        "() => document.body.innerText.includes('you cancelled this fit after')", timeout=RUN_TIMEOUT_MS)
    cancelled = next(text for text in alerts(page, "info") if "you cancelled this fit" in text)
    assert iterations(cancelled) >= iterations(waiting)
    page.locator(".st-key-fit_again button").wait_for(state="visible")
    assert page.locator(WAITING).count() == 0 and page.locator(CHART).count() == 0
    assert_clean(page)
    # The Data page says the same, without a fit starting behind it.
    nav(page, "Data")
    page.wait_for_function(
        "() => document.body.innerText.includes('you cancelled this fit after')", timeout=RUN_TIMEOUT_MS)
    assert page.locator(PROGRESS).count() == 0
    assert_clean(page)


def test_the_cancel_button_goes_with_the_bar_when_the_fit_ends(page):
    # A fit of several seconds (about 6 s here at k = 3): long enough to be waited for on Tune & see,
    # short enough to end there. Its size follows the engine's speed: 30,000 rows and 2 restarts ended
    # before the bar was drawn once the pass got faster.
    open_app(page, "/?n_init=20")
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader input[type=file]").set_input_files(
        files=[{"name": "noise.csv", "mimeType": "text/csv", "buffer": noise_table(100_000, 1)}])
    page.wait_for_selector(PROGRESS, timeout=RUN_TIMEOUT_MS)
    nav(page, "Tune & see")
    page.wait_for_selector(WAITING, timeout=RUN_TIMEOUT_MS)
    # The button is sent after the bar's container: waited for, not counted at once.
    page.get_by_role("button", name="Cancel the fit").wait_for(timeout=RUN_TIMEOUT_MS)
    assert page.get_by_role("button", name="Cancel the fit").count() == 1
    # The fit ends on this page: its figures replace the bar, and the Cancel button goes with the bar
    # (left there, a click would throw the finished fit away).
    page.wait_for_selector(CHART, timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    assert page.locator(WAITING).count() == 0
    assert page.get_by_role("button", name="Cancel the fit").count() == 0
    assert not any("you cancelled this fit" in text for text in alerts(page, "info"))
    assert_clean(page)
