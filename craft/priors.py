"""Constants of the CRAFT objective that depend only on the prior (m, rho).

The Beta prior on the per-cluster selection probability nu_kd has mean ``m``
and variance ``rho``. Its posterior point estimate and the entropy-like terms
F0 and F_Delta of the paper's objective (Eq. "ComputeF") follow from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .exceptions import CraftInputError


#: Smallest ``rho / (m(1-m))`` accepted. The Beta shapes a + b = m(1-m)/rho then stay below 1e9, so
#: F_Delta = F(1) - F(0), a difference of two numbers of that size, keeps about six digits in double
#: precision; smaller shares lose them, and below about 1e-308 the shapes overflow. Selection is already
#: global (every cluster pulled to the pooled choice) long before this share.
MIN_OWN_WEIGHT = 1e-9


def default_rho(m: float) -> float:
    """The paper's default ``rho = max(0.01, m(1-m) - 0.01)``.

    When ``m(1 - m) <= 0.01`` (m below about 0.0101 or above about 0.9899)
    that default is not inside ``(0, m(1-m))``; it is then halved into range
    (``m(1-m)/2``) so that the Beta prior stays proper.
    """
    upper = m * (1.0 - m)
    rho = max(0.01, upper - 0.01)
    return rho if rho < upper else upper / 2.0


def _xlogx(value: float) -> float:
    return value * math.log(value) if value > 0 else 0.0


@dataclass(frozen=True)
class PriorTerms:
    """Shape parameters and objective constants for one (m, rho) pair.

    Attributes
    ----------
    m, rho : float
        Prior mean and variance of nu_kd.
    a0, b0, a1, b1 : float
        Beta shape parameters of nu_kd's posterior for v_kd = 0 and v_kd = 1.
    f0 : float
        F(0), paid ``D`` times per cluster (regularisation term).
    f_delta : float
        F(1) - F(0), paid once per selected feature of a cluster. It is zero
        at m = 0.5 and negative above it (see ``docs/numerics.md``).
    """

    m: float
    rho: float
    a0: float
    b0: float
    a1: float
    b1: float
    f0: float
    f_delta: float

    @property
    def own_weight(self) -> float:
        """``rho / (m(1-m))``: the weight of a cluster's own ``v`` in the posterior mean of nu.

        ``a/(a+b) = m + own_weight * (v - m)`` (Supplementary, "Setting rho");
        it lies in (0, 1), near 1 for cluster-specific and near 0 for global
        selection.
        """
        return self.rho / (self.m * (1.0 - self.m))

    def selection_probability(self, share_selected):
        """Posterior mean of nu given the share of clusters that select a feature.

        This is the paper's Bernoulli parameter for a new cluster's ``v``:
        ``sum_j a_{v_jd} / sum_j (a_{v_jd} + b_{v_jd})``, which, because
        ``a + b = m(1-m)/rho`` for both values of v, equals
        ``(a0 + share) / (a0 + b0)``.
        """
        return (self.a0 + share_selected) / (self.a0 + self.b0)


def prior_terms(m: float, rho: float | None = None) -> PriorTerms:
    """Compute F0, F_Delta and the Beta shapes of the paper for (m, rho).

    Parameters
    ----------
    m : float
        Fraction of features per cluster, in (0, 1).
    rho : float or None
        Prior variance in (0, m(1-m)), at least ``MIN_OWN_WEIGHT * m(1-m)``
        (below it F_Delta loses its digits and the Beta shapes overflow);
        None takes :func:`default_rho`.

    Returns
    -------
    PriorTerms

    Raises
    ------
    CraftInputError
        If m or rho is out of range.

    Examples
    --------
    >>> terms = prior_terms(0.5)
    >>> round(terms.f_delta, 12)
    0.0
    """
    if not (0.0 < m < 1.0):
        raise CraftInputError(f"m={m!r} must lie strictly between 0 and 1.")
    upper = m * (1.0 - m)
    if rho is None:
        rho = default_rho(m)
        if not (0.0 < rho < upper):
            # m so close to 0 or 1 that m(1-m) leaves no room for any rho in
            # double precision: the fault is m's, and the message says so.
            raise CraftInputError(
                f"m={m!r} is too close to {0 if m < 0.5 else 1} for the Beta prior: m(1-m)={upper:.6g} leaves no "
                f"room for the prior variance rho in double precision; use m between 1e-6 and 1 - 1e-6."
            )
    if not (0.0 < rho < upper):
        # The one check of rho's range (the estimator validates through here):
        # the message says what the bound means, for the app as for a notebook.
        raise CraftInputError(
            f"rho={rho!r} must lie strictly between 0 and m(1-m)={upper:.6g} for m={m:.6g}: the Beta prior on "
            f"the selection probability needs 0 < rho < m(1-m). Values near {upper:.4g} give cluster-specific "
            f"selection, values near 0 global selection."
        )
    if rho < MIN_OWN_WEIGHT * upper:
        raise CraftInputError(
            f"rho={rho!r} is too small for m={m:.6g}: rho/(m(1-m)) = {rho / upper:.3g} is below {MIN_OWN_WEIGHT:g}, "
            f"where the Beta prior's shapes m(1-m)/rho grow beyond 1e9 and F_Delta loses its digits in double "
            f"precision; use rho >= {MIN_OWN_WEIGHT * upper:.3g} (values that small already give global selection)."
        )
    a0 = m * m * (1.0 - m) / rho - m
    b0 = m * (1.0 - m) ** 2 / rho + m
    if not (0.0 < a0 < math.inf and 0.0 < b0 < math.inf):
        raise CraftInputError(
            f"m={m!r} with rho={rho:.6g} gives Beta shapes a={a0:.6g}, b={b0:.6g} that are not positive and finite "
            f"in double precision (m*m underflows); use m between 1e-6 and 1 - 1e-6."
        )
    a1, b1 = a0 + 1.0, b0 - 1.0
    f0 = _xlogx(a0 + b0) - _xlogx(a0) - _xlogx(b0)
    f1 = _xlogx(a1 + b1) - _xlogx(a1) - _xlogx(b1)
    return PriorTerms(m=m, rho=rho, a0=a0, b0=b0, a1=a1, b1=b1, f0=f0, f_delta=f1 - f0)
