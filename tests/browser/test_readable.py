"""Every figure readable in a 1280 x 720 window, measured on the drawn SVG, not by eye.

For each figure the tick labels, axis titles and the title Plotly actually
drew are read back from the page (their boxes on screen); no two labels of
an axis may overlap and no label may stick out of its figure. Feature names
that do not fit are thinned by the browser, so every name is also checked to
be one of the figure's categories (each is in the cells' hover text). The
tables: Spambase (57 features), Soybean and Zoo (clusters of a few rows),
Soybean's missing cells, and an uploaded 60-column table of long names.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_flows import go_to, upload, wait_idle
from test_presentation import open_view, room  # noqa: F401 - the 1280 x 720 page fixture

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

#: Pixels two boxes may share (anti-aliasing) before they count as overlapping.
SLACK = 1.0

#: Boxes of the texts of a chart (by its Streamlit key), relative to the chart's own box.
DRAWN_TEXT_JS = """
(key) => {
  const root = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!root) return null;
  const frame = root.getBoundingClientRect();
  const boxes = (selector) => Array.from(root.querySelectorAll(selector))
    .filter((t) => t.textContent.trim() && getComputedStyle(t).display !== 'none'
                   && t.getBoundingClientRect().width > 0)
    .map((t) => {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, left: r.left - frame.left, right: r.right - frame.left,
              top: r.top - frame.top, bottom: r.bottom - frame.top};
    });
  const axes = {};  // tick labels per axis: x, x2, y, y2...
  const names = new Set(Array.from(root.querySelectorAll('g.xaxislayer-above > g, g.yaxislayer-above > g'))
    .map((g) => (g.getAttribute('class') || '').split(' ')[0].replace(/tick$/, '')));
  for (const name of names) axes[name] = boxes(`g.${name}tick > text`);
  const categories = root.data.flatMap((trace) => (trace.type === 'heatmap' ? Array.from(trace.x || []) : []));
  return {width: frame.width, height: frame.height, axes,
          titles: boxes('.g-gtitle text, [class^="g-x"][class$="title"] text, .annotation-text'),
          categories: Array.from(new Set(categories))};
}
"""


def drawn(page, key: str) -> dict:
    page.wait_for_selector(f".st-key-{key} .js-plotly-plot g.xtick text", state="attached")
    page.wait_for_timeout(300)  # Plotly settles its automatic tick angles
    return page.evaluate(DRAWN_TEXT_JS, key)


def overlaps(boxes) -> list[tuple[str, str]]:
    """Pairs of boxes that share more than SLACK pixels in both directions."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            wide = min(a["right"], b["right"]) - max(a["left"], b["left"])
            high = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if wide > SLACK and high > SLACK:
                found.append((a["text"], b["text"]))
    return found


def outside(figure, boxes) -> list[str]:
    return [b["text"] for b in boxes if b["left"] < -SLACK or b["top"] < -SLACK
            or b["right"] > figure["width"] + SLACK or b["bottom"] > figure["height"] + SLACK]


def assert_readable(page, key: str, features=None) -> dict:
    """No two labels of an axis touch, no title touches another, nothing leaves the figure."""
    figure = drawn(page, key)
    assert figure is not None, key
    for axis, boxes in figure["axes"].items():
        assert not overlaps(boxes), (key, axis, overlaps(boxes)[:5])
        assert not outside(figure, boxes), (key, axis, outside(figure, boxes)[:5])
    assert not overlaps(figure["titles"]), (key, overlaps(figure["titles"]))
    assert not outside(figure, figure["titles"]), (key, outside(figure, figure["titles"]))
    if features is not None:
        assert set(features) <= set(figure["categories"]), (key, sorted(set(features) - set(figure["categories"]))[:5])
    return figure


def long_names_csv(n_features: int = 60, n_rows: int = 240) -> tuple[bytes, list[str]]:
    """Three groups of rows over 60 numeric columns with long names (a survey export)."""
    stems = ["tenure_months", "monthly_spend", "support_calls", "days_since_last_login", "avg_basket_value"]
    names = [f"{stems[j % len(stems)]}_{j // len(stems) + 1:02d}" for j in range(n_features)]
    rng = np.random.default_rng(0)
    group = np.arange(n_rows) % 3
    values = rng.normal(size=(n_rows, n_features)) + 4.0 * (group[:, None] == (np.arange(n_features) % 3))
    return pd.DataFrame(values.round(3), columns=names).to_csv(index=False).encode(), names


