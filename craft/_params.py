"""The estimator's parameters: each one's rule, the limits that keep a fit's work bounded, and ``cluster_limit``.

``CRAFT._validated_options`` checks every constructor parameter against its
rule in :data:`_PARAMETER_RULES` once, at the start of ``fit``, and names
the rule in its message; ``DaskCRAFT`` adds rules of its own with the same
:class:`_Rule`. The limits (:data:`MAX_CLUSTERS`, :data:`MAX_N_INIT`,
:data:`MAX_ITER`, :func:`cluster_limit`) are fixed, so that a call passes or
fails the same way on every machine (``docs/numerics.md``, *Parameters that
make the work explode*).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Mapping

import numpy as np

from .encoding import MISSING_MODES
from .exceptions import CraftInputError


@dataclasses.dataclass(frozen=True)
class _Rule:
    """One declarative constraint on a constructor parameter."""

    check: Callable[[object], bool]
    text: str


def _number(low=None, high=None, *, low_open=True, high_open=True, integer=False, none=False, why=""):
    def check(value):
        if value is None:
            return none
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if integer and not isinstance(value, numbers.Integral):
            return False
        if not np.isfinite(float(value)):
            return False
        if low is not None and (value <= low if low_open else value < low):
            return False
        if high is not None and (value >= high if high_open else value > high):
            return False
        return True

    kind = "an integer" if integer else "a number"
    bounds = []
    if low is not None:
        bounds.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        bounds.append(f"{'<' if high_open else '<='} {high}")
    text = f"{kind} {' and '.join(bounds)}".strip() + (" or None" if none else "") + (f" ({why})" if why else "")
    return _Rule(check, text)


def _one_of(*options):
    return _Rule(lambda value: isinstance(value, str) and value in options, "one of " + ", ".join(map(repr, options)))


def _random_state(value):
    return value is None or isinstance(value, (numbers.Integral, np.random.Generator, np.random.RandomState)) and not isinstance(value, bool)


#: Most clusters a fit may have. Beyond it per-cluster feature masks summarise
#: nothing, and every pass costs rows x clusters x features (see :func:`cluster_limit`).
MAX_CLUSTERS = 1_000
#: Most restarts and passes per run: a fit costs their product times a pass.
MAX_N_INIT = 1_000
MAX_ITER = 10_000
#: Smallest ``smoothing``: the cost of a level a cluster has not seen is
#: ``-log(smoothing * eta0 / (n_k + smoothing))``, with eta0 >= 1/N; at 1e-6 it
#: stays below about 60 nats for a billion rows, while at 5e-324 the product
#: underflows to 0, its log is -inf, and 0 x -inf makes the objective NaN.
MIN_SMOOTHING = 1e-6
#: Most threads ``n_jobs`` may name: a restart is a thread's whole task, and ``MAX_N_INIT`` bounds the restarts.
MAX_THREADS = MAX_N_INIT


_LIMIT_RULE = f"up to 100 clusters, or half the rows on larger tables, never more than {MAX_CLUSTERS:,}"


def cluster_limit(n_samples: int) -> int:
    """Most clusters a fit on ``n_samples`` rows may have.

    Half the rows (clusters of two rows on average) on tables of more than
    100 rows, and never more than :data:`MAX_CLUSTERS`; up to 100 rows any
    K <= N (such fits are cheap). A λ so small that nearly every row opens
    its own cluster makes every pass cost rows² x features and rarely
    converges; the fit is refused instead.
    """
    return min(MAX_CLUSTERS, max(n_samples // 2, min(n_samples, 100)))


_PARAMETER_RULES = {
    "m": _number(0, 1),
    # rho's range depends on m: prior_terms checks it, once, with a message that says why.
    "rho": _number(none=True),
    "lam": _number(0, None, none=True),
    "k": _number(
        1, MAX_CLUSTERS, low_open=False, high_open=False, integer=True, none=True,
        why="more clusters summarise nothing per cluster, and every pass costs rows x clusters x features",
    ),
    "k_method": _one_of("search", "farthest_first"),
    "budget": _one_of("fixed", "approximate"),
    "rho_selection": _one_of("paper", "shrink"),
    "eps_c": _number(0, 1),
    "eps_v": _number(0, None),
    "standardize": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "missing": _one_of(*MISSING_MODES),
    "max_iter": _number(
        1, MAX_ITER, low_open=False, high_open=False, integer=True,
        why="passes stop when no row changes cluster; runs converge in tens of passes",
    ),
    "n_init": _Rule(
        lambda value: value == "auto"
        or _number(1, MAX_N_INIT, low_open=False, high_open=False, integer=True).check(value),
        f"'auto' or an integer >= 1 and <= {MAX_N_INIT} (each restart is a whole fit)",
    ),
    "init": _one_of("craft++", "random"),
    "smoothing": _number(
        MIN_SMOOTHING, None, low_open=False,
        why="a smaller pseudo-count makes the cost -log(smoothing x global share / cluster size) of a level a "
        "cluster has not seen underflow to infinity",
    ),
    "min_variance": _number(0, None),
    "random_state": _Rule(_random_state, "None, an int or a numpy Generator"),
    "history_labels": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "noise": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    "warm_start": _Rule(lambda value: isinstance(value, (bool, np.bool_)), "True or False"),
    # Their keys name columns and clusters, which only the table and the previous fit know: checked in fit.
    "pins": _Rule(lambda value: value is None or isinstance(value, Mapping),
                  "None or a mapping from (cluster or None, column name) to True or False"),
    "must_link": _Rule(lambda value: _pairs_or_none(value), "None or a list of pairs of row positions"),
    "cannot_link": _Rule(lambda value: _pairs_or_none(value), "None or a list of pairs of row positions"),
    "n_jobs": _number(
        1, MAX_THREADS, low_open=False, high_open=False, integer=True, none=True,
        why="threads that run the restarts at once; None uses every core available",
    ),
}


def _pairs_or_none(value) -> bool:
    """Whether ``value`` is None or a sequence of pairs of integers (row positions; their range is checked in fit)."""
    if value is None:
        return True
    if isinstance(value, (str, bytes, Mapping)):
        return False
    try:
        pairs = list(value)
    except TypeError:
        return False
    return all(
        not isinstance(pair, (str, bytes)) and len(pair) == 2
        and all(isinstance(row, numbers.Integral) and not isinstance(row, bool) for row in pair)
        for pair in pairs
    )


def _check_callback(callback) -> None:
    """Refuse a ``fit(callback=...)`` that cannot be called, before any work."""
    if callback is not None and not callable(callback):
        raise CraftInputError(f"callback={callback!r} is invalid: it must be None or a callable.")
