"""A literal, per-point transcription of the paper's Algorithm CRAFT.

Slow on purpose: one Python loop over points, one over clusters, one over
features, exactly as the pseudo-code reads. The tests compare the vectorized
engine with it label for label. It makes the same documented choices as the
engine where the paper is silent (smoothing towards eta_0, the variance floor,
ties to the lowest index, selection ranks compared at 10 significant digits)
and draws random numbers in the same order: the first cluster's row and v,
then one v per opened cluster. Logarithms are NumPy's, as in the engine:
``math.log`` can differ from ``np.log`` in the last bit, which turns an exact
tie between two clusters into a different winner.
"""

from __future__ import annotations

import math

import numpy as np

from craft._engine import significant
from craft.priors import prior_terms


class LiteralCluster:
    def __init__(self, mean, var, eta, v):
        self.mean = mean  # list of P floats
        self.var = var  # list of P floats
        self.eta = eta  # list of Q arrays of level probabilities
        self.v = v  # list of D bools


def literal_craft(
    numeric,
    codes,
    n_levels,
    *,
    m,
    rho=None,
    lam,
    budget="fixed",
    eps_c=0.8,
    eps_v=0.5,
    smoothing=1.0,
    min_variance=0.01,
    max_iter=100,
    seed=0,
    initial=None,
):
    """Run Algorithm CRAFT literally; return (labels, clusters, n_iter).

    ``initial`` optionally gives the starting clusters (the engine's seeding
    for ``init="craft++"``) as a list of LiteralCluster; otherwise the paper's
    start is used (one random point, v ~ Bernoulli(m)).
    """
    rng = np.random.default_rng(seed)
    n, p = numeric.shape
    q_count = codes.shape[1]
    d_count = p + q_count
    terms = prior_terms(m, rho)
    threshold = lam + d_count * terms.f0
    eta0 = [np.bincount(codes[:, q], minlength=n_levels[q]) / n for q in range(q_count)]
    global_var = numeric.var(axis=0)

    def new_cluster(row, v):
        mean = [float(numeric[row, j]) for j in range(p)]
        var = [1.0] * p
        eta = []
        for q in range(q_count):
            onehot = np.zeros(n_levels[q])
            onehot[codes[row, q]] = 1.0
            eta.append((onehot + smoothing * eta0[q]) / (1.0 + smoothing))
        return LiteralCluster(mean, var, eta, [bool(x) for x in v])

    def distance(row, cluster):
        numeric_part = 0.0
        for j in range(p):
            if cluster.v[j]:
                numeric_part += (numeric[row, j] - cluster.mean[j]) ** 2 * (1.0 / (2.0 * cluster.var[j]))
        categorical_part = 0.0
        for q in range(q_count):
            level = codes[row, q]
            if cluster.v[p + q]:
                categorical_part += -np.log(cluster.eta[q])[level]
            else:
                categorical_part += -np.log(eta0[q])[level]
        return numeric_part + categorical_part + sum(cluster.v) * terms.f_delta

    if initial is None:
        first = int(rng.integers(n))
        v = rng.random(d_count) < m
        clusters = [new_cluster(first, v)]
    else:
        clusters = list(initial)
    z = [0] * n
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        new_z = []
        for row in range(n):
            distances = [distance(row, cluster) for cluster in clusters]
            if min(distances) > threshold:
                share = np.array([c.v for c in clusters], dtype=float).sum(axis=0) / len(clusters)
                probability = terms.selection_probability(share)
                v = rng.random(d_count) < probability
                clusters.append(new_cluster(row, v))
                new_z.append(len(clusters) - 1)
            else:
                new_z.append(int(np.argmin(distances)))
        used = sorted(set(new_z))
        renumber = {old: new for new, old in enumerate(used)}
        new_z = [renumber[label] for label in new_z]
        clusters = [_update(numeric, codes, n_levels, new_z, k, eta0, global_var, m, p, q_count, budget, eps_c, eps_v, smoothing, min_variance) for k in range(len(used))]
        if new_z == z:
            break
        z = new_z
    return np.array(new_z), clusters, n_iter


def _update(numeric, codes, n_levels, z, k, eta0, global_var, m, p, q_count, budget, eps_c, eps_v, smoothing, min_variance):
    members = [row for row, label in enumerate(z) if label == k]
    size = len(members)
    mean, var, raw_var, second = [], [], [], []
    for j in range(p):
        values = numeric[members, j]
        mean.append(float(values.mean()))
        second.append(float((values * values).mean()))
        floor = min_variance * global_var[j]
        raw_var.append(float(values.var()))
        var.append(max(raw_var[-1], floor) if floor > 0 else max(raw_var[-1], min_variance))
    eta, gain, g_global = [], [], []
    for q in range(q_count):
        counts = np.bincount(codes[members, q], minlength=n_levels[q]).astype(float)
        eta_q = (counts + smoothing * eta0[q]) / (size + smoothing)
        eta.append(eta_q)
        # G_d - G_kd = -sum_n log eta0[x_n] + sum_n log eta_k[x_n], grouped by level.
        g_d = 0.0
        g_kd = 0.0
        for level in range(n_levels[q]):
            g_d += counts[level] * -np.log(eta0[q])[level]
            g_kd += counts[level] * -np.log(eta_q)[level]
        g_global.append(g_d)
        gain.append(g_d - g_kd)
    v = [False] * (p + q_count)
    if budget == "fixed":
        keep_num = int(math.floor(m * p + 0.5 + 1e-9))
        keep_cat = int(math.floor(m * q_count + 0.5 + 1e-9))
        ranked_var = significant(np.array(raw_var), scale=np.array(second)) if p else np.array([])
        for j in sorted(range(p), key=lambda j: (ranked_var[j], j))[:keep_num]:
            v[j] = True
        ranked_gain = significant(np.array(gain), scale=np.array(g_global)) if q_count else np.array([])
        for q in sorted(range(q_count), key=lambda q: (-ranked_gain[q], q))[:keep_cat]:
            v[p + q] = True
    else:
        for j in range(p):
            v[j] = raw_var[j] < eps_v
        for q in range(q_count):
            v[p + q] = gain[q] > eps_c * g_global[q]
    return LiteralCluster(mean, var, eta, v)
