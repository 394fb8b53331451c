"""Must-link and cannot-link constraints (``CRAFT(must_link=..., cannot_link=...)``): always met in ``labels_``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from craft import CRAFT, CraftInputError, datasets


def _fit(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CRAFT(**params).fit(X)


def assert_links_met(labels, must, cannot):
    for a, b in must:
        assert labels[a] == labels[b], (a, b)
    for a, b in cannot:
        assert labels[a] != labels[b], (a, b)


@st.composite
def linked_tables(draw):
    n = draw(st.integers(12, 60))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "x": rng.normal(size=n) + 4.0 * (np.arange(n) % 3),
        "y": rng.normal(size=n),
        "c": rng.choice(["a", "b", "c"], n),
    })
    rows = st.integers(0, n - 1)
    must = draw(st.lists(st.tuples(rows, rows).filter(lambda p: p[0] != p[1]), max_size=6))
    cannot = draw(st.lists(st.tuples(rows, rows).filter(lambda p: p[0] != p[1]), max_size=6))
    # Drop cannot-links inside a must-link component: those are contradictions (tested apart).
    parent = list(range(n))

    def root(r):
        while parent[r] != r:
            r = parent[r]
        return r

    for a, b in must:
        parent[root(a)] = root(b)
    cannot = [(a, b) for a, b in cannot if root(a) != root(b)]
    return X, must, cannot, seed


@settings(max_examples=40, deadline=None)
@given(case=linked_tables(), sizing=st.sampled_from([{"k": 2}, {"k": 3}, {"lam": 3.0}, {}]))
def test_every_link_is_met_on_random_tables(case, sizing):
    X, must, cannot, seed = case
    model = _fit(X, random_state=seed, must_link=must, cannot_link=cannot, n_init=3, **sizing)
    assert_links_met(model.labels_, must, cannot)
    assert np.array_equal(model.cluster_sizes_, np.bincount(model.labels_, minlength=model.n_clusters_))


def test_must_link_joins_rows_of_two_clusters_and_cannot_link_parts_two_of_one():
    X, _ = datasets.load("zoo")
    free = _fit(X, k=5, random_state=0)
    a, b = int(np.flatnonzero(free.labels_ == 0)[0]), int(np.flatnonzero(free.labels_ == 1)[0])
    c = int(np.flatnonzero(free.labels_ == 0)[1])
    linked = _fit(X, k=5, random_state=0, must_link=[(a, b)], cannot_link=[(a, c)])
    assert_links_met(linked.labels_, [(a, b)], [(a, c)])
    # The constraints cost something: the constrained optimum is no better than the free one.
    assert linked.objective_ >= free.objective_ - 1e-9 * abs(free.objective_)


def test_a_unit_every_cluster_bars_opens_its_own():
    # Four rows pairwise apart, one cluster's worth of data (λ huge): three must open clusters of their own.
    X = pd.DataFrame({"x": [0.0, 0.1, 0.2, 0.3, 0.15, 0.05]})
    apart = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    model = _fit(X, lam=1e6, init="random", random_state=0, cannot_link=apart)
    assert len(set(model.labels_[:4])) == 4
    assert_links_met(model.labels_, [], apart)


def test_contradictions_are_refused_naming_the_pair():
    X, _ = datasets.load("zoo")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"must_link": [(0, 1)], "cannot_link": [(1, 0)]}, r"Rows \(0, 1\) are both must-linked and cannot-linked"),
        ({"must_link": [(0, 1), (1, 2)], "cannot_link": [(0, 2)]}, "rows 0 and 2 are cannot-linked but must-linked through a chain"),
        ({"must_link": [(0, 500)]}, r"must_link pair \(0, 500\) names a row beyond the table's 101 rows"),
        ({"cannot_link": [(3, 3)]}, r"pairs row 3 with itself"),
        ({"must_link": [(0, 1)], "noise": True}, "do not go with noise=True"),
        ({"must_link": [(0, "a")]}, "must_link=.* is invalid"),
        ({"cannot_link": "01"}, "cannot_link='01' is invalid"),
    ]
    for params, message in cases:
        with pytest.raises(CraftInputError, match=message):
            CRAFT(k=3, **params).fit(X)


def test_links_are_parameters_clone_keeps():
    model = CRAFT(must_link=[(0, 1)], cannot_link=[(2, 3)])
    params = clone(model).get_params()
    assert params["must_link"] == [(0, 1)] and params["cannot_link"] == [(2, 3)]


def test_dask_refuses_links():
    pytest.importorskip("distributed")
    from craft.distributed import DaskCRAFT

    with pytest.raises(CraftInputError, match="must_link=.* is invalid: it must be None"):
        DaskCRAFT(must_link=[(0, 1)])._validated_options()
