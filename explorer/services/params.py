"""Every knob of a CRAFT fit as one hashable value (:class:`FitParams`), and the app's one share → ρ conversion."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from craft.estimator import CRAFT


#: The estimator's own defaults: every parameter of the app starts from them.
ESTIMATOR_DEFAULTS: dict = CRAFT().get_params()


@dataclass(frozen=True)
class FitParams:
    """Every parameter of one CRAFT fit, as a hashable value (a cache key).

    Fields named like :class:`craft.CRAFT`'s parameters default to the
    estimator's own defaults (``CRAFT().get_params()``), so the app and the
    library cannot drift apart; nothing is validated here (the estimator
    does it, once, when it fits). The app's own fields are ``size_by``,
    ``k``, ``lam`` (the app always asks for k or gives λ, where the
    estimator's default is neither) and ``seed`` (an int, so that every
    view of the app is reproducible; the estimator's ``random_state``).

    Parameters
    ----------
    m, rho, rho_selection, k_method, budget, eps_c, eps_v, standardize, missing, n_init, max_iter, noise
        As in :class:`craft.CRAFT`. Build ``rho`` from a share of m(1-m)
        with :func:`rho_from_share`.
    size_by : {"k", "lambda"}
        Whether the number of clusters is asked for (``k``) or lambda is given.
    k : int
        Desired number of clusters (``size_by="k"``).
    lam : float
        Lambda (``size_by="lambda"``).
    seed : int
        The estimator's ``random_state``.

    Examples
    --------
    >>> FitParams(m=0.5, k=4).estimator_kwargs()["k"]
    4
    """

    m: float = ESTIMATOR_DEFAULTS["m"]
    rho: float | None = ESTIMATOR_DEFAULTS["rho"]
    size_by: str = "k"
    k: int = 3
    k_method: str = ESTIMATOR_DEFAULTS["k_method"]
    lam: float = 10.0
    budget: str = ESTIMATOR_DEFAULTS["budget"]
    eps_c: float = ESTIMATOR_DEFAULTS["eps_c"]
    eps_v: float = ESTIMATOR_DEFAULTS["eps_v"]
    standardize: bool = ESTIMATOR_DEFAULTS["standardize"]
    missing: str = ESTIMATOR_DEFAULTS["missing"]
    rho_selection: str = ESTIMATOR_DEFAULTS["rho_selection"]
    seed: int = 0
    n_init: int | str = ESTIMATOR_DEFAULTS["n_init"]
    max_iter: int = ESTIMATOR_DEFAULTS["max_iter"]
    noise: bool = ESTIMATOR_DEFAULTS["noise"]

    def replace(self, **changes) -> "FitParams":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def estimator_kwargs(self) -> dict:
        """Keyword arguments of :class:`craft.CRAFT` for these parameters."""
        kwargs = dict(
            m=self.m, rho=self.rho, rho_selection=self.rho_selection, budget=self.budget,
            standardize=self.standardize, missing=self.missing, random_state=self.seed,
            n_init=self.n_init, max_iter=self.max_iter,
        )
        if self.noise:
            kwargs["noise"] = True
        if self.size_by == "lambda":
            kwargs["lam"] = self.lam
        else:
            kwargs["k"] = self.k
            kwargs["k_method"] = self.k_method
        if self.budget == "approximate":
            kwargs["eps_c"] = self.eps_c
            kwargs["eps_v"] = self.eps_v
        return kwargs

    def to_dict(self) -> dict:
        """The parameters as plain JSON-ready values."""
        return dataclasses.asdict(self)


def rho_from_share(m: float, share: float) -> float:
    """ρ as ``share`` of its upper bound m(1-m): the app's one conversion.

    Every control that sets ρ through a share goes through here, so one
    (m, share) always gives the same ρ, hence the same cache key. The value
    is rounded to 12 decimals so that a share typed or computed twice gives
    the same float.

    Examples
    --------
    >>> rho_from_share(0.5, 0.2)
    0.05
    """
    return round(float(share) * float(m) * (1.0 - float(m)), 12)


def share_of_rho(m: float, rho: float) -> float:
    """The share of m(1-m) that ``rho`` is: :func:`rho_from_share` undone (up to its rounding).

    Examples
    --------
    >>> share_of_rho(0.5, rho_from_share(0.5, 0.2))
    0.2
    """
    return float(rho) / (float(m) * (1.0 - float(m)))
