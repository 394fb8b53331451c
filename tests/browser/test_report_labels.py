"""The HTML report in Chromium: on a wide table every feature and cluster name is drawn, unclipped.

The report of a 900-row table with 42 long feature names and k = 9 (the
shape of a survey whose labels a report could clip) is opened from disk; for each
figure that names features or clusters, the tick texts Plotly actually drew
are read from the SVG and their boxes checked to lie inside the figure and
the y labels not to touch.
"""

from __future__ import annotations

from itertools import pairwise

from craft.report import craft_report

READ_TICKS = """
() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(div => {
  const box = div.getBoundingClientRect();
  const ticks = axis => Array.from(div.querySelectorAll(`.${axis}tick text`)).map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left - box.left, right: r.right - box.left,
            top: r.top - box.top, bottom: r.bottom - box.top};
  });
  return {width: box.width, height: box.height, x: ticks('x'), y: ticks('y'),
          title: (div.layout && div.layout.title && div.layout.title.text) || ''};
})
"""


def test_report_draws_every_name_of_a_wide_table_inside_its_figure(browser, tmp_path, wide_survey):
    X, classes, model = wide_survey
    names = list(X.columns)
    path = tmp_path / "report.html"
    path.write_text(craft_report(model, X, dataset_name="survey", params={"m": 0.4, "k": 9}, y=classes))
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function("document.querySelectorAll('.plotly-graph-div .xtick').length > 0")
        figures = {figure["title"]: figure for figure in page.evaluate(READ_TICKS)}
    finally:
        context.close()
    clusters = {f"cluster {k}" for k in range(9)}
    masks = figures["Selected features per cluster (9 clusters × 42 features)"]
    heatmap = next(f for title, f in figures.items() if title.startswith("Data sorted by CRAFT cluster"))
    sizes = figures["Cluster sizes (9 clusters, 900 rows)"]
    confusion = figures["Confusion matrix (clusters × classes)"]
    expected = [
        # the heatmap's small clusters give their label's line to a larger neighbour (the hover names them)
        (masks, set(names), clusters), (heatmap, set(names), None), (sizes, clusters, None),
        (confusion, set(classes), clusters),
    ]
    for figure, x_names, y_names in expected:
        drawn_x = {tick["text"] for tick in figure["x"]}
        assert x_names <= drawn_x, (figure["title"], sorted(x_names - drawn_x)[:5])
        if y_names is not None:
            drawn_y = {tick["text"].split(" (")[0] for tick in figure["y"]}
            assert y_names <= drawn_y, (figure["title"], sorted(y_names - drawn_y)[:5])
        drawn_rows = sorted(figure["y"], key=lambda tick: tick["top"])
        for above, below in pairwise(drawn_rows):
            assert below["top"] >= above["bottom"] - 1, (figure["title"], above["text"], below["text"])
        for tick in figure["x"] + figure["y"]:
            if tick["text"]:
                # inside the figure: not clipped by its edges (1 px of anti-aliasing allowed)
                assert tick["left"] >= -1 and tick["right"] <= figure["width"] + 1, (figure["title"], tick)
                assert tick["top"] >= -1 and tick["bottom"] <= figure["height"] + 1, (figure["title"], tick)
