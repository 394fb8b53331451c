"""Session state of the app, initialised in one place, and its mirror in the URL.

Widget values (dataset, m, rho, k...) are bound to query parameters by the
widgets themselves (``bind="query-params"``; the key is the parameter name).
Two things that are edited on the Data page but needed by every page are kept
here and mirrored into the URL by hand: the label column (``label``) and the
user's column roles (``roles``, compact JSON). Uploaded data never travel in
the URL; only bundled examples can be shared.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.state.session_state_proxy import get_session_state

from craft import CraftInputError
from craft.io import table_fingerprint

from .services.loading import EXAMPLE_ROWS, EXAMPLES, PRESETS, load_upload, upload_key
from .services.params import FitParams
from .services.roles import suggested_k

#: Default dataset: the paper's Figure 1(a).
DEFAULT_DATASET = "fig1_binary"
#: Rows and seed of synthetic sets by default (the paper's 300).
DEFAULT_SYNTHETIC_ROWS = 300

#: The parameters the app opens with: the estimator's defaults (through
#: FitParams) with the default dataset's preset applied, as picking it would.
_DEFAULT = FitParams().replace(**PRESETS[DEFAULT_DATASET])

#: Defaults of the parameter widgets (also their URL defaults).
WIDGET_DEFAULTS: dict[str, Any] = {
    "dataset": DEFAULT_DATASET,
    "syn_n": DEFAULT_SYNTHETIC_ROWS,
    "syn_seed": 0,
    "m": _DEFAULT.m,
    "rho_auto": True,
    "rho_share": 0.9,
    "rho_selection": _DEFAULT.rho_selection,
    "size_by": _DEFAULT.size_by,
    "k": _DEFAULT.k,
    "k_method": _DEFAULT.k_method,
    "lam": _DEFAULT.lam,
    "budget": _DEFAULT.budget,
    "eps_c": _DEFAULT.eps_c,
    "eps_v": _DEFAULT.eps_v,
    "standardize": _DEFAULT.standardize,
    "missing": _DEFAULT.missing,
    "seed": _DEFAULT.seed,
    # "auto" is the estimator's default; the slider only shows when it is unticked.
    "n_init_auto": _DEFAULT.n_init == "auto",
    "n_init": 10 if _DEFAULT.n_init == "auto" else _DEFAULT.n_init,
    "max_iter": _DEFAULT.max_iter,
    "noise": _DEFAULT.noise,
}

#: What every dataset's presets start from: the estimator's defaults (an
#: upload gets exactly these, with k suggested from its label column), the
#: paper's 300 rows and data seed 0 for synthetic sets. Run settings (the
#: selection rule, seed, restarts, iterations) are the user's and stay.
_BASE = FitParams()
_PRESET_BASE = {
    "syn_n": DEFAULT_SYNTHETIC_ROWS,
    "syn_seed": 0,
    "m": _BASE.m,
    "rho_auto": True,
    "rho_share": WIDGET_DEFAULTS["rho_share"],
    "size_by": _BASE.size_by,
    "k": _BASE.k,
    "k_method": _BASE.k_method,
    "lam": _BASE.lam,
    "budget": _BASE.budget,
    "eps_c": _BASE.eps_c,
    "eps_v": _BASE.eps_v,
    "standardize": _BASE.standardize,
}

#: Session key set before a rerun that only brings in a finished background fit: what the previous
#: run said once (the ignored link values) is said again, since the user has not moved on.
CONTINUED = "_continued_view"

#: Session keys that are not widgets, with their initial values.
_SESSION_DEFAULTS: dict[str, Any] = {
    "role_overrides": {},  # column -> numeric / categorical / ignored
    "label_choice": None,  # None: the dataset's own label; "" : no label; else a column
    "upload": None,  # dict(name, data, sha) of the last good upload
    "upload_error": None,
    "results": {},  # page -> (key, value) of the last Compare / What-if runs
    "report": None,  # (fit key, html)
    "upload_link": False,  # opened from a link to a view of an upload the session does not have
    "k_advice": False,  # after an upload: say how k compares with the label column's classes
    "last_page": None,  # url_path of the last page shown other than Export (its share link reopens it)
}

NO_LABEL = ""
#: The table a new session opens with when its link names no dataset: a bundled example's name or the path
#: of a file on the server (``craft app DATA`` sets it). Unset: :data:`DEFAULT_DATASET`.
START_DATA_ENV = "CRAFT_APP_DATA"
#: The dataset picker's option for the session's uploaded file.
UPLOAD = "(uploaded file)"
#: The dataset picker's option for a table on a Dask cluster (``craft app DATA --local-workers N``), the same
#: value as :data:`explorer.distributed_table.SOURCE` (state is imported by it, not the other way round).
CLUSTER_TABLE = "(cluster table)"


def init_session() -> None:
    """Create the session's keys on its first run and read ``label``/``roles`` from the URL."""
    for key, value in _SESSION_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value.copy() if isinstance(value, dict) else value
    if not st.session_state.get("_url_read"):
        st.session_state["_url_read"] = True
        params = st.query_params
        # What the link asked for, to say after the sidebar what was not applied (ignored_url_values).
        st.session_state["_url_given"] = {key: params.get(key) for key in params.keys()}
        st.session_state["_url_ignored"] = []
        _drop_non_finite_numbers(params)
        dataset = params.get("dataset")
        if dataset is None and os.environ.get(START_DATA_ENV):
            _open_start_data(os.environ[START_DATA_ENV])
        elif dataset == UPLOAD and st.session_state.get("upload") is None:
            # Uploaded tables never travel in a link: say so instead of showing another dataset.
            st.session_state["upload_link"] = True
        elif dataset in PRESETS:
            # The same presets as picking the dataset from the list; the link's own values win.
            apply_preset(dataset, keep=set(params))
        if "n_init" in params and "n_init_auto" not in params:
            # A link that names a number of restarts means that number, not "auto".
            params["n_init_auto"] = "false"
            st.session_state["n_init_auto"] = False
        _read_label_and_roles(params, st.session_state["_url_ignored"])
    elif history_navigation():
        # Back or Forward: the view of the entry's URL (explorer/history.py: each entry is a view that was shown).
        params = _restore_entry_query()
        st.session_state["label_choice"] = None
        st.session_state["role_overrides"] = {}
        _read_label_and_roles(params, [])


