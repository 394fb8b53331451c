"""Every lecture's claim holds over seeds 0-9 (craft.lectures), and its data and text are what it says."""

from __future__ import annotations

import numpy as np
import pytest

from craft import CraftInputError
from craft.lectures import LECTURES, SEEDS, lecture, quiet_subspaces


@pytest.mark.parametrize("name", list(LECTURES))
@pytest.mark.slow  # ten seeds of every lesson: in `make test`, not `make test-fast`
def test_lecture_claim_holds_over_seeds_0_to_9(name):
    holds, numbers = LECTURES[name].holds(SEEDS)
    assert holds, f"{name}: {LECTURES[name].claim} does not hold: {numbers}"


def test_lectures_are_at_least_five_with_two_or_three_sentences():
    assert len(LECTURES) >= 5
    for item in LECTURES.values():
        assert 2 <= len(item.look_at) <= 3 and item.claim and item.title


def test_quiet_subspaces_have_equal_means_and_quiet_own_features():
    X, y, mask = quiet_subspaces(n_samples=3000, random_state=0)
    means = X.groupby(y).mean().to_numpy()
    sds = X.groupby(y).std().to_numpy()
    assert np.abs(means).max() < 0.1  # k-means has no mean to separate
    assert np.allclose(sds[mask], 0.1, atol=0.02) and np.allclose(sds[~mask], 1.0, atol=0.1)
    same = quiet_subspaces(random_state=0)[0]
    assert same.equals(quiet_subspaces(random_state=0)[0])


def test_unknown_lecture_and_impossible_layout_say_why():
    with pytest.raises(CraftInputError, match="choose among"):
        lecture("nope")
    with pytest.raises(CraftInputError, match="at least 18 features"):
        quiet_subspaces(n_features=10)
