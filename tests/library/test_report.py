"""The HTML report: self-contained (plotly.js inline once, no CDN) and every user string escaped."""

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from craft import CRAFT, Schema, synthetic
from craft.report import Section, craft_report, figure_count, render_report

EVIL = "<script>alert('x')</script>"


def test_render_report_escapes_text_and_tables_and_embeds_plotly_once():
    figures = [go.Figure(go.Bar(x=["a"], y=[1])), go.Figure(go.Bar(x=["b"], y=[2]))]
    table = pd.DataFrame({EVIL: [EVIL], "n": [1.23456789]})
    page = render_report(EVIL, [Section(EVIL, [EVIL], [table], figures)], subtitle=EVIL)
    assert EVIL not in page
    assert page.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") >= 5
    assert figure_count(page) == 2
    # plotly.js inline exactly once: one big script, no script loaded from elsewhere
    assert re.findall(r"<(?:script|link|img)[^>]*\b(?:src|href)=", page) == []
    assert page.count("Plotly.newPlot") == 2
    assert len(page) > 1_000_000  # the library itself is inside
    assert page.count("* plotly.js v") == 1  # the library's banner: embedded once
    assert "1.235" in page  # floats shortened in tables


def test_render_report_without_figures_has_no_plotly():
    page = render_report("t", [Section("s", ["a & b"])])
    assert "a &amp; b" in page
    assert figure_count(page) == 0 and len(page) < 10_000


@pytest.fixture(scope="module")
def synthetic_fit():
    # The library alone (no explorer.services): Figure 1(a)'s generator and a fit, as the app's example gives them.
    X, y, true_mask = synthetic.fig1_binary(n_samples=60, random_state=0)
    model = CRAFT(m=1 / 3, k=3, n_init=1, random_state=0).fit(X)
    return X, np.asarray(y, dtype=np.int64), np.asarray(true_mask, dtype=bool), model


def test_craft_report_of_a_synthetic_set(synthetic_fit):
    X, y, true_mask, model = synthetic_fit
    page = craft_report(
        model, X, dataset_name="fig1_binary", params=model.get_params(),
        y=pd.Series([f"planted {v}" for v in y]), true_labels=y, true_mask=true_mask,
        true_features=[str(c) for c in X.columns], notes=("a note",),
    )
    assert page.startswith("<!DOCTYPE html>")
    # masks, data heatmap, sizes, confusion, projection, history
    assert figure_count(page) == 6
    assert "Evaluation against the label column" in page and "a note" in page
    assert "Dataset: fig1_binary" in page
    assert "Why each feature was selected" in page


def test_craft_report_escapes_column_and_level_names():
    rng = np.random.default_rng(0)
    n = 40
    table = pd.DataFrame({
        EVIL: np.r_[rng.normal(0, 0.1, n // 2), rng.normal(5, 0.1, n // 2)],
        "kind": np.r_[[EVIL] * (n // 2), ["<b>bold</b>"] * (n // 2)],
    })
    schema = Schema(numeric=(EVIL,), categorical=("kind",), ignored=(), reasons={EVIL: "n", "kind": "c"})
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0, categorical=schema).fit(table)
    page = craft_report(model, table, dataset_name=EVIL, params={"m": 0.5, EVIL: EVIL})
    assert EVIL not in page
    assert "<b>bold</b>" not in page
    assert figure_count(page) == 5  # no label column: no confusion matrix
