"""The estimator split by job (issue 33): its warnings still point at the user's line, and every name imported
from ``craft.estimator`` before the split is still there, the same object as in its new home."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pandas as pd
import pytest

import craft
from craft import CRAFT, estimator

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fitted():
    table = pd.DataFrame({"size": [1.0, 1.1, 0.9, 8.0, 8.2, 7.9], "colour": ["red", "red", "red", "blue", "blue", "blue"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CRAFT(k=2, categorical=["colour"], random_state=0).fit(table)


@pytest.mark.parametrize("method", ["predict", "assign", "explain"])
def test_a_new_rows_warning_points_at_the_callers_line(fitted, method):
    """``predict``, ``assign`` and ``explain`` share one preamble; its notes are warned at the line that called them."""
    new = pd.DataFrame({"size": [1.0, 8.0], "colour": ["green", "red"]})  # "green" was never seen in fit
    with pytest.warns(UserWarning, match="colour") as caught:
        getattr(fitted, method)(new)
    notes = [w for w in caught if "colour" in str(w.message)]
    assert notes and all(Path(w.filename) == Path(__file__) for w in notes), [w.filename for w in notes]


def test_predicts_width_check_is_its_own():
    """An array of another width: ``predict`` names the widths, ``assign`` the columns lacking (as before the split)."""
    model = CRAFT(k=2, random_state=0).fit([[0.0, 1.0], [0.1, 1.1], [5.0, 2.0], [5.1, 2.1]])
    with pytest.raises(craft.CraftInputError, match="X has 1 features, but CRAFT is expecting 2"):
        model.predict([[0.0], [1.0]])
    with pytest.raises(craft.CraftInputError, match=r"lacks the fitted column\(s\) \['x1'\]"):
        model.assign([[0.0], [1.0]])


# Every name the tree imported from craft.estimator before the split, and where it lives now.
MOVED = {
    "Explanation": "craft._assignment", "assignment_frame": "craft._assignment", "unseen_columns": "craft._assignment",
    "MAX_CLUSTERS": "craft._params", "MAX_N_INIT": "craft._params", "MAX_ITER": "craft._params",
    "MIN_SMOOTHING": "craft._params", "MAX_THREADS": "craft._params", "cluster_limit": "craft._params",
    "_check_callback": "craft._params", "_number": "craft._params", "_Rule": "craft._params",
    "SEARCH_ROWS": "craft._runs", "NOISE_WARN_SHARE": "craft._runs", "noise_share_note": "craft._runs",
    "_checked_lambda": "craft._runs", "_ranking": "craft._runs", "_rows_kept": "craft._runs",
    "as_table": "craft._tables", "check_fitted_columns": "craft._tables",
    "THREADED_CELLS": "craft._threads", "warm_refit": "craft._warm_start",
}


@pytest.mark.parametrize("name", sorted(MOVED))
def test_names_imported_from_the_estimator_still_are(name):
    import importlib

    assert getattr(estimator, name) is getattr(importlib.import_module(MOVED[name]), name)


def test_the_package_exports_the_moved_public_names():
    assert craft.warm_refit is estimator.warm_refit and craft.Explanation is estimator.Explanation


def test_no_module_of_craft_imports_a_moved_name_from_the_estimator():
    """Inside craft/ a moved name is imported from its new home, not through the estimator's re-export."""
    offenders = []
    for path in sorted((ROOT / "craft").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "estimator" and node.level >= 1:
                offenders += [f"{path.name}: {alias.name}" for alias in node.names if alias.name in MOVED]
    assert offenders == []
