"""Teach: step through the iterations of a fit, with the paper's formulas filled in."""

import numpy as np
import streamlit as st

from craft import CraftInputError, plots, prior_terms
from craft.metrics import align_clusters
from explorer import cache, context, frame, lecture, mask_path
from explorer.figure_export import chart
from explorer.services.fitting import TEACH_ROWS, distance_table
from explorer.services.params import rho_from_share
from explorer.ui import RHO_SELECTION_HELP, esc, note

ctx = frame.current()
st.title("Teach: how CRAFT iterates")
if not lecture.section():  # the lecturer hid the rest of Teach from the audience's link
    st.stop()
model = context.require_model(ctx)
X = ctx.X
history = model.history_
terms = model.options_.terms
n_features = len(model.engine_features_)

st.markdown(
    "CRAFT (Algorithm 1 of the paper) repeats three steps until no point changes cluster:\n"
    "1. **Assign.** Every point goes to the cluster with the smallest distance $d_{nk}$ — unless even the "
    "smallest exceeds $\\lambda + D F_0$: then the point **opens a new cluster**.\n"
    "2. **Update** each cluster's means $\\zeta_k$, variances $\\sigma_k^2$ and level frequencies $\\eta_k$.\n"
    "3. **Select** each cluster's features $v_k$: numeric ones with the smallest variance, categorical ones with "
    "the largest entropy gain $G_d - G_{kd}$."
)
st.caption(f"This fit's kept restart ran {len(history)} iteration(s); λ = {model.lam_:.4g}, "
           f"m = {terms.m:g}, ρ = {terms.rho:.4g}, D = {n_features} features.")


#: The starts Teach can show: the fit on screen's, or the paper's (Algorithm 1: one cluster, then clusters open).
STARTS = {"fit": "The fit on screen", "paper": "The paper's start: one cluster, then clusters open"}


def _start_choice():
    """The fit whose iterations are shown, its cache key and how its first pass started (in words)."""
    seeded = model.init != "random"
    start = st.radio("Start", list(STARTS), key="teach_start", horizontal=True, format_func=STARTS.__getitem__,
                     help="CRAFT's default start (init='craft++') opens clusters at far points before the first "
                          "pass, as k-means++ does; the paper's (init='random') starts with one cluster at a random "
                          "point and lets the passes open the others. The second is refitted here with the same "
                          "parameters and seed.") if seeded else "fit"
    if start == "fit":
        how = ("starts from the clusters seeded before the first pass (init='craft++': far points drawn in "
               "proportion to their CRAFT distance" + (", as many as the k asked for" if ctx.params.size_by == "k"
                                                      else "") + "), every point labelled 0 until the pass"
               if seeded else "starts from the paper's initial state: one cluster, every point in it")
        return model, ctx.key, how
    if ctx.params.noise:
        note("The paper's start cannot be shown with noise rows on: noise needs the seeded start (its passes label "
             "far rows noise instead of opening clusters). The fit on screen is shown.")
        return model, ctx.key, "starts from the clusters seeded before the first pass (init='craft++')"
    outcome = cache.paper_start(ctx.key, model, X)
    if outcome.model is None:
        note(f"The paper's start could not be fitted: {outcome.error} The fit on screen is shown.")
        return model, ctx.key, "starts from the clusters seeded before the first pass (init='craft++')"
    return outcome.model, f"{ctx.key}|paper_start", "starts from the paper's initial state: one cluster at a " \
                                                      "random point, every point in it"