def history_navigation() -> bool:
    """Whether this run was started by the browser's Back or Forward button."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    run = get_script_run_ctx()
    return bool(getattr(run, "is_history_navigation", False))


def _restore_entry_query():
    """The URL of the history entry that Back or Forward opened, given back to the bound widgets.

    On Back, Streamlit sets each bound widget from the entry's URL, but when the entry is another page it first
    drops the parameters bound on the page being left, which every sidebar widget is (they are drawn while a
    page runs): the widgets then took their defaults (Back from Evaluate to Tune & see showed fig1_binary at
    k = 3 instead of Zoo at k = 6). The entry's query, as the browser sent it with the run's request, is put
    back as the run's parameters and the values the widgets are seeded from.
    """
    from urllib.parse import urlsplit

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    query = getattr(get_script_run_ctx(), "query_string", None) or urlsplit(getattr(st.context, "url", None) or "").query
    with get_session_state().query_params() as params:
        params.populate_from_query_string(query)
        params.set_initial_query_params(query)
        params._send_query_param_msg()  # the address bar shows the entry's query again
    return st.query_params


def _read_label_and_roles(params, ignored: list) -> None:
    """The URL's ``label`` and ``roles`` into the session; what cannot be used is added to ``ignored``."""
    if "label" in params:
        value = params.get("label")
        st.session_state["label_choice"] = NO_LABEL if value in ("", "(none)") else value
    if "roles" in params:
        try:
            roles = json.loads(params["roles"])
        except (TypeError, ValueError, RecursionError):  # RecursionError: thousands of nested brackets
            roles = None
        if isinstance(roles, dict):
            st.session_state["role_overrides"] = {
                str(k): str(v) for k, v in roles.items() if v in ("numeric", "categorical", "ignored")
            }
            dropped = [str(k) for k, v in roles.items() if v not in ("numeric", "categorical", "ignored")]
            if dropped:
                ignored.append(("roles", params.get("roles"), f"the roles of {', '.join(dropped[:5])} are not "
                                                              f"numeric, categorical or ignored"))
        else:
            ignored.append(("roles", params.get("roles"), 'not a JSON object such as {"column": "numeric"}'))


def _open_start_data(value: str) -> None:
    """Open the server's table (:data:`START_DATA_ENV`): an example as if picked, a file as if uploaded, or the
    table on a Dask cluster (:mod:`explorer.distributed_table`)."""
    if value == CLUSTER_TABLE:
        st.session_state["dataset"] = value
        return
    if value in EXAMPLES:
        st.session_state["dataset"] = value
        if value in PRESETS:
            apply_preset(value)
        return
    path = Path(value)
    try:
        accept_upload(path.read_bytes(), path.name)
    except OSError as problem:
        st.session_state["upload_error"] = f"Not loaded: cannot read {value!r}: {problem.strerror or problem}."
    except CraftInputError as problem:
        st.session_state["upload_error"] = f"Not loaded: {problem}"


