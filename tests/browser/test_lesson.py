"""Teach's lesson in a real headless Chromium: predict then reveal, steps back and forth, lecture mode's link.

``CRAFT_SCREENSHOTS=1`` writes ``docs/screenshots/lesson.png`` at 1280 × 720 (the README's "Teaching with it").
"""

from __future__ import annotations

import pytest
from test_flows import RUN_TIMEOUT_MS, screenshot, wait_idle

from benchmarks.bench_browser import NAV_LINKS
from craft.lectures import LECTURES
from explorer.lecture import LECTURE_CHART_FONT_PX, LECTURE_TEXT_PX

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PROJECTOR = {"width": 1920, "height": 1080}


def open_teach(page, query: str) -> None:
    page.goto(f"/teach?n_init=1&{query}")
    page.wait_for_selector(NAV_LINKS, timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    page.wait_for_selector("text=Step through the", timeout=RUN_TIMEOUT_MS)


def click(page, label: str) -> None:
    page.get_by_role("button", name=label, exact=True).click()
    wait_idle(page)


def test_student_predicts_then_sees_the_answer_and_why(page):
    open_teach(page, "lesson=noise_features")
    model = LECTURES["noise_features"].fit(0, history_labels=True)[0]
    truth = model.history_[0].n_clusters
    box = page.get_by_label("How many clusters will there be after pass 1?")
    box.fill(str(truth))
    box.press("Enter")
    wait_idle(page)
    click(page, "Reveal")
    answer = page.locator("[data-testid='stAlertContentSuccess']").first
    answer.wait_for(timeout=RUN_TIMEOUT_MS)
    shown = answer.inner_text()
    assert "Right." in shown and f"Answer: {truth}" in shown
    assert "λ + D F₀" in shown and "opened" in shown  # the reason: the pass's n_opened against the threshold
    assert page.get_by_text("After pass 1 of").is_visible()  # revealed: the pass is drawn
    assert page.get_by_text("Score: 1 of 2 right.").is_visible()  # the count right, the features left blank
    screenshot(page, "lesson", focus="[data-testid='stHeading']:has-text('Step through the')")


def test_step_forward_and_back_with_buttons_and_keys(page):
    open_teach(page, "lesson=lambda&ask=0&lecture=1")
    page.get_by_text("After pass 1 of").wait_for()
    click(page, "Next ▶")
    page.get_by_text("After pass 2 of").wait_for()
    click(page, "◀ Previous")
    page.get_by_text("After pass 1 of").wait_for()
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # keys go to the page
    page.keyboard.press("ArrowRight")  # lecture mode's keys click the same buttons
    wait_idle(page)
    page.get_by_text("After pass 2 of").wait_for()
    page.keyboard.press("ArrowLeft")
    wait_idle(page)
    page.get_by_text("After pass 1 of").wait_for()


_SIZES_JS = """
() => {
  const px = (el) => parseFloat(getComputedStyle(el).fontSize);
  const main = document.querySelector("[data-testid='stMain']");
  const texts = Array.from(main.querySelectorAll("[data-testid='stMarkdownContainer'] p, label p, button p"))
    .filter((el) => el.textContent.trim() && el.getBoundingClientRect().width > 0);
  const ticks = Array.from(document.querySelectorAll(".st-key-lesson_truth .js-plotly-plot g.xtick text, "
                                                     + ".st-key-lesson_truth .js-plotly-plot g.ytick text"));
  const sidebar = document.querySelector("[data-testid='stSidebar']");
  return {texts: texts.map((el) => [el.textContent.slice(0, 40), px(el)]), ticks: ticks.map(px),
          sidebar: sidebar ? sidebar.getBoundingClientRect().width : 0};
}
"""


def test_lecture_link_hides_the_chosen_controls_and_is_readable_at_1920x1080(browser, app_server):
    context = browser.new_context(viewport=PROJECTOR, base_url=app_server.url)
    context.set_default_timeout(RUN_TIMEOUT_MS)
    page = context.new_page()
    try:
        open_teach(page, "lesson=rho&lecture=1&hide=sidebar,lecturer")
        page.wait_for_selector(".st-key-lesson_truth .js-plotly-plot g.xtick text", state="attached")
        sizes = page.evaluate(_SIZES_JS)
        assert sizes["sidebar"] == 0  # hidden for the audience
        assert page.get_by_text("Lesson and lecturer settings").count() == 0
        small = [(text, size) for text, size in sizes["texts"] if size < LECTURE_TEXT_PX]
        assert sizes["texts"] and not small, small
        assert sizes["ticks"] and min(sizes["ticks"]) >= LECTURE_CHART_FONT_PX - 0.5, sizes["ticks"]
        # The audience's link keeps lecture mode and what is hidden.
        assert "lecture=1" in page.url and "hide=sidebar%2Clecturer" in page.url.replace(",", "%2C")
    finally:
        context.close()