@st.fragment
def step_view() -> None:
    model, key, how = _start_choice()
    history = model.history_
    if model is not ctx.model:
        st.caption(f"The paper's start ran {len(history)} iteration(s) with λ = {model.lam_:.4g} and found K = "
                   f"{model.n_clusters_} (the fit on screen: K = {ctx.model.n_clusters_}).")
    if len(history) > 1:
        if st.session_state.get("teach_iter", 0) > len(history):  # the other start ran fewer iterations
            st.session_state["teach_iter"] = len(history)
        t = st.slider("Iteration", 1, len(history), len(history), key="teach_iter")
    else:
        t = 1
        st.caption("The fit converged in one iteration.")
    record = history[t - 1]
    cols = st.columns(4)
    cols[0].metric("Clusters after the pass", record.n_clusters)
    cols[1].metric("Clusters opened", record.n_opened)
    cols[2].metric("Points that changed cluster", f"{record.n_changed:,}")
    cols[3].metric("Objective after the update", f"{record.objective:,.6g}")
    # The masks figure's title and camera name do not carry t: equal to the previous step's (once the selection
    # has settled), it is then left as it is in the browser instead of being drawn again.
    st.markdown(f"**After iteration {t} of {len(history)}**")
    left, right = st.columns(2)
    with left:
        figure = cache.figure(key, f"teach_masks_{t}", lambda: plots.fig_feature_masks(
            record.feature_mask, features=model.engine_features_, order="natural",
            title="Selected features after the iteration"))
        chart(figure, key="teach_masks", name=f"teach_masks_iteration_{t}", camera_name="teach_masks")
    if record.labels is None:
        note(f"Labels per iteration are not kept above {TEACH_ROWS:,} rows, so assignments and distances cannot be shown.")
        return
    with right:
        frame = cache.projection(key, 2000, model, X)
        labels_t = record.labels[frame["row"].to_numpy()]
        # The run starts with every point in cluster 0, so iteration 1's "changed" are the points it moved
        # out of cluster 0: the same count as the metric above (the engine's n_changed).
        before = history[t - 2].labels[frame["row"].to_numpy()] if t > 1 else np.zeros_like(labels_t)
        # Its rings differ from one iteration to the next, so it is drawn anew at every step anyway.
        figure = cache.figure(key, f"teach_assignments_{t}", lambda: plots.fig_projection(
            frame, labels=labels_t, highlight=labels_t != before,
            title=f"Assignments after iteration {t}<br>(ringed: changed cluster)"))
        chart(figure, key="teach_projection", name=f"teach_assignments_iteration_{t}")
        if t == 1:
            # The engine's n_changed of the first pass counts the points it put outside cluster 0 (every label
            # starts at 0), whichever start opened the clusters: the rings are those points.
            st.caption(f"Iteration 1 {how}: the ringed points are those the first pass put in a cluster other "
                       f"than 0 ({record.n_changed:,}, the count above); it opened {record.n_opened} cluster(s).")

    try:
        data = cache.encoded(key, model, X)
        state = cache.iteration_inspection(key, t, model, data)
    except CraftInputError as problem:
        note(str(problem))
        return
    st.subheader("The distance of one point to every cluster")
    st.latex(
        r"d_{nk} = \sum_{d \in Num} v_{kd}\frac{(x_{nd}-\zeta_{kd})^2}{2\sigma_{kd}^2}"
        r" + \sum_{d \in Cat:\,v_{kd}=1} -\log \eta_{kd x_{nd}}"
        r" + \sum_{d \in Cat:\,v_{kd}=0} -\log \eta_{0 d x_{nd}}"
        r" + \Big(\sum_{d=1}^{D} v_{kd}\Big) F_\Delta"
    )
    row = st.number_input("Row n", 0, len(X) - 1, 0, key="teach_row")
    table = distance_table(model, data, state, int(row))
    # A static table, not a data grid: a handful of rows, drawn again at every step (the grid's canvas cost
    # a step 10-20 ms in the browser).
    st.table(
        table.rename(columns={"numeric": "numeric part", "categorical_selected": "selected categorical",
                              "categorical_global": "unselected categorical", "feature_control": "|v_k| F_Δ",
                              "total": "d_nk", "n_selected": "|v_k|"}),
        hide_index=True,
    )
    best = int(table["total"].idxmin())
    parts = table.iloc[best]
    st.latex(
        rf"d_{{{int(row)},{best}}} = {parts['numeric']:.4g} + {parts['categorical_selected']:.4g}"
        rf" + {parts['categorical_global']:.4g} + {parts['feature_control']:.4g} = {parts['total']:.4g}"
    )
    threshold = model.options_.threshold(n_features)
    st.latex(rf"\lambda + D F_0 = {model.lam_:.4g} + {n_features} \times {terms.f0:.4g} = {threshold:.4g}")
    if parts["total"] > threshold:
        st.markdown(f"Row {int(row)} is farther than λ + D F₀ from every cluster: the next pass would open a new "
                    "cluster at it.")
    else:
        st.markdown(f"The nearest cluster is **{best}**: the next pass assigns row {int(row)} to it "
                    f"(its distance {parts['total']:.4g} is below λ + D F₀ = {threshold:.4g}).")
    st.caption("These are the clusters after iteration "
               f"{t}'s update, i.e. the ones the next pass compares each point with.")

    st.subheader("The objective, term by term")
    st.latex(
        r"\underbrace{\sum_k \sum_{n \in k} \sum_{d \in Num} \frac{v_{kd}(x_{nd}-\zeta_{kd})^2}{2\sigma_{kd}^2}}_{\text{numeric}}"
        r" + \underbrace{\sum_k \sum_{n \in k} \sum_{d \in Cat} -\log \eta_{\cdot d x_{nd}}}_{\text{categorical}}"
        r" + \underbrace{(\lambda + D F_0) K}_{\text{regularization}}"
        r" + \underbrace{F_\Delta \sum_k \sum_d v_{kd}}_{\text{feature control}}"
    )
    p = state.objective
    st.latex(
        rf"= {p.numeric:.5g} + {p.categorical:.5g} + {threshold:.4g}\times{state.clusters.n_clusters}"
        rf" + ({terms.f_delta:.4g})\times{int(state.selection.selected.sum())} = {p.total:.6g}"
    )


