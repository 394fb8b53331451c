"""Screens that must not mislead (issue 30, items 8-15): AppTest.

The same points in a real browser are in ``tests/browser/test_screens.py``.
"""

from __future__ import annotations

import pytest
from test_app import clear_caches, pytestmark, visit
from test_app_lecture import open_app

__all__ = ["clear_caches", "pytestmark"]  # the autouse cache fixture and the warning filters of test_app


# ---------------------------------------------------------------------------
# Export's share link (item 11)


@pytest.mark.parametrize(("page", "title"), [("cards", "Cluster cards"), ("data", "Data"), ("score", "Score new rows")])
def test_export_share_link_opens_the_page_you_came_from(page, title):
    at = open_app(dataset="fig2_numeric", syn_n="90", n_init="1")
    visit(at, page)
    visit(at, "export")
    picker = at.selectbox(key="share_page")
    assert picker.value == page
    assert title in picker.options
    link = at.code[-1].value
    assert f"/{page}?" in link or link.startswith("?")


def test_export_share_link_offers_every_page():
    at = open_app(dataset="fig2_numeric", syn_n="90", n_init="1")
    visit(at, "export")
    assert at.selectbox(key="share_page").options == [
        "Data", "Tune & see", "Cluster cards", "Evaluate", "Teach", "Compare", "What-if", "Score new rows", "Export"]
