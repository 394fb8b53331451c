"""A literal, per-point transcription of the paper's Algorithm CRAFT, written from the paper alone.

It imports nothing from ``craft``: a misreading shared with the engine
cannot hide behind shared code. It

* encodes a small table itself (:func:`encode`): numeric columns
  standardized (population standard deviation; a constant column keeps scale
  1), categorical levels coded in sorted order;
* computes the prior terms itself from Eq. ComputeF (:class:`Prior`):
  ``a_0 = m^2(1-m)/rho - m``, ``b_0 = m(1-m)^2/rho + m``, ``a_1 = a_0 + 1``,
  ``b_1 = b_0 - 1``, ``F(v) = (a+b) log(a+b) - a log a - b log b``,
  ``F_0 = F(0)``, ``F_Delta = F(1) - F(0)``;
* draws a new cluster's ``v_d`` with the Algorithm's Bernoulli parameter in
  its Σ form, ``sum_j a_{v_jd} / sum_j (a_{v_jd} + b_{v_jd})`` over the
  clusters that exist at that moment;
* computes the paper's objective (numeric and categorical discrepancy,
  ``(lambda + D F_0) K``, ``F_Delta sum_k |v_k|``) after every iteration,
  summing over the points one by one;
* stops as the Algorithm says, "until cluster assignments do not change":
  a point's assignment is the *cluster* it is in (its identity), not an index
  after renumbering, so a pass that re-opens a cluster at the same outlier is
  a change.

Where the paper is silent it takes the choices ``docs/numerics.md``
documents (each a choice, not a reading): a categorical distribution is
smoothed towards the global one with a pseudo-count ``smoothing``; a numeric
variance is floored at ``min_variance`` times the feature's global variance;
empty clusters are dropped after each pass and the others keep their order;
the fixed budget is ``m |Num|`` and ``m |Cat|`` rounded half up; the raw
(unfloored) variance ranks numeric features; values equal to 10 significant
digits tie and ties go to the lower index (features) or the older cluster
(assignment). Slow on purpose: loops over points, clusters and features as
the pseudo-code reads. Logarithms are NumPy's, as the engine's: ``math.log``
can differ from ``np.log`` in the last bit, which turns an exact tie between
two clusters into a different winner.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np


def encode(table, numeric, categorical):
    """The table as the Algorithm's x: ``(numbers (N, P), level codes (N, Q), levels per feature)``."""
    numbers = np.empty((len(table), len(numeric)))
    for j, column in enumerate(numeric):
        values = np.asarray(table[column], dtype=float)
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((value - mean) ** 2 for value in values) / len(values))
        numbers[:, j] = (values - mean) / (spread if spread > 0 else 1.0)
    codes = np.empty((len(table), len(categorical)), dtype=np.int64)
    n_levels = []
    for q, column in enumerate(categorical):
        levels = sorted({str(value) for value in table[column]})
        position = {level: code for code, level in enumerate(levels)}
        codes[:, q] = [position[str(value)] for value in table[column]]
        n_levels.append(len(levels))
    return numbers, codes, n_levels


def _f(a, b):
    return (a + b) * math.log(a + b) - a * math.log(a) - b * math.log(b)


class Prior:
    """The Beta prior's shapes and the objective's constants, from Eq. ComputeF."""

    def __init__(self, m, rho=None):
        if rho is None:
            rho = max(0.01, m * (1 - m) - 0.01)  # the Algorithm's default
        self.m, self.rho = m, rho
        self.a0 = m * m * (1 - m) / rho - m
        self.b0 = m * (1 - m) ** 2 / rho + m
        self.f0 = _f(self.a0, self.b0)
        self.f_delta = _f(self.a0 + 1, self.b0 - 1) - self.f0

    def a(self, v):
        return self.a0 + v

    def b(self, v):
        return self.b0 - v

    def new_cluster_probability(self, existing, d):
        """``sum_j a_{v_jd} / sum_j (a_{v_jd} + b_{v_jd})`` over the existing clusters."""
        numerator = sum(self.a(int(c.v[d])) for c in existing)
        denominator = sum(self.a(int(c.v[d])) + self.b(int(c.v[d])) for c in existing)
        return numerator / denominator


_identity = itertools.count()


@dataclass
class LiteralCluster:
    mean: list  # P floats (zeta)
    var: list  # P floats (sigma^2, floored)
    eta: list  # Q arrays of level probabilities
    v: list  # D bools
    id: int = field(default_factory=lambda: next(_identity))


@dataclass
class Iteration:
    labels: np.ndarray  # cluster index of every point, clusters in their order
    objective: float
    masks: np.ndarray  # (K, D) bool
    n_opened: int
    reassigned: int  # points whose cluster (identity) changed in the pass
    reassigned_to_opened: int  # of those, the points now in a cluster opened in the pass


@dataclass
class LiteralRun:
    history: list
    converged: bool
    clusters: list

    @property
    def labels(self):
        return self.history[-1].labels


def _round_significant(value, scale, digits=10):
    """``value`` rounded to ``digits`` significant digits of ``scale``: the tie rule of docs/numerics.md."""
    scale = abs(scale)
    quantum = 10.0 ** (math.floor(math.log10(scale if scale > 0 else 1.0)) - digits + 1)
    return round(value / quantum) * quantum


