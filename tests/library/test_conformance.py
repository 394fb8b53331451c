"""scikit-learn's estimator checks for every estimator the library exposes.

``.ci/run`` also runs this file in a small venv at the lowest scikit-learn
that ``pyproject.toml`` declares, so it must import nothing beyond pytest,
scikit-learn and craft's core (``parametrize_with_checks`` exists in every
version we support; ``check_estimator(..., on_fail=None)`` does not).
"""

import warnings

import pytest
from sklearn.utils._testing import create_memmap_backed_data
from sklearn.utils.estimator_checks import parametrize_with_checks

from craft import CRAFT
from craft.baselines import DPRF, DPMeans

# Every estimator at its defaults (λ by its own default rule): what a user who
# calls Estimator() gets must satisfy the checks. A seed for determinism, one
# restart for speed, and one k-driven variant.
ESTIMATORS = [
    CRAFT(random_state=0, n_init=1),
    DPMeans(),
    DPMeans(k=2, init="random", random_state=0),
    DPRF(random_state=0),
]


def _memmaps_an_estimator() -> bool:
    """Whether scikit-learn's test helper can memory-map an estimator here.

    Before scikit-learn 1.4 it takes an "aligned" path, which accepts arrays
    only, wherever threadpoolctl names OpenBLAS's architecture Prescott, as
    OpenBLAS 0.3.21-0.3.23 does on a CPU model it does not know (a virtual
    "Intel Xeon Processor"): ``check_estimators_pickle(readonly_memmap=True)``
    then fails inside the helper for every estimator, before ours is called.
    """
    try:
        create_memmap_backed_data(CRAFT())
    except ValueError:
        return False
    return True


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check, request):
    if "check_estimators_pickle(readonly_memmap=True)" in request.node.name and not _memmaps_an_estimator():
        pytest.skip("scikit-learn's memmap helper cannot map an estimator on this OpenBLAS (see _memmaps_an_estimator)")
    with warnings.catch_warnings():
        # Convergence and the k-not-reached warning are expected on the checks' random data.
        warnings.simplefilter("ignore")
        check(estimator)


def test_every_estimator_is_checked():
    """A new estimator in the library must be added above."""
    import craft.baselines

    assert {type(e) for e in ESTIMATORS} == {CRAFT, *(getattr(craft.baselines, name) for name in craft.baselines.__all__)}
