"""What-if: sweep one parameter; repeat over seeds to see how stable each cluster's features are."""

import streamlit as st

from craft import CraftInputError, plots
from explorer import cache, context, evidence, frame
from explorer.figure_export import chart
from explorer.services.whatif import SWEEPABLE, sweep_values
from explorer.ui import error

ctx = frame.current()
st.title("What-if")
model = context.require_model(ctx)
assert ctx.data is not None  # require_model stopped the page otherwise
params = ctx.params
y = ctx.y
results = st.session_state["results"]

DEFAULT_RANGES = {
    "m": (0.1, 0.9, 9), "k": (2, 8, 7), "lam": (max(model.lam_ / 10, 1e-6), model.lam_ * 10, 9),
    "rho": (0.1, 0.95, 8), "eps_c": (0.5, 0.95, 10), "eps_v": (0.1, 2.0, 10),
}

st.subheader("Sweep one parameter")
st.caption("Every other parameter stays as in the sidebar. For ρ the sweep runs over ρ/(m(1−m)) in (0, 1), "
           "so every value is valid; for ε_c and ε_v the budget is approximate.")
param = st.selectbox("Parameter", list(SWEEPABLE), format_func=SWEEPABLE.__getitem__, key="sweep_param")
low_default, high_default, steps_default = DEFAULT_RANGES[param]
with st.form("sweep_form"):
    a, b, c, d = st.columns(4)
    low = a.number_input("From", value=float(low_default), key=f"sweep_low_{param}", format="%.4g")
    high = b.number_input("To", value=float(high_default), key=f"sweep_high_{param}", format="%.4g")
    steps = c.number_input("Values", 2, 25, int(steps_default), key="sweep_steps")
    n_seeds = d.number_input("Seeds per value", 1, 10, 2, key="sweep_seeds")
    run_sweep = st.form_submit_button("Run the sweep", type="primary")

if run_sweep:
    try:
        values = sweep_values(param, low, high, int(steps))
    except CraftInputError as problem:
        error(str(problem))
    else:
        seeds = tuple(range(int(params.seed), int(params.seed) + int(n_seeds)))
        sweep_table = cache.sweep(ctx.data_key, ctx.label, param, tuple(values), seeds, params, ctx.data.table,
                                  ctx.schema, y)
        results["sweep"] = ((ctx.data_key, ctx.label), param, sweep_table)
stored = results.get("sweep")
if stored is not None and stored[0] == (ctx.data_key, ctx.label):
    _, swept, sweep_table = stored
    chart(plots.fig_sweep(sweep_table, swept, label=SWEEPABLE[swept]), key="sweep_fig", name=f"craft_sweep_{swept}")
    with st.expander("All runs"):
        st.dataframe(sweep_table, hide_index=True)
    for message in sweep_table["note"].dropna().unique():
        if message and message != "paper's default ρ for this m":
            error(message)
else:
    st.info("Set a range and press **Run the sweep**.")

st.subheader("Mask stability over seeds")
st.caption("The fit is repeated on every row with other seeds; each refit's clusters are matched to this fit's "
           "clusters by shared rows (clusterboot's Jaccard, one-to-one at 0.5 or more, as Evaluate's stability), "
           "and the heatmap shows how often each matched cluster selects each feature.")
with st.form("stability_form"):
    n_runs = st.slider("Refits (seeds)", 2, 20, 5, key="stability_runs")
    run_stability = st.form_submit_button("Run over seeds", type="primary")
if run_stability:
    try:
        found = cache.stability(ctx.key, int(n_runs), int(params.seed), model, ctx.X)
    except CraftInputError as problem:
        error(str(problem))
    else:
        results["stability"] = (ctx.key, found)
stored = results.get("stability")
if stored is not None and stored[0] == ctx.key:
    found = stored[1]
    chart(plots.fig_selection_frequency(model, found), key="stability_fig", name="craft_mask_stability")
    st.caption(found.summary())
    st.dataframe(evidence.stability_table(found), hide_index=True)
else:
    st.info("Press **Run over seeds** to measure how stable the masks are.")
