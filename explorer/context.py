"""What every page needs, computed once per run by ``app.py``.

:func:`build` loads the chosen data (kept in the session while its key does
not change), applies the user's roles, fits CRAFT through the cache and
stores an :class:`AppContext` in ``st.session_state["ctx"]``. Pages read it
with :func:`current` and stop with a specific message when there is no fit
(:func:`require_model`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from craft import CraftInputError
from craft.schema import Schema

from . import cache
from .services import (
    FitOutcome,
    FitParams,
    LoadedData,
    fit_schema,
    fitted_X,
    labels_for_evaluation,
    upload_key,
)
from .state import NO_LABEL, UPLOAD
from .ui import error


@dataclass
class AppContext:
    """The data, roles, parameters and fit of the current run.

    Attributes
    ----------
    data : LoadedData or None
        None when nothing could be loaded (``problem`` says why).
    schema : Schema or None
        Roles used for fitting (label excluded).
    label : str or None
        Label column (evaluation only).
    params : FitParams
    outcome : FitOutcome or None
    key : str
        Names the fit (data, roles, parameters) for derived caches.
    data_key : str
        Names the data and roles (Compare / What-if caches).
    problem : str or None
        Why there is no fit: data or roles that cannot be clustered.
    notes : list of str
        Remarks on the roles (skipped saved roles...).
    """

    data: LoadedData | None
    schema: Schema | None
    label: str | None
    params: FitParams
    outcome: FitOutcome | None = None
    key: str = ""
    data_key: str = ""
    problem: str | None = None
    notes: list = field(default_factory=list)

    @property
    def model(self):
        return None if self.outcome is None else self.outcome.model

    @property
    def X(self) -> pd.DataFrame:
        """The fitted columns of the table."""
        return fitted_X(self.model, self.data.table)

    @property
    def y(self):
        """Labels for evaluation (strings, missing allowed) or None."""
        return labels_for_evaluation(self.data.table, self.label)[0]

    @property
    def shareable(self) -> bool:
        return self.data is not None and self.data.kind != "upload"


def _loaded_data(source: str) -> LoadedData:
    """The table for ``source``; kept in this session until the source changes."""
    if source == UPLOAD:
        upload = st.session_state.get("upload")
        if upload is None and st.session_state.get("upload_link"):
            raise CraftInputError(
                "This link opens a view of an uploaded table. Uploaded tables never travel in a link, so the "
                "table has to be uploaded again: upload it on the Data page (the link's parameters are kept), "
                "or pick a bundled dataset."
            )
        if upload is None:
            raise CraftInputError("No uploaded file: upload one on the Data page, or pick an example.")
        key = upload_key(upload["sha"], tokens_in_text=upload.get("tokens_in_text", False), sheet=upload.get("sheet"))
    else:
        n = int(st.session_state.get("syn_n", 300))
        seed = int(st.session_state.get("syn_seed", 0))
        key = (source, n, seed)
    held = st.session_state.get("_data")
    if held is not None and held[0] == key:
        return held[1]
    if source == UPLOAD:
        data = cache.load_upload(upload["sha"], upload["name"], upload["data"], upload.get("tokens_in_text", False),
                                 upload.get("sheet"))
    else:
        data = cache.load_example(source, n, seed)
    st.session_state["_data"] = (key, data)
    return data


def build(params: FitParams) -> AppContext:
    """Load, apply roles and fit; the result goes to ``st.session_state["ctx"]``."""
    source = st.session_state.get("dataset")
    try:
        data = _loaded_data(source)
    except CraftInputError as error:
        ctx = AppContext(None, None, None, params, problem=str(error))
        st.session_state["ctx"] = ctx
        return ctx
    choice = st.session_state.get("label_choice")
    label = data.label if choice is None else (None if choice == NO_LABEL else choice)
    try:
        schema, notes = fit_schema(data, st.session_state.get("role_overrides") or {}, label)
    except CraftInputError as error:
        ctx = AppContext(data, None, label, params, problem=str(error))
        st.session_state["ctx"] = ctx
        return ctx
    if label is not None and label not in data.table.columns:
        label = None
    data_key = cache.fit_key(data.key, schema, FitParams())
    key = cache.fit_key(data.key, schema, params)
    outcome = cache.fit(data.key, tuple(schema.numeric), tuple(schema.categorical), params, data.table, schema)
    ctx = AppContext(data, schema, label, params, outcome, key, data_key, None if outcome.model else outcome.error,
                     notes)
    st.session_state["ctx"] = ctx
    return ctx


def current() -> AppContext:
    """The context of this run (see :mod:`explorer.frame`)."""
    from . import frame

    return frame.current()


def require_model(ctx: AppContext):
    """The fitted model, or a specific message and the end of the page."""
    if ctx.model is not None:
        return ctx.model
    if ctx.data is None:
        error(ctx.problem or "No data.")
    else:
        error(f"No clustering for {ctx.data.name!r}: {ctx.problem}")
    st.page_link("pages/data.py", label="Go to the Data page to change the data or the column roles", icon=":material/table_view:")
    st.stop()
