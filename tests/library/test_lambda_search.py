"""The λ search's state machine asks for the fits of the sequential bracket-then-bisect search, in its order.

``reference_search`` is the search as it was written before it became a
state machine (one loop per phase); for any K(λ), monotone or not, both must
try the same λ values in the same order. The estimator's search then runs
some fits ahead on spare threads, and must keep the same λ and runs.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from craft import CRAFT, datasets
from craft._lambda_search import SearchStep


def reference_search(k_of, start: float, target: int) -> list[float]:
    """The λ values the sequential search evaluates, for a K(λ) function ``k_of``."""
    tried = []

    def evaluate(lam):
        tried.append(lam)
        return k_of(lam)

    found = evaluate(start)
    low = high = None
    if found == target:
        return tried
    if found > target:
        low, lam = start, start
        for _ in range(40):
            lam *= 2.0
            found = evaluate(lam)
            if found <= target:
                high = lam
                break
            low = lam
    else:
        high, lam = start, start
        for _ in range(40):
            lam /= 2.0
            found = evaluate(lam)
            if found >= target:
                low = lam
                break
            high = lam
    if found != target and low is not None and high is not None:
        for _ in range(30):
            lam = float(np.sqrt(low * high))
            found = evaluate(lam)
            if found == target:
                break
            if found > target:
                low = lam
            else:
                high = lam
            if high / low < 1.0 + 1e-6:
                break
    return tried


def machine_search(k_of, start: float, target: int) -> list[float]:
    tried = []
    step = SearchStep("start", start)
    while not step.done:
        tried.append(step.lam)
        step = step.after(k_of(step.lam), target)
    return tried


@settings(max_examples=300, deadline=None)
@given(
    cuts=st.lists(st.floats(-12, 12), min_size=0, max_size=8),
    noise=st.lists(st.integers(-2, 2), min_size=9, max_size=9),
    start=st.floats(-8, 8),
    target=st.integers(1, 8),
)
def test_the_state_machine_tries_the_sequential_searchs_values(cuts, noise, start, target):
    # K(λ) falls by one at every cut (log λ), plus a bounded wobble: K is not strictly monotone, as in real fits.
    cuts = sorted(cuts)

    def k_of(lam):
        passed = int(np.searchsorted(cuts, np.log(lam)))
        return max(1, len(cuts) + 1 - passed + noise[passed])

    assert machine_search(k_of, float(np.exp(start)), target) == reference_search(k_of, float(np.exp(start)), target)


def test_the_successors_are_the_steps_either_outcome_leads_to():
    step = SearchStep("start", 8.0)
    up, down = step.successors(3)
    assert (up.phase, up.lam, down.phase, down.lam) == ("up", 16.0, "down", 4.0)
    assert step.after(3, 3).done


def test_fits_run_ahead_keep_the_sequential_result():
    X, _ = datasets.load("soybean")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [CRAFT(m=0.5, k=k, random_state=seed, n_jobs=n_jobs).fit(X)
                for k in (3, 6, 12) for seed in (0, 1) for n_jobs in (1, 3)]
    for one, ahead in zip(fits[::2], fits[1::2], strict=True):
        assert one.lam_ == ahead.lam_
        np.testing.assert_array_equal(one.labels_, ahead.labels_)
        assert one.objective_ == ahead.objective_