def accept_upload(content: bytes, name: str) -> None:
    """Make the table in ``content`` (file name ``name``) the session's upload and switch to it.

    Raises
    ------
    CraftInputError
        When the table cannot be clustered (:func:`explorer.services.loading.load_upload`'s message); the session's
        data are then unchanged.
    """
    data = load_upload(content, name)
    sha = table_fingerprint(content)
    st.session_state["upload"] = dict(name=name, data=content, sha=sha, tokens_in_text=False, sheet=None)
    st.session_state["_data"] = (upload_key(sha), data)
    st.session_state["upload_error"] = None
    st.session_state["dataset"] = UPLOAD
    for key in ("upload_markers_in_text", "upload_sheet"):
        st.session_state.pop(key, None)
    reset_data_choices()
    if not st.session_state.get("upload_link"):
        # A new table: the defaults and a k of its own (a shared link's parameters are kept).
        on_new_upload(suggested_k(data))
    st.session_state["upload_link"] = False


def _drop_non_finite_numbers(params) -> None:
    """Remove from the URL the numbers a number widget cannot take (``k=inf``, ``seed=1e400``, ``m=abc``).

    A bound integer widget converts its URL value with ``int(float(text))``, which raises OverflowError
    for an infinite one (Streamlit catches only ValueError there) and breaks the page. The widgets are
    seeded from the query string the page was opened with, kept apart from ``st.query_params``, so the
    value is removed from both before any widget runs; the widget keeps its value and
    :func:`ignored_url_values` names the link's text (kept in ``_url_given``).
    """
    bad = [key for key in params.keys() if _is_number_widget(key) and not _finite_number(params.get(key))]
    if not bad:
        return
    with get_session_state().query_params() as opened_with:
        for key in bad:
            getattr(opened_with, "_initial_query_params", {}).pop(key, None)
            opened_with.remove_param(key)


def _is_number_widget(key: str) -> bool:
    default = WIDGET_DEFAULTS.get(key)
    return isinstance(default, (int, float)) and not isinstance(default, bool)


#: URL keys read by hand (above) or by a page, not by a sidebar widget.
#: Teach's lesson (explorer.lecture reads and checks them): the lesson, lecture mode, the parts hidden, questions off.
LECTURE_URL_KEYS = ("lesson", "lecture", "hide", "ask")
# clusters: explorer.view reads and checks it; steer: explorer.steering does
_OTHER_URL_KEYS = ("label", "roles", "view", "clusters", "steer", *LECTURE_URL_KEYS)


def ignored_url_values() -> list[str]:
    """The link's values that were not applied, and why: once per session, after the sidebar ran.

    A bound widget resets a value it cannot take (``m=abc``, ``k=-5``, a
    dataset that does not exist) and drops it from the URL without a word;
    this compares what the link asked for with what the widgets hold.

    Returns
    -------
    list of str
        ``key='value' (why)`` for each value ignored; empty after the first run.
    """
    if st.session_state.get("_url_checked"):
        return []
    st.session_state["_url_checked"] = True
    given = st.session_state.pop("_url_given", None) or {}
    ignored = list(st.session_state.pop("_url_ignored", None) or [])
    for key, text in given.items():
        if key in _OTHER_URL_KEYS:
            continue
        if key not in WIDGET_DEFAULTS:
            ignored.append((key, text, "not a parameter of this app"))
            continue
        if _is_number_widget(key) and not _finite_number(text):
            ignored.append((key, text, "not a finite number"))
        elif key in st.session_state and not _same(st.session_state[key], text):
            ignored.append((key, text, f"not an allowed value; {st.session_state[key]!r} is used"))
    return [f"{key}={_shorten(str(text))!r} ({why})" for key, text, why in ignored]


def _finite_number(text) -> bool:
    try:
        return math.isfinite(float(text))
    except (TypeError, ValueError):
        return False


