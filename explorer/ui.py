"""Widgets and messages shared by the pages.

User strings (file, column and level names, messages that quote them) are
always shown through :func:`esc`, which backslash-escapes Markdown, so a
column called ``[x](javascript:…)`` or ``$\\alpha$`` shows as typed. No text
is ever rendered as raw HTML.
"""

from __future__ import annotations

import os
import re
from typing import Callable

import streamlit as st

from craft import CraftInputError
from craft.priors import default_rho

from . import cache, state
from .services.loading import EXAMPLES, example_names
from .services.params import FitParams, rho_from_share
from .services.roles import truth_agreement

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-!|<>~$])")

CLUSTER_HELP = (
    "How many clusters: ask for k (λ is then found for you) or give λ, the cost of opening a cluster "
    "(larger λ, fewer clusters)."
)


def style(css: str) -> None:
    """Put the app's own CSS on the page: fixed rules and numbers, never a value of the user's.

    The one place the app renders raw HTML (``st.html``), and only a
    ``<style>`` element: ``tests/app/test_hostile_app.py`` checks that no other
    module calls ``st.html`` and that every raw-HTML element of every page is
    such a style block holding no ``<``.
    """
    if "<" in css:
        raise ValueError("style() takes CSS rules, not markup")
    st.html(f"<style>{css}</style>")


