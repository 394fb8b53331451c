"""Start the app with its code already loaded: ``python -m explorer.serve [streamlit options]``.

``streamlit run app.py`` imports the app's modules (pandas, scikit-learn,
Plotly, numba) and loads CRAFT's compiled kernels during the first visitor's
first run: seconds on a small machine, every time the server starts. This
does both first, in the server's own process, then starts the same server
(``streamlit run app.py`` with the given options), so the first session after
a start is as quick as any later one. ``make run`` uses it.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def warm() -> None:
    """Import what the pages use, load the kernels and draw one small fit's figures."""
    import craft
    from craft import plots

    from . import figure_export, services

    craft.warm_up()
    # Whether figures can be exported on the server: the first answer imports kaleido (0.2 s of a first run).
    figure_export.server_export_available()
    data = services.load_example("fig1_binary", n_samples=60, seed=0)
    schema, _ = services.fit_schema(data, {}, data.label)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = services.fit_craft(data.table, schema, services.FitParams(k=3))
    model = outcome.model
    assert model is not None, outcome.error
    X = services.fitted_X(model, data.table)
    # Plotly loads its validators on first use: build and serialise the figures once.
    for figure in (plots.fig_feature_masks(model), plots.fig_data_heatmap(model, X),
                   plots.fig_projection(plots.projection_frame(model, X)), plots.fig_history(model)):
        figure.to_json()
    # What is loaded now lives as long as the server: keep it out of every later collection.
    gc.collect()
    gc.freeze()


def main(argv: list[str] | None = None) -> None:
    warm()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    # The app lists its pages with st.navigation (app.py). Because a pages/ folder exists, Streamlit would
    # serve the first session of a fresh server in its older folder mode until app.py has run once: a shared
    # link to a page then showed the file names ("app", "clusters", ...) in the sidebar instead of the titles.
    PagesManager.uses_pages_directory = False

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
