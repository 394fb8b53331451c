"""A cluster card in a real browser: upload a table, open its cards, switch cluster, run its stability.

``CRAFT_SCREENSHOTS=1`` writes ``docs/screenshots/card.png`` at 1280 × 720 (the README's card).
"""

from __future__ import annotations

import pytest
from test_flows import (RUN_TIMEOUT_MS, assert_charts_laid_out, assert_clean, captions, go_to, mixed_csv, open_app, screenshot, selected,
                        upload, wait_idle)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

RULE = "[data-testid='stMarkdownContainer'] strong"
#: The drawn title of every figure on the page.
FIGURE_TITLES = "() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle')).map((t) => t.textContent)"


def choose(page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox ``key`` as a user does."""
    page.locator(f".st-key-{key} button[aria-label='Open']").click()
    page.locator("[role='option']", has_text=option).first.click()
    wait_idle(page)


def card_state(page) -> dict:
    """What the card shows: its summary line, its rule, its figure titles and how many tables."""
    main = page.locator("[data-testid='stMain']")
    return {
        "summary": next(t for t in main.locator("[data-testid='stMarkdownContainer'] p").all_inner_texts()
                        if t.startswith("Cluster ") and " holds " in t),
        "rule": main.locator(RULE).first.inner_text(),
        "figures": page.evaluate(FIGURE_TITLES),
        "tables": main.locator("[data-testid='stDataFrame']").count(),
    }


def test_upload_a_table_open_its_cluster_cards_and_run_stability_from_a_card(page):
    open_app(page)
    upload(page, "people.csv", mixed_csv())
    go_to(page, "Cluster cards")
    page.wait_for_selector(".st-key-card_numeric .js-plotly-plot")
    assert_clean(page)
    first = card_state(page)
    assert selected(page, "card_cluster").startswith("cluster 0 (")
    assert first["summary"].startswith("Cluster 0 holds ") and "of 60 rows" in first["summary"]
    assert first["rule"]  # the rule, in bold
    assert first["figures"][0] == "Cluster 0: numeric features against all rows"
    assert first["tables"] == 4  # numeric evidence, levels, paragons, border rows
    assert any("Benjamini–Hochberg" in c for c in captions(page)), captions(page)
    assert any("lowest CRAFT cost" in c for c in captions(page))

    choose(page, "card_cluster", "cluster 1")
    page.wait_for_function(f"() => ({FIGURE_TITLES})().some((title) => title.startsWith('Cluster 1:'))")
    second = card_state(page)
    assert second["summary"].startswith("Cluster 1 holds ")
    assert second["figures"][0] == "Cluster 1: numeric features against all rows"
    assert_clean(page)
    assert_charts_laid_out(page)  # the chart changed height with the cluster: the page moved with it

    screenshot(page, "card", focus=".st-key-card_cluster")  # the picker on top, the card below it

    # Stability from the card: the background refits, then this cluster's part of their result.
    page.locator(".st-key-run_evidence_stability button").first.click()
    page.wait_for_selector("[data-testid='stMetricValue']", timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    assert 0 <= float(page.locator("[data-testid='stMetricValue']").first.inner_text()) <= 1
    sentence = page.locator("[data-testid='stMarkdownContainer'] p", has_text="refits its best match").first.inner_text()
    assert sentence.startswith("Cluster 1: over 20 bootstrap refits"), sentence
    assert card_state(page)["tables"] == 5  # and how often each feature stays selected
    assert page.locator(".st-key-run_evidence_stability").count() == 0
    assert_clean(page)