def literal_craft(table, numeric, categorical, *, m, rho=None, lam, budget="fixed", eps_c=0.8, eps_v=0.5,  # noqa: C901 - the paper's algorithm in one piece, read beside it
                  smoothing=0.1, min_variance=0.3, max_iter=100, rng, initial=None):
    """Run Algorithm CRAFT literally on ``table``; return a :class:`LiteralRun`.

    ``rng`` is a NumPy Generator: the first cluster's row, then its ``v``,
    then one ``v`` per opened cluster are drawn from it in that order.
    ``initial`` optionally gives the clusters when the first pass starts (a
    seeding); otherwise the Algorithm's start is used (one random point,
    ``v ~ Bernoulli(m)^D``, ``sigma = 1``).
    """
    x, codes, n_levels = encode(table, numeric, categorical)
    n, p = x.shape
    q_count = codes.shape[1]
    d_count = p + q_count
    prior = Prior(m, rho)
    threshold = lam + d_count * prior.f0
    eta0 = [np.bincount(codes[:, q], minlength=n_levels[q]) / n for q in range(q_count)]
    global_var = [sum((x[row, j] - sum(x[:, j]) / n) ** 2 for row in range(n)) / n for j in range(p)]

    def new_cluster(row, v):
        eta = []
        for q in range(q_count):
            onehot = np.zeros(n_levels[q])
            onehot[codes[row, q]] = 1.0
            eta.append((onehot + smoothing * eta0[q]) / (1.0 + smoothing))
        return LiteralCluster([float(x[row, j]) for j in range(p)], [1.0] * p, eta, [bool(b) for b in v])

    def distance(row, cluster):
        numeric_part = 0.0
        for j in range(p):
            if cluster.v[j]:
                numeric_part += (x[row, j] - cluster.mean[j]) ** 2 * (1.0 / (2.0 * cluster.var[j]))
        categorical_part = 0.0
        for q in range(q_count):
            level = codes[row, q]
            categorical_part += -np.log(cluster.eta[q] if cluster.v[p + q] else eta0[q])[level]
        return numeric_part + categorical_part + sum(cluster.v) * prior.f_delta

    def update(members):
        size = len(members)
        mean, var, raw_var, second = [], [], [], []
        for j in range(p):
            values = [x[row, j] for row in members]
            mean.append(sum(values) / size)
            second.append(sum(value * value for value in values) / size)
            raw_var.append(sum((value - mean[-1]) ** 2 for value in values) / size)
            floor = min_variance * global_var[j]
            var.append(max(raw_var[-1], floor) if floor > 0 else max(raw_var[-1], min_variance))
        eta, gain, g_global = [], [], []
        for q in range(q_count):
            counts = np.zeros(n_levels[q])
            for row in members:
                counts[codes[row, q]] += 1
            eta_q = (counts + smoothing * eta0[q]) / (size + smoothing)
            eta.append(eta_q)
            g_d = sum(-np.log(eta0[q])[codes[row, q]] for row in members)  # G_d
            g_kd = sum(-np.log(eta_q)[codes[row, q]] for row in members)  # G_kd
            g_global.append(g_d)
            gain.append(g_d - g_kd)
        v = [False] * d_count
        if budget == "fixed":
            keep_num = int(math.floor(m * p + 0.5 + 1e-9))
            keep_cat = int(math.floor(m * q_count + 0.5 + 1e-9))
            by_variance = sorted(range(p), key=lambda j: (_round_significant(raw_var[j], second[j]), j))
            for j in by_variance[:keep_num]:
                v[j] = True
            by_gain = sorted(range(q_count), key=lambda q: (-_round_significant(gain[q], g_global[q]), q))
            for q in by_gain[:keep_cat]:
                v[p + q] = True
        else:
            for j in range(p):
                v[j] = raw_var[j] < eps_v
            for q in range(q_count):
                v[p + q] = gain[q] > eps_c * g_global[q]
        return LiteralCluster(mean, var, eta, v)

    def objective(clusters, z):
        total = 0.0
        for row in range(n):
            cluster = clusters[z[row]]
            for j in range(p):
                if cluster.v[j]:
                    total += (x[row, j] - cluster.mean[j]) ** 2 / (2.0 * cluster.var[j])
            for q in range(q_count):
                total += -np.log(cluster.eta[q] if cluster.v[p + q] else eta0[q])[codes[row, q]]
        total += threshold * len(clusters)
        total += prior.f_delta * sum(sum(c.v) for c in clusters)
        return total

    if initial is None:
        first = int(rng.integers(n))
        v = rng.random(d_count) < m
        clusters = [new_cluster(first, v)]
    else:
        clusters = list(initial)
    # "l_1 = {x_1, ..., x_N}": every point starts in the first cluster.
    assignment = [clusters[0].id] * n
    history = []
    for _ in range(max_iter):
        n_before = len(clusters)
        z = []
        for row in range(n):
            distances = [distance(row, cluster) for cluster in clusters]
            if min(distances) > threshold:
                v = [rng.random() < prior.new_cluster_probability(clusters, d) for d in range(d_count)]
                clusters.append(new_cluster(row, v))
                z.append(len(clusters) - 1)
            else:
                z.append(int(np.argmin(distances)))  # ties: the lowest index, i.e. the older cluster
        n_opened = len(clusters) - n_before
        new_assignment = [clusters[k].id for k in z]
        changed = [row for row in range(n) if new_assignment[row] != assignment[row]]
        to_opened = sum(z[row] >= n_before for row in changed)
        # Empty clusters are dropped; the others keep their order and identity.
        used = set(z)
        kept = [k for k in range(len(clusters)) if k in used]
        ids = [clusters[k].id for k in kept]
        index = {old: new for new, old in enumerate(kept)}
        z = [index[k] for k in z]
        clusters = [update([row for row in range(n) if z[row] == k]) for k in range(len(kept))]
        for cluster, identity in zip(clusters, ids, strict=True):
            cluster.id = identity
        history.append(Iteration(np.array(z), objective(clusters, z), np.array([c.v for c in clusters]),
                                 n_opened, len(changed), to_opened))
        assignment = new_assignment
        if not changed:
            return LiteralRun(history, True, clusters)
    return LiteralRun(history, False, clusters)