step_view()

st.subheader("F₀ and F_Δ from m and ρ")
st.latex(
    rf"a_0 = \frac{{m^2(1-m)}}{{\rho}} - m = {terms.a0:.4g},\quad b_0 = \frac{{m(1-m)^2}}{{\rho}} + m = {terms.b0:.4g},"
    rf"\quad a_1 = a_0 + 1,\ b_1 = b_0 - 1"
)
st.latex(
    rf"F_0 = (a_0+b_0)\log(a_0+b_0) - a_0\log a_0 - b_0\log b_0 = {terms.f0:.5g},\qquad "
    rf"F_\Delta = F_1 - F_0 = {terms.f_delta:.5g}"
)
if abs(terms.f_delta) < 1e-12:
    st.caption("At m = 0.5, F_Δ is exactly 0: the feature-control term does nothing.")
elif terms.f_delta < 0:
    st.caption("For m above 0.5, F_Δ is negative: the feature-control term rewards selecting features.")


#: ρ values of the demonstration, as shares of m(1−m): near global, in between, the paper's side.
RHO_DEMO_SHARES = (0.001, 0.1, 0.5, 0.99)
#: Rows the demonstration refits at most (8 fits): a larger table is stepped through on a sample of this many.
RHO_DEMO_ROWS = 2_000
#: The masks at a few ρ are refitted and drawn for tables of at most this many fitted features.
RHO_DEMO_MAX_FEATURES = 500


@st.fragment
def rho_view() -> None:
    st.subheader("ρ: from global to cluster-specific selection")
    m = terms.m
    # The Beta prior needs 0 < ρ < m(1−m): the slider stays strictly inside.
    share = st.slider("ρ as a share of m(1−m)", 0.01, 0.99, float(np.clip(round(terms.own_weight, 2), 0.01, 0.99)),
                      step=0.01, key="teach_rho",
                      help="Moves the chart and the formula below it only; the masks further down are refitted "
                           "at four fixed shares.")
    shown = prior_terms(m, rho_from_share(m, share))
    chart(plots.fig_rho_demo(shown), key="teach_rho_fig", name="teach_rho_posterior_mean")
    st.latex(
        rf"\hat\nu_{{kd}} = m + \frac{{(v_{{kd}} - m)\rho}}{{m(1-m)}} = {m:.3g} + (v_{{kd}} - {m:.3g}) \times "
        rf"{shown.own_weight:.2f} = \begin{{cases}} {shown.selection_probability(1.0):.3f} & v_{{kd}} = 1 \\ "
        rf"{shown.selection_probability(0.0):.3f} & v_{{kd}} = 0 \end{{cases}}"
    )
    st.markdown(
        "As ρ → 0 every cluster's selection probability stays at m, whatever it selected; as ρ → m(1−m) it "
        "follows the cluster's own choice v_kd. **Whether this changes the masks depends on the selection "
        "rule** (sidebar, “ρ acts on”):\n\n"
        f"- **paper** — {esc(RHO_SELECTION_HELP['paper'])}\n"
        f"- **shrink** — {esc(RHO_SELECTION_HELP['shrink'])}\n\n"
        f"This fit uses the **{esc(model.rho_selection)}** rule with ρ = {esc(f'{terms.rho:.4g}')} "
        f"(share {terms.own_weight:.2f})."
    )


