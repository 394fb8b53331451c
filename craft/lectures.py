"""Lectures: small data sets that each make one point about clustering, with the point written out.

Each :class:`Lecture` holds its data (a generator of ``(X, y, true_mask)``
seeded by one integer), the CRAFT settings it fits, two or three sentences
that say what to look at, and a *claim*: a sentence with numbers that
:meth:`Lecture.measure` checks on one seed and :meth:`Lecture.holds` over
seeds 0-9 (``tests/library/test_lectures.py`` runs it). The app's Teach page reads
them (``explorer.lecture``); nothing here imports Streamlit.

The comparisons are what a class would run: scikit-learn's ``KMeans`` on
every standardized column (numbers) or on the one-hot levels (categories),
and CRAFT refitted with one setting changed. ARI is
:func:`craft.metrics.ari` against the planted clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import synthetic
from ._random import as_generator
from .estimator import CRAFT
from .exceptions import CraftInputError
from .metrics import ari, planted_agreement

__all__ = ["Lecture", "LECTURES", "SEEDS", "quiet_subspaces", "lecture"]

#: The seeds every claim is checked on: each seeds both the data and the fits.
SEEDS = tuple(range(10))


def quiet_subspaces(n_samples: int = 300, n_clusters: int = 3, n_quiet: int = 6, n_features: int = 30,
                    quiet_sd: float = 0.1, random_state=None):
    """Numeric clusters that differ only in *where they are quiet*, not in their means.

    Construction: ``n_samples`` rows in ``n_clusters`` equal blocks; every
    cell is N(0, 1) except that cluster ``k``'s rows are N(0, quiet_sd^2) on
    its own ``n_quiet`` features ``f{k n_quiet + 1} .. f{(k + 1) n_quiet}``.
    Every cluster has mean 0 on every feature, so a method that compares
    means over one common set of features (k-means on all of them) has
    nothing to separate; a cluster's own low-variance features, which
    CRAFT's per-cluster selection ranks first, separate it. For each
    cluster, the other clusters' quiet features are noise.

    Returns
    -------
    X : DataFrame (n_samples, n_features), columns ``f1 ..``
    y : ndarray of int64
    true_mask : ndarray of bool (n_clusters, n_features)

    Examples
    --------
    >>> X, y, mask = quiet_subspaces(random_state=0)
    >>> X.shape, mask.sum(axis=1).tolist()
    ((300, 30), [6, 6, 6])
    """
    if n_clusters * n_quiet > n_features:
        raise CraftInputError(f"{n_clusters} clusters of {n_quiet} quiet features need at least "
                              f"{n_clusters * n_quiet} features, not n_features={n_features}.")
    rng = as_generator(random_state)
    y = np.repeat(np.arange(n_clusters, dtype=np.int64), -(-n_samples // n_clusters))[:n_samples]
    true_mask = np.zeros((n_clusters, n_features), dtype=bool)
    for k in range(n_clusters):
        true_mask[k, k * n_quiet:(k + 1) * n_quiet] = True
    values = rng.standard_normal((n_samples, n_features)) * np.where(true_mask[y], quiet_sd, 1.0)
    return pd.DataFrame(values, columns=[f"f{j + 1}" for j in range(n_features)]), y, true_mask


def _kmeans_ari(X: pd.DataFrame, y: np.ndarray, k: int, seed: int) -> float:
    """k-means (10 restarts) on every column: numbers standardized, categories one-hot."""
    from sklearn.cluster import KMeans

    numeric = X.select_dtypes("number")
    parts = [((numeric - numeric.mean()) / numeric.std(ddof=0)).to_numpy()] if numeric.shape[1] else []
    categorical = X.drop(columns=numeric.columns)
    if categorical.shape[1]:
        parts.append(pd.get_dummies(categorical).to_numpy(dtype=np.float64))
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(np.hstack(parts)).labels_
    return ari(y, labels)


def _disagreeing(mask: np.ndarray) -> int:
    """Features on which the clusters do not all agree (0: one common set)."""
    return int((mask != mask[:1]).any(axis=0).sum())


@dataclass(frozen=True)
class Lecture:
    """One preset: data, settings, what to look at, and a claim checked over :data:`SEEDS`.

    Attributes
    ----------
    name : str
        Identifier (also the app's link value).
    title : str
    look_at : tuple of str
        Two or three sentences: what the class should look at.
    claim : str
        The point in numbers, as a sentence; :meth:`holds` checks it.
    settings : dict
        The CRAFT keyword arguments of the lecture's main fit (``random_state``
        is the seed).
    data : callable
        ``data(seed) -> (X, y, true_mask)``.
    compare : callable
        ``compare(X, y, true_mask, seed) -> dict`` of the numbers the claim
        names (one seed).
    holds_for : callable
        ``holds_for(list of dicts over seeds) -> bool``.
    """

    name: str
    title: str
    look_at: tuple[str, ...]
    claim: str
    settings: Mapping
    data: Callable
    compare: Callable = field(repr=False)
    holds_for: Callable = field(repr=False)

    def fit(self, seed: int = 0, **changes) -> tuple[CRAFT, pd.DataFrame, np.ndarray, np.ndarray]:
        """The lecture's main CRAFT fit on seed ``seed``'s data (``changes`` override settings)."""
        X, y, mask = self.data(seed)
        model = CRAFT(**{**self.settings, "random_state": seed, **changes}).fit(X)
        return model, X, y, mask

    def measure(self, seed: int) -> dict:
        """The numbers the claim names, on seed ``seed``."""
        X, y, mask = self.data(seed)
        return self.compare(X, y, mask, seed)

    def holds(self, seeds: Sequence[int] = SEEDS) -> tuple[bool, list[dict]]:
        """Whether the claim holds over ``seeds``, and the numbers of each seed."""
        numbers = [self.measure(seed) for seed in seeds]
        return bool(self.holds_for(numbers)), numbers


# ---------------------------------------------------------------------------
# The lectures

_QUIET = dict(m=0.2, k=3)


def _quiet(seed: int):
    return quiet_subspaces(random_state=seed)


def _noise_compare(X, y, mask, seed):
    model = CRAFT(**_QUIET, random_state=seed).fit(X)
    agreement = planted_agreement(y, mask, model.labels_, model.feature_mask_)
    return {"kmeans_ari": _kmeans_ari(X, y, 3, seed), "craft_ari": ari(y, model.labels_),
            "masks_equal": agreement["masks_equal"]}


def _rho_compare(X, y, mask, seed):
    out = {}
    m = _QUIET["m"]
    for share, tag in ((0.01, "common"), (0.99, "own")):
        model = CRAFT(**_QUIET, rho=share * m * (1 - m), rho_selection="shrink", random_state=seed).fit(X)
        out[f"{tag}_ari"] = ari(y, model.labels_)
        out[f"{tag}_disagree"] = _disagreeing(model.feature_mask_)
        out[f"{tag}_masks_equal"] = planted_agreement(y, mask, model.labels_, model.feature_mask_)["masks_equal"]
    return out


def _lam_compare(X, y, mask, seed):
    base = CRAFT(**_QUIET, random_state=seed).fit(X)
    out = {"lam3": base.lam_, "ari3": ari(y, base.labels_)}
    for factor, tag in ((0.3, "small"), (3.0, "large")):
        model = CRAFT(m=_QUIET["m"], lam=factor * base.lam_, random_state=seed).fit(X)
        out[f"{tag}_k"] = model.n_clusters_
        out[f"{tag}_smallest"] = int(np.bincount(model.labels_[model.labels_ >= 0]).min())
    return out


def _start_compare(X, y, mask, seed):
    base = CRAFT(**_QUIET, random_state=seed).fit(X)
    out = {"lam": _START_LAM * base.lam_}
    for n_init, tag in ((1, "one"), (10, "ten")):
        model = CRAFT(m=_QUIET["m"], lam=out["lam"], init="random", n_init=n_init, random_state=seed).fit(X)
        out[f"{tag}_ari"] = ari(y, model.labels_)
        out[f"{tag}_k"] = model.n_clusters_
    return out


#: The start lecture's λ as a share of λ₃: a little below it, so that a lucky start finds 3 clusters and an
#: unlucky one stays at 1 or opens too many (measured over seeds 0-9: 6 of 10 single starts miss).
_START_LAM = 0.8


#: The categorical lesson's decoys: copies of one unrelated two-level split, each cell flipped with this chance.
_DECOYS, _DECOY_FLIP = 16, 0.05
_CATEGORICAL = dict(m=0.2, k=3)


def _categorical_data(seed: int):
    """The paper's Figure 1(a) (3 clusters, 8 binary features each, 24 in all) beside 16 decoy columns.

    The decoys are 16 noisy copies (5 % of cells flipped) of one two-level split of the rows, drawn
    independently of the clusters: one fact recorded many times, as tables often hold (a code, its label, its
    group...). They are in no planted subspace.
    """
    X, y, mask = synthetic.fig1_binary(300, random_state=seed)
    rng = np.random.default_rng([seed, 9])
    split = rng.random(len(X)) < 0.5
    decoys = pd.DataFrame({f"z{j + 1}": pd.Categorical(np.where(split ^ (rng.random(len(X)) < _DECOY_FLIP), "1", "0"))
                           for j in range(_DECOYS)})
    return pd.concat([X, decoys], axis=1), y, np.hstack([mask, np.zeros((mask.shape[0], _DECOYS), dtype=bool)])


def _categorical_compare(X, y, mask, seed):
    model = CRAFT(**_CATEGORICAL, random_state=seed).fit(X)
    agreement = planted_agreement(y, mask, model.labels_, model.feature_mask_)
    return {"kmeans_ari": _kmeans_ari(X, y, 3, seed), "craft_ari": ari(y, model.labels_),
            "masks_equal": agreement["masks_equal"]}


def _all(numbers, test) -> bool:
    return all(test(n) for n in numbers)


LECTURES: dict[str, Lecture] = {
    lecture.name: lecture for lecture in (
        Lecture(
            name="noise_features",
            title="Noise features defeat one global feature set",
            look_at=(
                "Three clusters with the same mean on every feature: each is quiet (standard deviation 0.1) on "
                "its own 6 of the 30 features and noisy (1) on the other 24.",
                "k-means compares every row with every centre on all 30 features, so the 24 noisy ones drown the "
                "6 that matter; its ARI stays near 0.",
                "Look at CRAFT's masks: each cluster keeps its own 6 features, and the clusters come back whole.",
            ),
            claim="k-means on all 30 features: ARI < 0.1; CRAFT: ARI > 0.95 (seeds 0–9).",
            settings=_QUIET,
            data=_quiet,
            compare=_noise_compare,
            holds_for=lambda ns: _all(ns, lambda n: n["kmeans_ari"] < 0.1 and n["craft_ari"] > 0.95),
        ),
        Lecture(
            name="rho",
            title="ρ: one common set, or a set per cluster",
            look_at=(
                "The same quiet-feature clusters, fitted with the 'shrink' rule at two values of ρ.",
                "At ρ = 0.01·m(1−m) every cluster ranks nearly the pooled scores, so the three keep nearly one "
                "common set of features; at 0.99·m(1−m) each keeps its own.",
                "Only the per-cluster sets are right here: no common set holds every cluster's quiet features, "
                "and the clusters built on it are wrong.",
            ),
            claim="ρ = 0.01·m(1−m): no planted mask recovered on any seed, ARI < 0.5 on at least 7 of 10; "
                  "ρ = 0.99·m(1−m): all 3 masks recovered and ARI > 0.95 on every seed (seeds 0–9).",
            settings={**_QUIET, "rho": 0.99 * 0.2 * 0.8, "rho_selection": "shrink"},
            data=_quiet,
            compare=_rho_compare,
            holds_for=lambda ns: (_all(ns, lambda n: n["common_masks_equal"] == 0 and n["own_masks_equal"] == 3
                                       and n["own_ari"] > 0.95)
                                  and sum(n["common_ari"] < 0.5 for n in ns) >= 7),
        ),
        Lecture(
            name="categorical",
            title="All categorical: one-hot k-means follows the loudest columns",
            look_at=(
                "Every column is categorical: the paper's Figure 1(a) (three clusters, 8 binary features each) "
                "beside 16 noisy copies of one unrelated yes/no split of the rows.",
                "One-hot k-means counts every mismatch alike, so the 16 copies that agree outvote the 8 features "
                "of each cluster: it splits the rows by the decoy.",
                "CRAFT's categorical cost keeps, per cluster, the features whose levels its rows share (entropy "
                "gain); inside a planted cluster the decoy is a coin toss, so it stays out of every mask.",
            ),
            claim="One-hot k-means: ARI < 0.55 on at least 9 of 10 seeds; CRAFT: ARI > 0.95 and the 3 planted "
                  "masks recovered on every seed (seeds 0–9).",
            settings=_CATEGORICAL,
            data=_categorical_data,
            compare=_categorical_compare,
            holds_for=lambda ns: (sum(n["kmeans_ari"] < 0.55 for n in ns) >= 9
                                  and _all(ns, lambda n: n["craft_ari"] > 0.95 and n["masks_equal"] == 3)),
        ),
        Lecture(
            name="lambda",
            title="λ too small and too large",
            look_at=(
                "λ is the price of a cluster: a point farther than λ + D F₀ from every cluster opens a new one.",
                "Take λ₃, the λ at which CRAFT finds the 3 planted clusters: at 0.3 λ₃ clusters open for "
                "small groups of rows; at 3 λ₃ no point is ever far enough, and everything stays in one.",
            ),
            claim="λ = 0.3 λ₃: at least 4 clusters; λ = 3 λ₃: exactly 1 cluster (seeds 0–9).",
            settings={"m": 0.2, "k": 3},
            data=_quiet,
            compare=_lam_compare,
            holds_for=lambda ns: _all(ns, lambda n: n["small_k"] >= 4 and n["large_k"] == 1),
        ),
        Lecture(
            name="start",
            title="The start matters: one restart against ten",
            look_at=(
                "The same data and the same λ (0.8 λ₃), fitted from the paper's random start: one cluster at a "
                "random point, then clusters open where points are far.",
                "Which points open clusters depends on where the run starts: one run may never open the others, "
                "or open too many.",
                "Ten restarts keep the run with the lowest objective, and that one finds the planted clusters.",
            ),
            claim="One start: ARI < 0.9 on at least 5 of 10 seeds; the best of ten restarts: ARI > 0.95 on at "
                  "least 9 of 10 and > 0.85 on all (seeds 0–9).",
            settings={"m": 0.2, "k": 3, "init": "random", "n_init": 1},
            data=_quiet,
            compare=_start_compare,
            holds_for=lambda ns: (sum(n["one_ari"] < 0.9 for n in ns) >= 5
                                  and sum(n["ten_ari"] > 0.95 for n in ns) >= 9
                                  and all(n["ten_ari"] > 0.85 for n in ns)),
        ),
    )
}


def lecture(name: str) -> Lecture:
    """The lecture called ``name``, or a :class:`CraftInputError` naming the choices."""
    try:
        return LECTURES[name]
    except KeyError:
        raise CraftInputError(f"Unknown lecture {name!r}; choose among {', '.join(LECTURES)}.") from None
