"""The app's store of fits: bounded by bytes and entries, a copy per caller."""

from __future__ import annotations

import numpy as np

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