def esc(text) -> str:
    r"""``text`` with every Markdown (and LaTeX) special character escaped.

    Examples
    --------
    >>> esc("[a](b) $x$") == r"\[a\]\(b\) \$x\$"
    True
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def number(value: float) -> str:
    """A readable number: thousands separators for large values, 4 significant digits otherwise."""
    return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:,.4g}"


def error(message: str) -> None:
    """An error box with a message that may quote user strings."""
    st.error(esc(message), icon=":material/error:")


def warning(message: str) -> None:
    st.warning(esc(message))


def note(message: str) -> None:
    st.info(esc(message))


def cluster_write(label: str, key: str, spinner: str, write: Callable[[], int], said: Callable[[int], str], *,
                  primary: bool = False) -> None:
    """A button that runs ``write()`` (the workers write a Parquet folder) and, on this and later runs, its outcome.

    ``said(rows written)`` is the success message; a problem (:class:`craft.CraftInputError`) is said as an
    error. The outcome is kept in the session under ``key + "_said"``, so that it stays on the page when another
    control reruns it.
    """
    if st.button(label, key=key, type="primary" if primary else "secondary"):
        try:
            with st.spinner(spinner):
                written = write()
            st.session_state[key + "_said"] = ("success", said(written))
        except CraftInputError as problem:
            st.session_state[key + "_said"] = ("error", str(problem))
    outcome = st.session_state.get(key + "_said")
    if outcome is not None:
        (st.success if outcome[0] == "success" else error)(outcome[1])


def show_table(frame, **kwargs) -> None:
    """``st.dataframe`` of ``frame`` without its ``attrs``.

    A table read from a file carries the reader's notes in ``attrs``
    (:class:`craft.io.ReadInfo`), which Streamlit tries to serialise as JSON
    and, failing, warns about in the server's log on every run.
    """
    shown = frame.copy(deep=False)
    shown.attrs = {}
    st.dataframe(shown, **kwargs)


@cache.kept_in(cache.STORE)
def _examples() -> dict:
    return example_names()


def render_sidebar() -> FitParams:
    """Dataset picker and every parameter of the fit, bound to the URL; returns the parameters."""
    sidebar = st.sidebar
    # Options are shown as they are: a bound selectbox puts the shown text in the URL.
    options = list(EXAMPLES)
    if st.session_state.get("upload") is not None or st.session_state.get("upload_link"):
        options = [state.UPLOAD] + options
    elif st.session_state.get("dataset") == state.UPLOAD:
        st.session_state["dataset"] = state.DEFAULT_DATASET
    if os.environ.get(state.START_DATA_ENV) == state.CLUSTER_TABLE:  # craft app DATA --local-workers N
        options = [state.CLUSTER_TABLE] + options
    name = sidebar.selectbox(
        "Dataset", options, index=options.index(state.DEFAULT_DATASET), key="dataset", bind="query-params",
        on_change=state.on_dataset_change,
        help="A bundled example — the paper's synthetic sets (fig…, mixed_planted) or real UCI data — or your "
             "upload (Data page).",
    )
    if name == state.UPLOAD and st.session_state.get("upload") is None:
        sidebar.caption("This link was made for an uploaded table: upload it again on the Data page.")
    elif name == state.CLUSTER_TABLE:
        sidebar.caption("The table on the Dask cluster (`craft app DATA --local-workers N` / `--scheduler`).")
    elif name == state.UPLOAD:
        upload = st.session_state.get("upload") or {}
        sidebar.caption(f"Your file {esc(upload.get('name', ''))}; it stays in this session.")
    else:
        group, description = _examples().get(name, ("", ""))
        sidebar.caption(("Synthetic (paper). " if group == "synthetic" else "Real (UCI). ") + esc(description))
    if name in _synthetic_names():
        left, right = sidebar.columns(2)
        left.number_input("Rows", 30, 100_000, state.DEFAULT_SYNTHETIC_ROWS, step=30, key="syn_n",
                          bind="query-params", help="Rows generated for the synthetic set.")
        right.number_input("Data seed", 0, 10_000, 0, key="syn_seed", bind="query-params")

    # The sliders a person tunes (m, ρ, k or λ) come first, so that at 1280 × 720 they sit in view beside Tune & see's
    # mask heatmap; the choices that are set once (what ρ acts on, how λ follows k, the budget) follow them.
    m = sidebar.slider(
        "m: fraction of features per cluster", 0.05, 0.95, state.WIDGET_DEFAULTS["m"], step=0.01, key="m",
        bind="query-params",
        help="Each cluster selects about m of the features (fixed budget: round(m·|Num|) numeric and "
             "round(m·|Cat|) categorical ones).",
    )
    rho = _rho_controls(sidebar, m)
    # The choice and its value on one row: the value stays in view at 1280 × 720.
    choice, value = sidebar.columns([2, 3], vertical_alignment="bottom")
    size_by = choice.radio("Clusters by", ["k", "lambda"], key="size_by", bind="query-params", help=CLUSTER_HELP)
    k, k_method, lam = state.WIDGET_DEFAULTS["k"], state.WIDGET_DEFAULTS["k_method"], state.WIDGET_DEFAULTS["lam"]
    if size_by == "k":
        k = value.number_input("k: clusters wanted", 1, 200, state.WIDGET_DEFAULTS["k"], key="k",
                               bind="query-params")
    else:
        lam = value.number_input("λ: cost of a new cluster", 1e-6, 1e9, state.WIDGET_DEFAULTS["lam"],
                                 step=1.0, format="%.4f", key="lam", bind="query-params")
    rho_selection = _rho_selection(sidebar)
    if size_by == "k":
        k_method = sidebar.radio(
            "λ from k by", ["search", "farthest_first"], key="k_method", bind="query-params", horizontal=True,
            captions=["exact k", "the paper's heuristic"],
            help="Exact-k search: bisection on λ until the fit has k clusters (the nearest K when k is not "
                 "reachable). Farthest-first: the paper's heuristic, which gives about k.",
        )

    # The budget and its thresholds stay in view: they change what every figure shows.
    budget = sidebar.radio("Feature budget", ["fixed", "approximate"], key="budget", bind="query-params",
                           horizontal=True,
                           help="Fixed: every cluster selects round(m·|Num|) + round(m·|Cat|) features. "
                                "Approximate: a feature is selected when it passes ε_c (categorical) or ε_v "
                                "(numeric), so clusters select different numbers of features.")
    eps_c, eps_v = state.WIDGET_DEFAULTS["eps_c"], state.WIDGET_DEFAULTS["eps_v"]
    if budget == "approximate":
        eps_c = sidebar.slider("ε_c (categorical)", 0.01, 0.99, state.WIDGET_DEFAULTS["eps_c"], step=0.01,
                               key="eps_c", bind="query-params",
                               help="Select a categorical feature when G_d − G_kd > ε_c·G_d.")
        eps_v = sidebar.number_input("ε_v (numeric)", 0.001, 1000.0, state.WIDGET_DEFAULTS["eps_v"], step=0.05,
                                     key="eps_v", bind="query-params",
                                     help="Select a numeric feature when its within-cluster variance is below "
                                          "ε_v (a share of the overall variance when standardized).")
    noise = sidebar.checkbox(
        "Noise: rows that fit no cluster are −1", state.WIDGET_DEFAULTS["noise"], key="noise", bind="query-params",
        help="A row whose cost to every cluster exceeds λ + D·F₀ (where CRAFT would open a new cluster for it) is "
             "labelled −1, drawn grey, and left out of every cluster's statistics and feature selection. With k "
             "given, the k seeds are the clusters and λ (the default, the mean cost under one cluster) sets only "
             "where noise starts.",
    )
    with sidebar.expander("Scaling, seed and iterations"):
        standardize = st.checkbox("Standardize numeric features", True, key="standardize", bind="query-params")
        missing = st.radio(
            "Missing cells", ["marginalise", "impute"], key="missing", bind="query-params", horizontal=True,
            captions=["left out", "mean / own level"],
            help="Marginalise: a missing cell adds nothing to its row's cost and nothing to its cluster's "
                 "statistics (missing at random). Impute: a missing number is its column's mean, a missing "
                 "category a level of its own, '(missing)' — better when missingness itself tells groups apart.",
        )
        seed = st.number_input("Seed", 0, 2**31 - 1, 0, key="seed", bind="query-params")
        n_init = "auto"
        if not st.checkbox("Restarts: the estimator's default", state.WIDGET_DEFAULTS["n_init_auto"],
                           key="n_init_auto", bind="query-params",
                           help="n_init='auto': 10 fits from different starts (above 50,000 rows on a sample "
                                "of 50,000, the best then finished on every row); the lowest objective is kept."):
            n_init = st.slider("Restarts", 1, 20, state.WIDGET_DEFAULTS["n_init"], key="n_init",
                               bind="query-params", help="Fits from different starts; the lowest objective is kept.")
        max_iter = st.number_input("Max iterations", 1, 1000, state.WIDGET_DEFAULTS["max_iter"], key="max_iter",
                                   bind="query-params")
    return FitParams(
        m=float(m), rho=rho, rho_selection=rho_selection, size_by=size_by, k=int(k), k_method=k_method, lam=float(lam),
        budget=budget, eps_c=float(eps_c), eps_v=float(eps_v), standardize=bool(standardize), missing=missing,
        seed=int(seed),
        n_init=n_init if n_init == "auto" else int(n_init), max_iter=int(max_iter), noise=bool(noise),
    )


#: What rho does under each selection rule, in the app's words (docs/numerics.md derives both).
RHO_SELECTION_HELP = {
    "paper": "Algorithm CRAFT as printed: each cluster ranks its own variances and entropy gains. ρ changes the "
             "cost of a new cluster (λ + D·F₀), the cost per selected feature (F_Δ) and a new cluster's random "
             "features, but not which features a cluster selects; with k given, the λ search absorbs most of it.",
    "shrink": "ρ reaches the selection: each cluster ranks its own score shrunk towards the score pooled over "
              "all clusters, with weight ρ/(m(1−m)) on its own (the weight the posterior mean of ν gives a "
              "cluster's own choice) and the rest on the pooled one. Near m(1−m) this is the paper's rule "
              "(cluster-specific). Towards 0 the rankings merge into the pooled one, though not at once: at a "
              "share s a cluster orders two features otherwise than the pooled scores do only where its own "
              "scores differ by more than (1 − s)/s times the pooled difference — 99 times at 0.01, 999 times "
              "at 0.001 — so a small share can still leave clusters apart.",
}


def _rho_controls(sidebar, m: float) -> float | None:
    """ρ (None: the paper's default), with its value and valid range in one caption."""
    upper = m * (1.0 - m)
    auto = sidebar.checkbox(
        "ρ: the paper's default", True, key="rho_auto", bind="query-params",
        help="ρ = max(0.01, m(1−m) − 0.01), as in all the paper's experiments (cluster-specific selection).",
    )
    if auto:
        sidebar.caption(f"ρ = {default_rho(m):.4f}, valid range (0, m(1−m)) = (0, {upper:.4f}).")
        return None
    # Steps of 0.001 reach the near-global end, where a share of 0.01 still leaves clusters apart.
    share = sidebar.slider(
        "ρ as a share of m(1−m): global ↔ cluster-specific", 0.001, 0.999, state.WIDGET_DEFAULTS["rho_share"],
        step=0.001, format="%.3f", key="rho_share", bind="query-params",
        help="ρ must lie in (0, m(1−m)); this slider sets ρ/(m(1−m)), so any value is valid.",
    )
    rho = rho_from_share(m, share)
    sidebar.caption(f"ρ = {share:.3f} × {upper:.4f} = {rho:.4g}; valid range (0, {upper:.4f}).")
    return rho


def _rho_selection(sidebar) -> str:
    """The selection rule ρ acts through."""
    rho_selection = sidebar.radio(
        "ρ acts on", ["paper", "shrink"], key="rho_selection", bind="query-params", horizontal=True,
        captions=["the paper's algorithm", "the selection too"],
        help=f"paper: {RHO_SELECTION_HELP['paper']}\n\nshrink: {RHO_SELECTION_HELP['shrink']}",
    )
    if rho_selection == "paper":
        sidebar.caption("With the paper's rule ρ does not change which features a cluster selects "
                        "(choose “shrink” to see it act on the masks).")
    return rho_selection


def _synthetic_names() -> set:
    return {name for name, (group, _) in _examples().items() if group == "synthetic"}


def fit_numbers(ctx) -> list[tuple[str, str, str | None]]:
    """The current fit's headline numbers as (label, value, help), read from the fitted model."""
    model, params = ctx.model, ctx.params
    how = "given" if params.size_by == "lambda" else ("exact-k search" if params.k_method == "search" else "farthest-first")
    return [
        ("Clusters K", str(model.n_clusters_), None),
        ("Objective", number(model.objective_), None),
        ("λ used", f"{model.lam_:.4g}", f"λ {how}."),
        ("ρ used", f"{model.rho_:.4f}", f"Valid range (0, {params.m * (1 - params.m):.4f})."),
        ("Iterations", str(model.n_iter_), "Passes of the kept restart." + ("" if model.converged_ else " Did not converge.")),
        ("Fit time", f"{ctx.outcome.seconds:.2f} s", "Time of the fit when it was computed; a cached setting is shown at once."),
    ]


def fit_summary(ctx, *, truth: bool = True) -> None:
    """One line of metrics on the current fit, its agreement with a planted truth (``truth``), and its notes."""
    if ctx.model is None:
        return
    for column, (label, value, help_text) in zip(st.columns(6), fit_numbers(ctx), strict=True):
        column.metric(label, value, help=help_text)
    if truth:
        truth_line(ctx)
    for message in ctx.outcome.notes + list(ctx.notes):
        note(message)


def page_header(title: str):
    """A compact page title with a slot to its right (for the fit's status line), drawn before the page waits
    for anything; returns the slot."""
    left, right = st.columns([1.3, 5], vertical_alignment="center")
    left.subheader(title, anchor=False)
    return right


def fit_header(ctx) -> None:
    """The fit's numbers in one line and its notes folded behind a button, under :func:`page_header`: so that the
    figure below starts high on the screen (Tune & see at 1280 × 720)."""
    if ctx.model is None:
        return
    numbers, notes_slot = st.columns([5, 1], vertical_alignment="center")
    numbers.container(key="fit_numbers").markdown(" · ".join(
        f"{label} **{esc(value)}**" for label, value, _ in fit_numbers(ctx)
    ), help="\n\n".join(f"{label}: {help_text}" for label, _, help_text in fit_numbers(ctx) if help_text))
    messages = ctx.outcome.notes + list(ctx.notes)
    if messages:
        with notes_slot.popover(f"{len(messages)} note{'s' if len(messages) > 1 else ''}", icon=":material/info:",
                                use_container_width=True):
            for message in messages:
                note(message)


def truth_line(ctx) -> None:
    """For data with planted clusters and subspaces: how far the fit reproduces them, as numbers."""
    agreement = truth_agreement(ctx.model, ctx.data) if ctx.data is not None else None
    if agreement is None:
        return
    n = agreement["n_planted"]
    text = (f"Agreement with the planted truth: **{agreement['clusters_matched']} of {n} clusters matched**, "
            f"**{agreement['masks_equal']} of {n} masks equal** (ARI {agreement['ari']:.2f}"
            + (f"; {agreement['n_found']} clusters found" if agreement["n_found"] != n else "") + ").")
    if agreement["exact"]:
        st.success(text + " The figure of the paper is reproduced.", icon=":material/verified:")
    else:
        st.warning(text, icon=":material/difference:")
