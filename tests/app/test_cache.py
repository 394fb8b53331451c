"""The app's store of fits: bounded by bytes and entries, a copy per caller."""

from __future__ import annotations

import gc
import hashlib
import weakref

import numpy as np
import pandas as pd

from explorer import cache, services
from explorer.cache import SizedStore


def test_store_evicts_least_recently_used_beyond_its_bytes():
    store = SizedStore(max_bytes=3_500_000, max_entries=100)
    for name in "abc":
        store.put(name, np.zeros(100_000))  # ~800 kB pickled each
    assert len(store) == 3 and store.n_bytes < 3_500_000
    store.get("a")  # a becomes the most recent
    store.put("d", np.zeros(300_000))  # 2.4 MB: b and c must go
    assert store.get("b") is None and store.get("c") is None
    assert store.get("a") is not None and store.get("d") is not None
    assert store.n_bytes <= 3_500_000


def test_store_bounds_entries_skips_oversized_results_and_copies():
    store = SizedStore(max_bytes=10_000_000, max_entries=2)
    for name in "abc":
        store.put(name, [name])
    assert len(store) == 2 and store.get("a") is None
    store.put("huge", np.zeros(2_000_000))  # 16 MB > the whole budget: not kept
    assert store.get("huge") is None and len(store) == 2
    first = store.get("c")
    first.append("changed")
    assert store.get("c") == ["c"]  # every caller gets its own copy
    store.clear()
    assert len(store) == 0 and store.n_bytes == 0


def _upload(seed: int, rows: int = 300) -> bytes:
    """A different table for every seed: two groups, numbers and levels."""
    rng = np.random.default_rng(seed)
    group = rng.integers(2, size=rows)
    table = pd.DataFrame({"x": rng.normal(4.0 * group), "y": rng.normal(size=rows),
                          "c": np.where(group, "a", "b"), "d": rng.choice(list("pqrs"), rows)})
    return table.to_csv(index=False).encode()


def test_memory_levels_off_over_many_fits_of_different_uploads(monkeypatch):
    """Twenty-four different uploads, each read, fitted and drawn as the Tune & see page does.

    The server grew about 10 MB per fit of a 50,000-row upload: Streamlit's own caches, bounded only by
    entries, kept 64 figures of each kind, and the tables read and reports. With every cache bounded by
    bytes (scaled down here) the bytes held level off at the bounds, and no figure outlives its place in
    the cache (each is followed with a weak reference).
    """
    monkeypatch.setattr(cache.STORE, "max_bytes", 400_000)
    monkeypatch.setattr(cache.FIGURES, "max_bytes", 1_200_000)
    cache.STORE.clear()
    cache.FIGURES.clear()
    params = services.FitParams().replace(k=2, n_init=1)
    held: list = []
    figures: list[weakref.ref] = []
    try:
        for seed in range(24):
            content = _upload(seed)
            data = cache.load_upload(hashlib.sha256(content).hexdigest(), f"t{seed}.csv", content)
            schema, _ = services.fit_schema(data, {}, None)
            key = cache.fit_key(data.key, schema, params)
            outcome = services.fit_craft(data.table, schema, params)
            cache.STORE.put(key, outcome)  # as a finished background fit does
            model, X = outcome.model, services.fitted_X(outcome.model, data.table)
            table = cache.cluster_profiles(key, model)
            drawn = [*cache.profile_figures(key, 0, "x", model, X, table)[:2],
                     cache.masks_figure(key, "subspace", False, model, data),
                     cache.data_heatmap(key, "subspace", 400, False, model, X, data)]
            figures.extend(weakref.ref(figure) for figure in drawn)
            cache.projection(key, 4000, model, X)
            held.append(cache.STORE.n_bytes + cache.FIGURES.n_bytes)
        del drawn, model, X, table, outcome, data
        gc.collect()
        alive = [ref() for ref in figures if ref() is not None]
        assert len(figures) == 96 and 0 < len(alive) < 12, len(alive)  # only what the bound holds
        assert sum(cache.object_bytes(figure) for figure in alive) <= 1_200_000
    finally:
        cache.STORE.clear()
        cache.FIGURES.clear()
    assert max(held) <= 1_600_000 and held[-1] > 1_000_000  # filled up to the bounds, never beyond
    assert max(held[8:]) - min(held[8:]) < 400_000, held  # level from the ninth fit on


def test_the_cards_cost_matrices_cards_figures_and_exported_images_are_kept_by_bytes():
    """No cache of the app is bounded by entries only (issue 33): the Cluster cards' N x K cost matrix, card and
    figures, and figure_export's images, are kept in STORE / FIGURES, which count their bytes and evict by them."""
    import uuid

    import plotly.graph_objects as go

    from craft import CRAFT, datasets
    from explorer import cards, figure_export

    X, _ = datasets.load("zoo")
    model = CRAFT(k=3, n_init=1, random_state=0).fit(X)
    key = f"zoo-{uuid.uuid4()}"
    kept, held = cache.STORE.n_bytes, len(cache.FIGURES)
    costs = cards.costs(key, model, X)
    assert cache.STORE.n_bytes - kept >= costs.nbytes == len(X) * 3 * 8
    again = cards.costs(key, model, X)
    assert again is not costs and np.array_equal(again, costs)  # a copy per caller, as st.cache_data gave
    kept = cache.STORE.n_bytes
    card = cards.card(key, 0, model, X)
    assert cache.STORE.n_bytes > kept and card.cluster == 0
    shown = cards.figures(key, 0, card)
    assert len(cache.FIGURES) == held + 1 and cards.figures(key, 0, card) is shown  # shared, as st.cache_resource
    # The same decorator on a budget smaller than one matrix keeps nothing: bytes bound it, not a count.
    small = SizedStore(max_bytes=costs.nbytes // 2, max_entries=100)
    assert cache.kept_in(small)(cards.costs.__wrapped__)(key, model, X).shape == costs.shape and len(small) == 0

    assert not hasattr(figure_export.static_image, "cache_info")  # no lru_cache of its own
    if figure_export.server_export_available():
        spec = go.Figure(go.Bar(y=[1, uuid.uuid4().int % 1000])).to_json()
        image = figure_export.static_image(spec, "svg")
        assert len(cache.FIGURES) == held + 2 and figure_export.static_image(spec, "svg") is image
