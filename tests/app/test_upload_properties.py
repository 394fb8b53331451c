"""The app's upload path on the random mixed tables of ``tests/library/test_properties.py`` (its strategies):
the table as CSV bytes, ``load_upload``, ``fit_craft``: a model or a message, never another exception."""

from __future__ import annotations

import math
import warnings

from hypothesis import assume, event, given

from craft import CraftInputError
from explorer.services import FitParams, fit_craft, load_upload
from test_properties import PARAMS, SETTINGS, mixed_tables


@SETTINGS
@given(table=mixed_tables(max_rows=25, max_columns=5), params=PARAMS)
def test_app_upload_path_on_random_tables(table, params):
    """The app's path: the table as CSV bytes → ``load_upload`` → ``fit_craft``
    gives a model or a message, never another exception."""
    data = table.to_csv(index=False).encode("utf-8")
    try:
        loaded = load_upload(data, "random.csv")
    except CraftInputError as error:
        assert str(error)
        return
    fit_params = FitParams(
        m=params["m"], size_by="lambda" if params["size"] == "lam" else "k", k=params["k"],
        lam=params["lam"], budget=params["budget"], standardize=params["standardize"],
        seed=params["seed"] % 1000, n_init=1, max_iter=50,
    )
    schema = loaded.schema
    assume(schema.used)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = fit_craft(loaded.table, schema, fit_params)
    if outcome.model is None:
        assert outcome.error and isinstance(outcome.error, str)
        event("message instead of a model")
        return
    event("fitted")
    labels = outcome.model.labels_
    assert labels.shape == (len(loaded.table),)
    assert math.isfinite(outcome.model.objective_)
