"""Every figure of :mod:`craft.plots`, drawn on the bundled examples, as canonical JSON.

:func:`gallery` fits small models on the paper's Figure 1-3 tables
(:mod:`craft.synthetic`) and on bundled tables (:mod:`craft.datasets`: zoo,
soybean, wine, credit-g; a ``noise=True`` fit and a pinned fit among them) and
draws every public figure function on them, the mask's, data heatmap's,
profiles', projection's, history's, comparison's, cards', stability's and mask
path's, several of them in each of their forms (one panel or two, with noise,
with pins, still or animated). :func:`canonical` writes a figure as JSON
with sorted keys and Python's own encoder, so the text depends only on the
figure.

``tests/library/test_plots_package.py`` compares the sha256 of each figure's text
with the digests recorded in ``tests/library/data/plots_figures.sha256.json`` before
the drawing code was split into the :mod:`craft.plots` package: moving code
must not change a single byte of what is drawn. Run this module to record
them again (only after a change that is meant to change a figure)::

    PYTHONPATH=$PWD python tests/library/plots_gallery.py --record
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from craft import CRAFT, datasets, plots, prior_terms, synthetic
from craft.cards import cluster_card
from craft.metrics import align_clusters, contingency, evaluate
from craft.path import fit_path
from craft.profiles import cluster_profiles
from craft.stability import bootstrap_stability, k_evidence

DIGESTS = Path(__file__).with_name("data") / "plots_figures.sha256.json"


def canonical(figure) -> str:
    """A figure's JSON with sorted keys, written by Python's ``json`` (never orjson, whose floats may differ).

    The layout's ``template`` is left out: no figure sets one, Plotly fills in
    the process's default (``plotly``, or ``streamlit`` once Streamlit is
    imported, as in the test session), which says nothing of the figure.
    """
    drawn = json.loads(figure.to_json(engine="json"))
    drawn.get("layout", {}).pop("template", None)
    return json.dumps(drawn, sort_keys=True, separators=(",", ":"))


def digest(figure) -> str:
    return hashlib.sha256(canonical(figure).encode("utf-8")).hexdigest()


def _fit(X, **params) -> CRAFT:
    return CRAFT(random_state=0, n_init=2, **params).fit(X)


def _table_figures(name: str, model: CRAFT, X: pd.DataFrame, y) -> Iterator[tuple[str, Callable]]:
    """The figures of one fitted table (named ``name/figure``), each as a function that draws it."""
    profiles = cluster_profiles(model)
    numeric, categorical = list(model.schema_.numeric), list(model.schema_.categorical)
    yield f"{name}/feature_masks", lambda: plots.fig_feature_masks(model)
    yield f"{name}/feature_masks_count", lambda: plots.fig_feature_masks(model, order="count", title="by count")
    yield f"{name}/data_heatmap", lambda: plots.fig_data_heatmap(model, X, max_rows=120)
    yield f"{name}/cluster_sizes", lambda: plots.fig_cluster_sizes(model)
    yield f"{name}/margins", lambda: plots.fig_margins(model.assign(X), n_clusters=model.n_clusters_, bins=12)
    for cluster in range(min(2, model.n_clusters_)):
        yield f"{name}/profile_overview_{cluster}", lambda c=cluster: plots.fig_profile_overview(
            profiles, c, budget=model.budget)
    if numeric:
        yield f"{name}/feature_detail_numeric", lambda: plots.fig_feature_detail(model, X, 0, numeric[0])
    if categorical:
        yield f"{name}/feature_detail_levels", lambda: plots.fig_feature_detail(model, X, 0, categorical[0])
    frame = plots.projection_frame(model, X, max_points=150)
    yield f"{name}/projection", lambda: plots.fig_projection(frame)
    yield f"{name}/projection_highlight", lambda: plots.fig_projection(
        frame, labels=np.roll(frame["cluster"].to_numpy(), 1), highlight=np.arange(len(frame)) % 7 == 0,
        title="earlier", highlight_name="picked")
    yield f"{name}/history", lambda: plots.fig_history(model, current=1)
    if y is not None:
        yield f"{name}/confusion", lambda: plots.fig_confusion(contingency(y, model.labels_))
    yield f"{name}/explanation", lambda: plots.fig_explanation(model.explain(X.iloc[:4]), 1, top=5)


def _figure_table(figure: str):
    maker = getattr(synthetic, figure)
    X, y, true_mask = maker(n_samples=120, random_state=0)
    return X, y, true_mask


def gallery() -> Iterator[tuple[str, Callable]]:
    """Every figure as (name, draw), in a fixed order; the fits are made as the generator runs."""
    from craft.plots import (
        fig_card_levels,
        fig_card_numeric,
        fig_jaccard,
        fig_k_evidence,
        fig_mask_path,
        fig_path_scrubber,
        fig_selection_frequency,
    )

    # The paper's Figure 1-3 tables, with their planted clusters and subspaces.
    for figure, params in (("fig1_binary", dict(k=3, m=1 / 3)), ("fig2_numeric", dict(k=3, m=1 / 3)),
                           ("fig3_categorical", dict(k=3, m=1 / 3))):
        X, y, true_mask = _figure_table(figure)
        model = _fit(X, **params)
        yield from _table_figures(figure, model, X, y)
        match = align_clusters(y, model.labels_)
        yield f"{figure}/feature_masks_planted", lambda m=model, t=true_mask, c=match: plots.fig_feature_masks(
            m, true_mask=t, cluster_match=c)
        yield f"{figure}/data_heatmap_planted", lambda m=model, X=X, y=y, t=true_mask: plots.fig_data_heatmap(
            m, X, max_rows=90, y_true=y, true_mask=t)
    X, y, true_mask = _figure_table("fig1_binary")
    fits = [_fit(X, k=3, m=m) for m in (0.2, 0.5)]
    yield "fig1_binary/mask_panels", lambda: plots.fig_mask_panels(
        [f.feature_mask_ for f in fits], ["m = 0.2", "m = 0.5"], features=list(X.columns), title="two fits")
    yield "fig1_binary/masks_array", lambda: plots.fig_feature_masks(
        np.asarray(fits[0].feature_mask_), features=list(X.columns), sizes=fits[0].cluster_sizes_, order="natural")
    pinned = _fit(X, k=3, m=1 / 3, pins={(None, X.columns[0]): True, (None, X.columns[-1]): False})
    yield "fig1_binary/feature_masks_pinned", lambda: plots.fig_feature_masks(pinned)

    # Bundled tables: binary and numeric (zoo), categorical (soybean), numeric (wine), mixed (credit-g).
    tables = {}
    for name, k in (("zoo", 7), ("soybean", 6), ("wine", 3), ("credit-g", 3)):
        X, y = datasets.load(name)
        model = _fit(X, k=k)
        tables[name] = (X, y, model)
        yield from _table_figures(name, model, X, y)
    X, y = datasets.load("wine")
    noisy = _fit(X, k=3, noise=True)
    yield "wine/noise_sizes", lambda: plots.fig_cluster_sizes(noisy)
    yield "wine/noise_sizes_counts", lambda: plots.fig_cluster_sizes([5, 3], n_noise=2, title="counts")
    yield "wine/noise_heatmap", lambda: plots.fig_data_heatmap(noisy, X, max_rows=80)
    yield "wine/noise_projection", lambda: plots.fig_projection(plots.projection_frame(noisy, X, max_points=100))
    yield "wine/noise_margins", lambda: plots.fig_margins(noisy.assign(X), bins=8)

    # Comparison, sweeps and the rho demonstration.
    X, y, _ = _figure_table("fig2_numeric")
    rows = []
    for value in (0.2, 0.4):
        for seed in (0, 1):
            fit = CRAFT(k=3, m=value, n_init=1, random_state=seed).fit(X)
            rows.append(dict(value=value, seed=seed, K=fit.n_clusters_, objective=fit.objective_, lam=fit.lam_,
                             seconds=0.0, **evaluate(y, fit.labels_)))
    sweep = pd.DataFrame(rows)
    yield "compare/sweep", lambda: plots.fig_sweep(sweep, "m", label="m (share selected)")
    yield "compare/sweep_unlabelled", lambda: plots.fig_sweep(sweep.drop(columns=["purity", "nmi", "ari"]), "lam")
    scored = pd.DataFrame(dict(method=["CRAFT", "k-means"], purity=[0.9, 0.7], nmi=[0.8, 0.5], ari=[0.75, -0.1],
                               K=[3, 3]))
    yield "compare/methods", lambda: plots.fig_compare(scored)
    yield "compare/methods_unscored", lambda: plots.fig_compare(scored.assign(purity=np.nan, nmi=np.nan, ari=np.nan))
    yield "compare/confusion_wide", lambda: plots.fig_confusion(
        pd.DataFrame(np.arange(12).reshape(3, 4), columns=["a <b>", "a long class name here", "c", "d"]), title="t")
    for m, rho in ((0.5, 0.1), (0.25, 0.02)):
        yield f"compare/rho_demo_{m}", lambda m=m, rho=rho: plots.fig_rho_demo(prior_terms(m, rho))

    # Cluster cards.
    X, _, model = tables["credit-g"]
    for cluster in range(2):
        card = cluster_card(model, X, cluster)
        yield f"cards/credit-g_numeric_{cluster}", lambda c=card: fig_card_numeric(c)
        yield f"cards/credit-g_levels_{cluster}", lambda c=card: fig_card_levels(c)
        yield f"cards/credit-g_levels_{cluster}_3", lambda c=card: fig_card_levels(c, max_levels=3)
    X, _, model = tables["wine"]
    yield "cards/wine_numeric", lambda: fig_card_numeric(cluster_card(model, X, 1))

    # Stability: bootstrap refits, seed-only refits, evidence on k.
    X, _, model = tables["zoo"]
    found = bootstrap_stability(model, X, n_resamples=3, random_state=0)
    yield "stability/zoo_selection_frequency", lambda: fig_selection_frequency(model, found)
    yield "stability/zoo_selection_frequency_natural", lambda: fig_selection_frequency(model, found, order="natural")
    yield "stability/zoo_jaccard", lambda: fig_jaccard(found)
    X, _, model = tables["wine"]
    seeds = bootstrap_stability(model, X, n_resamples=3, method="seed", random_state=0)
    yield "stability/wine_selection_frequency_seed", lambda: fig_selection_frequency(model, seeds)
    yield "stability/wine_jaccard_seed", lambda: fig_jaccard(seeds)
    evidence = k_evidence(dict(m=0.5, n_init=1, random_state=0), X, [2, 3, 4], n_resamples=2, random_state=0)
    yield "stability/wine_k_evidence", lambda: fig_k_evidence(evidence)
    yield "stability/wine_k_evidence_chosen", lambda: fig_k_evidence(evidence, chosen=3)

    # Mask path: k on Figure 1's table, m on zoo.
    X, _, _ = _figure_table("fig1_binary")
    _, path = fit_path(CRAFT(m=1 / 3, n_init=2, random_state=0), X, "k", [2, 3])
    yield "mask_path/fig1_k", lambda: fig_mask_path(path)
    yield "mask_path/fig1_k_order", lambda: fig_mask_path(path, order=list(range(len(path.features)))[::-1])
    yield "mask_path/fig1_k_scrubber", lambda: fig_path_scrubber(path)
    yield "mask_path/fig1_k_scrubber_still", lambda: fig_path_scrubber(path, at=2, slider=False)
    X, _, _ = tables["zoo"]
    _, path_m = fit_path(CRAFT(k=7, n_init=1, random_state=0), X, "m", [0.25, 0.5, 0.75])
    yield "mask_path/zoo_m", lambda: fig_mask_path(path_m)
    yield "mask_path/zoo_m_scrubber", lambda: fig_path_scrubber(path_m, at=0.5)


def digests() -> dict[str, str]:
    """The sha256 of every figure of :func:`gallery`'s canonical JSON, by name."""
    out: dict[str, str] = {}
    for name, draw in gallery():
        assert name not in out, f"two figures named {name}"
        out[name] = digest(draw())
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/library/plots_gallery.py --record")
    DIGESTS.parent.mkdir(exist_ok=True)
    recorded = digests()
    DIGESTS.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"{len(recorded)} figures recorded in {DIGESTS}")