def _same(value, text) -> bool:
    """Whether a widget's value is what the URL text asked for."""
    text = str(text)
    if isinstance(value, bool):
        return text.strip().lower() == str(value).lower()
    if isinstance(value, (int, float)):
        return _finite_number(text) and math.isclose(float(text), float(value), rel_tol=1e-9, abs_tol=1e-12)
    return str(value) == text


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sync_url(shareable: bool) -> None:
    """Write ``label`` and ``roles`` into the URL (or remove them) to match the session.

    Parameters
    ----------
    shareable : bool
        False for uploaded data, whose roles mean nothing without the file.
    """
    params = st.query_params
    label = st.session_state.get("label_choice")
    roles = st.session_state.get("role_overrides") or {}
    wanted = {}
    if shareable and label is not None:
        wanted["label"] = label if label != NO_LABEL else "(none)"
    if shareable and roles:
        wanted["roles"] = json.dumps(roles, separators=(",", ":"), sort_keys=True)
    for key in ("label", "roles"):
        if key in wanted:
            if params.get(key) != wanted[key]:
                params[key] = wanted[key]
        elif key in params:
            del params[key]


def apply_preset(name: str, keep=frozenset()) -> None:
    """Set the parameter widgets to the presets of example ``name`` (except the keys in ``keep``).

    Keys the preset does not name take the app's defaults, so nothing of the
    previous dataset carries over.
    """
    preset = {**_PRESET_BASE, **PRESETS.get(name, {})}
    if name in EXAMPLE_ROWS:
        preset["syn_n"] = EXAMPLE_ROWS[name]
    for key, value in preset.items():
        if key not in keep:
            st.session_state[key] = value


def on_dataset_change() -> None:
    """Callback of the dataset picker: presets that suit the data, fresh roles and results."""
    name = st.session_state.get("dataset")
    if name in PRESETS:
        apply_preset(name)
    st.session_state["upload_error"] = None
    st.session_state["upload_link"] = False
    st.session_state["k_advice"] = False
    reset_data_choices()


def on_new_upload(k: int) -> None:
    """A new table was uploaded: the app's defaults, k suggested for this table (the Data page says why)."""
    apply_preset("", keep={"syn_n", "syn_seed"})
    st.session_state["k"] = int(k)
    st.session_state["k_advice"] = True
    st.session_state["upload_link"] = False


def reset_data_choices() -> None:
    """Forget choices tied to one table: roles, label, page results, report."""
    st.session_state["role_overrides"] = {}
    st.session_state["label_choice"] = None
    st.session_state["results"] = {}
    st.session_state["report"] = None
    for key in ("label_select", "roles_columns"):
        st.session_state.pop(key, None)


def share_link(query: str, page: str | None = None, *, current: str = "") -> str:
    """``query`` appended to the address of a page of the app (just ``query`` when the address is unknown).

    Parameters
    ----------
    query : str
        From :func:`share_query`.
    page : str or None
        ``url_path`` of the page the link opens ("" for the first page); None
        keeps the current page.
    current : str
        ``url_path`` of the page being shown, which ends the current address.
    """
    url = getattr(st.context, "url", None) or ""
    base = url.split("?", 1)[0]
    if not base:
        return query
    if page is not None:
        root = base[: -len(current)] if current and base.endswith(current) else base.rstrip("/") + "/"
        base = root + page
    return base + query


def share_query(shareable: bool, page: str | None = None) -> str:
    """The query string that reopens the current view (non-default values only).

    With ``page="clusters"`` the open tab of Tune & see (``view``) is kept too.
    """
    from urllib.parse import urlencode

    if not shareable:
        return ""
    items = []
    for key, default in WIDGET_DEFAULTS.items():
        value = st.session_state.get(key, default)
        if value != default and value is not None:
            items.append((key, str(value).lower() if isinstance(value, bool) else str(value)))
    label = st.session_state.get("label_choice")
    if label is not None:
        items.append(("label", label if label != NO_LABEL else "(none)"))
    roles = st.session_state.get("role_overrides") or {}
    if roles:
        items.append(("roles", json.dumps(roles, separators=(",", ":"), sort_keys=True)))
    clusters = st.query_params.get("clusters")  # the view's cluster numbers (explorer.view.PERM_PARAM)
    if clusters:
        items.append(("clusters", clusters))
    for key in LECTURE_URL_KEYS:  # written by explorer.lecture on Teach, kept in a link to Teach
        if page in (None, "teach") and st.query_params.get(key):
            items.append((key, st.query_params[key]))
    steer = st.query_params.get("steer")  # the pins, links, merges and splits (explorer.steering.PARAM)
    if steer:
        items.append(("steer", steer))
    view = st.session_state.get("view")
    if page == "clusters" and view:
        items.append(("view", str(view)))
    return "?" + urlencode(items) if items else ""