def test_spambase_masks_and_heatmap_name_57_features_without_overlap(room):  # noqa: F811
    from craft import datasets

    features = [str(c) for c in datasets.load("spambase")[0].columns]
    open_view(room, "/clusters?dataset=spambase")
    assert_readable(room, "fig_masks", features)
    room.get_by_role("tab", name="Data heatmap").click()
    wait_idle(room)
    assert_readable(room, "fig_heatmap", features)


@pytest.mark.parametrize("dataset", ["soybean", "zoo"])
def test_small_clusters_keep_their_labels_apart(room, dataset):  # noqa: F811
    open_view(room, f"/clusters?dataset={dataset}&view=Data+heatmap")
    figure = assert_readable(room, "fig_heatmap")
    assert any(len(boxes) for name, boxes in figure["axes"].items() if name.startswith("y"))


def test_missing_cells_have_their_own_legend_entry(room):  # noqa: F811
    open_view(room, "/clusters?dataset=soybean&view=Data+heatmap")
    drawn(room, "fig_heatmap")
    legend = room.locator(".st-key-fig_heatmap g.legend text.legendtext").evaluate_all(
        "(texts) => texts.map((t) => t.textContent)")
    assert "missing value" in legend, legend


def test_sixty_long_names_are_readable_on_every_figure(room):  # noqa: F811
    data, names = long_names_csv()
    open_view(room, "/")
    upload(room, "survey_export.csv", data)
    go_to(room, "Tune & see")
    assert_readable(room, "fig_masks", names)
    for tab, key in (("Data heatmap", "fig_heatmap"), ("Sizes & profiles", "fig_profile")):
        room.get_by_role("tab", name=tab).click()
        wait_idle(room)
        room.locator(f".st-key-{key}").scroll_into_view_if_needed()
        assert_readable(room, key, names if key == "fig_heatmap" else None)
    go_to(room, "Teach")
    assert_readable(room, "teach_masks", names)
    for mode in ("paper", "shrink"):
        room.wait_for_selector(f".st-key-rho_demo_{mode} .js-plotly-plot", timeout=180_000)
        room.locator(f".st-key-rho_demo_{mode}").scroll_into_view_if_needed()
        figure = assert_readable(room, f"rho_demo_{mode}", names)
        assert sum(len(boxes) for name, boxes in figure["axes"].items() if name.startswith("x")) > 0


def test_teach_titles_fit_their_column(room):  # noqa: F811
    open_view(room, "/teach?dataset=fig2_numeric&n_init_auto=false&n_init=1")
    figure = assert_readable(room, "teach_projection")
    assert any("changed cluster" in t["text"] for t in figure["titles"]), figure["titles"]


def test_profile_axis_titles_of_a_mixed_table_stay_apart(room):  # noqa: F811
    open_view(room, "/clusters?dataset=credit-g&view=Sizes+%26+profiles")
    room.locator(".st-key-fig_profile").scroll_into_view_if_needed()
    figure = assert_readable(room, "fig_profile")
    assert sum(1 for t in figure["titles"] if "selected:" in t["text"]) == 2, figure["titles"]


def test_the_share_link_wraps_inside_the_window(room):  # noqa: F811
    open_view(room, "/clusters?dataset=wine&m=0.37&rho_auto=false&rho_share=0.437&rho_selection=shrink&seed=12345"
                    "&n_init_auto=false&n_init=3&max_iter=77&budget=approximate&eps_v=0.357&eps_c=0.153"
                    "&view=Sizes+%26+profiles")
    go_to(room, "Export")
    code = room.locator("[data-testid='stCode']").last
    code.scroll_into_view_if_needed()
    link = code.locator("code").inner_text()
    assert len(link) > 100, link  # more characters than a line of the column holds at 1280 x 720
    # the link's own text box, against the box that shows it and the window
    text, shown = code.evaluate("(el) => [el.querySelector('code'), el.querySelector('pre')]"
                                ".map((e) => e.getBoundingClientRect().right)")
    assert text <= shown + SLACK and shown <= room.viewport_size["width"], (text, shown)
