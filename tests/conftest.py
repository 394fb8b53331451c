"""Set-up shared by every test folder (library, app, browser, integration)."""

import os
import warnings

import pytest


@pytest.fixture(autouse=True)
def _environment_kept():
    """Every test leaves the process environment as it found it: ``craft app`` run in-process sets the server's
    start table (``CRAFT_APP_DATA``, the cluster table's spec), which every later app test would otherwise open."""
    saved = dict(os.environ)
    yield
    if dict(os.environ) != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def wide_survey():
    """``(X, classes, model)``: 900 rows, 42 long feature names, 9 planted groups, fitted with k = 9.

    The shape of a survey whose report would clip its labels: many long names, many clusters.
    """
    import pandas as pd

    from craft import CRAFT, synthetic

    X, y, _ = synthetic.mixed_planted(n_samples=900, n_clusters=9, n_numeric=22, n_categorical=20, random_state=4)
    names = [f"q{j + 1:02d}_how_often_do_you_{'walk' if j % 2 else 'cycle'}_to_work" for j in range(X.shape[1])]
    X = X.set_axis(names, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=0.4, k=9, n_init=1, random_state=0).fit(X)
    assert X.shape[1] >= 40 and model.n_clusters_ == 9
    classes = pd.Series([f"answer group {int(v) + 1} of the survey" for v in y])
    return X, classes, model