rho_view()


@st.fragment
def rho_masks_view() -> None:
    """The masks of this data and parameters refitted at a few ρ, under both selection rules."""
    st.subheader("The masks at a few values of ρ, under both rules")
    assert ctx.data is not None and ctx.schema is not None  # require_model stopped the page otherwise
    table, data_key, labels = ctx.data.table, ctx.data.key, model.labels_
    sampled = len(table) > RHO_DEMO_ROWS
    if sampled:
        # Eight fits of a large table take tens of seconds: the same fixed sample of rows for every one.
        rows = np.sort(np.random.default_rng(0).choice(len(table), RHO_DEMO_ROWS, replace=False))
        table, data_key, labels = table.iloc[rows], f"{data_key}:rows={RHO_DEMO_ROWS}", labels[rows]
    st.caption("The same data and parameters as the fit above, refitted at each ρ (shares of m(1−m); the slider "
               "above does not move them)"
               + (f", on a sample of {RHO_DEMO_ROWS:,} of the table's {len(ctx.data.table):,} rows (the same "
                  "rows for every fit)" if sampled else "")
               + "; each fit's clusters are matched to this fit's, columns are the features in table order, blue = "
               "selected. Under the paper's rule the masks stay cluster-specific at every ρ; under shrink they "
               "merge into one common set as ρ → 0.")
    n_features = len(model.feature_names_in_)
    if n_features > RHO_DEMO_MAX_FEATURES:
        note(f"Not drawn for this table: its {n_features:,} fitted features would need {2 * len(RHO_DEMO_SHARES)} "
             f"refits of every column, and panels that wide cannot be read. They are drawn for tables of at most "
             f"{RHO_DEMO_MAX_FEATURES} features; the ν̂ chart above shows what ρ does.")
        return
    for mode in ("paper", "shrink"):
        masks, titles, differing = [], [], []
        for share in RHO_DEMO_SHARES:
            params = ctx.params.replace(rho=rho_from_share(terms.m, share), rho_selection=mode)
            outcome = cache.fit(data_key, tuple(ctx.schema.numeric), tuple(ctx.schema.categorical), params,
                                table, ctx.schema)
            if outcome is None or outcome.model is None:
                note(f"ρ = {share:g}·m(1−m): {outcome.error if outcome else 'the fit was cancelled.'}")
                continue
            fitted = outcome.model
            # Rows in the order of the clusters of this page's fit they match (unmatched ones last).
            match = align_clusters(labels, fitted.labels_)
            order = np.argsort(np.where(match >= 0, match, match.size + np.arange(match.size)), kind="stable")
            masks.append(fitted.feature_mask_[order])
            titles.append(f"ρ = {share:g}·m(1−m)")
            differing.append((share, fitted.rho_, int((fitted.feature_mask_ != fitted.feature_mask_[0]).any(axis=0).sum()),
                              fitted.n_clusters_))
        if not masks:
            continue
        figure = plots.fig_mask_panels(masks, titles, features=list(model.feature_names_in_),
                                       title=f"ρ acts on: {mode}")
        chart(figure, key=f"rho_demo_{mode}", name=f"rho_demo_{mode}")
        st.caption(f"{mode}: clusters disagree on " + "; ".join(
            f"{d} feature(s) at ρ = {share:g}·m(1−m) = {rho:.3g} (K = {k})" for share, rho, d, k in differing
        ) + ".")


rho_masks_view()


@st.fragment
def mask_path_view() -> None:
    """The whole path: which features each cluster selects as m, k or ρ moves, clusters followed along it."""
    st.subheader("The mask path: the selection against one knob")
    st.markdown("As the lasso path draws each coefficient against its penalty, the mask path draws each cluster's "
                "selected features against m, k or ρ, so you see which selections hold whatever the knob and "
                "where clusters split or merge.")
    # Below the lecture, the path is not what a visitor came for: a long one waits for its button.
    mask_path.section(ctx, where="teach", ask_above_budget=True)


mask_path_view()
