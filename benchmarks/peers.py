"""Peers of CRAFT that are not in a usable package: MCFS, NDFS, Gower + linkage.

Every peer works on the encodings the benchmark gives all methods: the
Euclidean peers on standardized numeric + one-hot columns
(``Encoder(...).fit_transform(X).euclidean()``), the Gower peers on the
table with the roles of ``craft.datasets.dataset_schema``.

* :func:`mcfs_scores` — Multi-Cluster Feature Selection (Cai, Zhang and He,
  KDD 2010): a p-nearest-neighbour graph with heat-kernel weights; the
  ``n_clusters`` leading non-trivial eigenvectors of the normalised affinity
  (the flat embedding of the generalised problem ``W y = lambda D y``); one
  LARS regression with at most ``n_select`` non-zero coefficients per
  eigenvector; a feature scores ``max_k |a_k,j|``.
* :func:`ndfs_scores` — Nonnegative Discriminative Feature Selection (Li,
  Yang, Liu, Zhou and Lu, AAAI 2012): minimise
  ``Tr(F'LF) + alpha (|XW - F|^2 + beta |W|_{2,1})`` with ``F >= 0`` and
  ``F'F = I`` (a penalty ``gamma/4 |F'F - I|^2``); ``W`` in closed form with
  the re-weighted ``l2,1`` matrix ``D_jj = 1 / (2 |w_j|)``, ``F`` by the
  multiplicative update ``F <- F * gamma F / (M F + gamma F F'F)``,
  ``M = L + alpha (I - X (X'X + beta D)^-1 X')`` (never formed: applied to
  F). ``F`` starts from k-means labels + 0.2, as the authors' code does; the
  score of a feature is the row norm ``|w_j|``. Defaults ``alpha = beta = 1``,
  ``gamma = 1e8``, the same graph as MCFS.
* :func:`select_then_kmeans` — the protocol of both: keep the share ``m`` of
  the encoded columns with the highest score, then k-means.
* :func:`gower_linkage` — Gower distance (numeric ``|a - b| / range``,
  categorical mismatch with a missing value as a level, averaged over the
  features)
  and scipy's hierarchical linkage, cut at ``n_clusters``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse.linalg import eigsh
from scipy.spatial.distance import pdist
from sklearn.cluster import KMeans
from sklearn.linear_model import Lars
from sklearn.neighbors import NearestNeighbors

from craft.schema import Schema


# ----------------------------------------------------------------------------
# graph shared by MCFS and NDFS
# ----------------------------------------------------------------------------
def heat_kernel_graph(Z: np.ndarray, n_neighbors: int = 5) -> sparse.csr_matrix:
    """Symmetric p-NN graph, weights ``exp(-|x - y|^2 / t)`` with t the mean squared edge length."""
    n = Z.shape[0]
    p = min(n_neighbors, n - 1)
    neighbours = NearestNeighbors(n_neighbors=p + 1).fit(Z)
    distance, index = neighbours.kneighbors(Z)
    distance, index = distance[:, 1:], index[:, 1:]  # drop the point itself
    squared = distance**2
    t = float(squared.mean()) or 1.0
    weights = np.exp(-squared / t)
    graph = sparse.csr_matrix((weights.ravel(), (np.repeat(np.arange(n), p), index.ravel())), shape=(n, n))
    return graph.maximum(graph.T).tocsr()


def _normalised_affinity(graph: sparse.csr_matrix) -> tuple[sparse.csr_matrix, np.ndarray]:
    degree = np.asarray(graph.sum(axis=1)).ravel()
    inv_sqrt = 1.0 / np.sqrt(np.maximum(degree, 1e-12))
    scale = sparse.diags(inv_sqrt)
    return (scale @ graph @ scale).tocsr(), inv_sqrt


# ----------------------------------------------------------------------------
# MCFS
# ----------------------------------------------------------------------------
def mcfs_scores(Z: np.ndarray, n_clusters: int, n_select: int, *, n_neighbors: int = 5) -> np.ndarray:
    """MCFS score of every column of ``Z`` (higher is better).

    Deterministic: the graph, the eigenvectors (up to sign, which ``|coef|``
    ignores) and LARS involve no randomness.
    """
    graph = heat_kernel_graph(Z, n_neighbors)
    affinity, inv_sqrt = _normalised_affinity(graph)
    n = Z.shape[0]
    wanted = min(n_clusters + 1, n - 1)
    if n <= 2000:
        values, vectors = np.linalg.eigh(affinity.toarray())
        vectors = vectors[:, ::-1][:, :wanted]
    else:
        # Shift-invert on the Laplacian I - A: the Lanczos iteration on A itself
        # crawls when the graph has several components (eigenvalue 1 repeated).
        laplacian = (sparse.identity(n, format="csc") - affinity).tocsc()
        values, vectors = eigsh(laplacian, k=wanted, sigma=-1e-6, which="LM", v0=np.full(n, 1.0 / np.sqrt(n)))
        vectors = vectors[:, np.argsort(values)]
    # The leading eigenvector is the trivial one (D^1/2 1); the next K embed.
    embedding = inv_sqrt[:, None] * vectors[:, 1:wanted]
    coefficients = np.zeros((Z.shape[1], embedding.shape[1]))
    for j in range(embedding.shape[1]):
        model = Lars(n_nonzero_coefs=n_select, fit_intercept=True)
        model.fit(Z, embedding[:, j])
        coefficients[:, j] = model.coef_
    return np.abs(coefficients).max(axis=1)


# ----------------------------------------------------------------------------
# NDFS
# ----------------------------------------------------------------------------
def ndfs_scores(
    Z: np.ndarray,
    n_clusters: int,
    random_state=None,
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    gamma: float = 1e8,
    n_neighbors: int = 5,
    max_iter: int = 300,
    tol: float = 1e-6,
) -> np.ndarray:
    """NDFS score (row norms of W) of every column of ``Z``; random only through the k-means start of F."""
    n, d = Z.shape
    graph = heat_kernel_graph(Z, n_neighbors)
    affinity, _ = _normalised_affinity(graph)
    laplacian = (sparse.identity(n, format="csr") - affinity).tocsr()

    start = KMeans(n_clusters=n_clusters, n_init=1, random_state=_seed(random_state)).fit_predict(Z)
    F = np.zeros((n, n_clusters))
    F[np.arange(n), start] = 1.0
    F += 0.2
    F /= np.linalg.norm(F, axis=0, keepdims=True)

    gram = Z.T @ Z
    reweight = np.ones(d)
    previous = np.inf
    W = np.zeros((d, n_clusters))
    for _ in range(max_iter):
        inverse = np.linalg.inv(gram + beta * np.diag(reweight) + 1e-8 * np.eye(d))
        W = inverse @ (Z.T @ F)
        norms = np.maximum(np.sqrt((W * W).sum(axis=1)), 1e-16)
        reweight = 0.5 / norms
        MF = laplacian @ F + alpha * (F - Z @ (inverse @ (Z.T @ F)))
        F = F * (gamma * F) / np.maximum(MF + gamma * F @ (F.T @ F), 1e-300)
        F /= np.maximum(np.linalg.norm(F, axis=0, keepdims=True), 1e-300)
        residual = Z @ W - F
        value = float(np.sum(F * (laplacian @ F)) + alpha * ((residual**2).sum() + beta * norms.sum()))
        if abs(previous - value) <= tol * max(1.0, abs(value)):
            break
        previous = value
    return np.sqrt((W * W).sum(axis=1))


def _seed(random_state) -> int | None:
    if random_state is None:
        return None
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    return int(np.random.default_rng(random_state).integers(2**31 - 1))


# ----------------------------------------------------------------------------
# selection protocol
# ----------------------------------------------------------------------------
def n_selected(share: float, n_columns: int) -> int:
    """The number of encoded columns a share keeps (halves up, at least 1)."""
    return max(1, int(np.floor(share * n_columns + 0.5)))


def select_then_kmeans(Z: np.ndarray, column_scores: np.ndarray, share: float, n_clusters: int, random_state) -> np.ndarray:
    """k-means (scikit-learn defaults) on the share ``share`` of columns with the highest score."""
    keep = np.argsort(-column_scores, kind="stable")[: n_selected(share, Z.shape[1])]
    return KMeans(n_clusters=n_clusters, random_state=random_state).fit_predict(Z[:, keep])


def kmeans_labels(Z: np.ndarray, n_clusters: int, random_state) -> np.ndarray:
    """What most users run: scikit-learn KMeans with its defaults on the Euclidean encoding."""
    return KMeans(n_clusters=n_clusters, random_state=random_state).fit_predict(Z)


# ----------------------------------------------------------------------------
# kmodes peers
# ----------------------------------------------------------------------------
def kmodes_table(X: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, list[int]]:
    """The table as kmodes wants it: an object matrix, categorical columns as text (missing a level)."""
    columns = list(schema.used)
    table = X[columns].copy()
    categorical = [j for j, name in enumerate(columns) if name in set(schema.categorical)]
    for name in schema.categorical:
        table[name] = table[name].astype(object).where(table[name].notna(), "(missing)").astype(str)
    for name in schema.numeric:
        values = pd.to_numeric(table[name], errors="coerce").astype(float)
        table[name] = values.fillna(values.mean())
    return table.to_numpy(dtype=object), categorical


def kmodes_labels(X: pd.DataFrame, schema: Schema, n_clusters: int, random_state, **options) -> np.ndarray | None:
    """k-modes (all categorical) or k-prototypes (mixed), kmodes' defaults; None for numeric data.

    Numeric columns are standardized first, as for every other method.
    """
    from kmodes.kmodes import KModes
    from kmodes.kprototypes import KPrototypes

    if not schema.categorical:
        return None
    matrix, categorical = kmodes_table(X, schema)
    if not schema.numeric:
        return KModes(n_clusters=n_clusters, random_state=random_state, **options).fit_predict(matrix)
    numeric = [j for j in range(matrix.shape[1]) if j not in set(categorical)]
    block = matrix[:, numeric].astype(float)
    block = (block - block.mean(axis=0)) / np.where(block.std(axis=0) > 0, block.std(axis=0), 1.0)
    matrix[:, numeric] = block
    model = KPrototypes(n_clusters=n_clusters, random_state=random_state, **options)
    return model.fit_predict(matrix, categorical=categorical)


# ----------------------------------------------------------------------------
# Gower + hierarchical linkage
# ----------------------------------------------------------------------------
def gower_condensed(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Condensed Gower distances (``scipy.spatial.distance.pdist`` order), float64.

    Numeric part: ``|a - b| / range`` (mean-imputed, a constant column adds
    0); categorical part: 1 for a mismatch, a missing value being a level of
    its own (as in CRAFT's encoding); the sum is divided by the number of
    features.
    """
    n_numeric, n_categorical = len(schema.numeric), len(schema.categorical)
    total = np.zeros(len(X) * (len(X) - 1) // 2)
    if n_numeric:
        block = X[list(schema.numeric)].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
        block = np.where(np.isnan(block), np.nanmean(block, axis=0), block)
        spread = block.max(axis=0) - block.min(axis=0)
        total += pdist(block / np.where(spread > 0, spread, 1.0), "cityblock")
    if n_categorical:
        codes = np.column_stack([pd.factorize(X[name], use_na_sentinel=False)[0] for name in schema.categorical])
        total += pdist(codes, "hamming") * n_categorical
    return total / max(n_numeric + n_categorical, 1)


def gower_linkage(X: pd.DataFrame, schema: Schema, n_clusters: int, method: str, condensed=None) -> np.ndarray:
    """Hierarchical clustering (``method``: average, complete, ...) on Gower distances, cut at n_clusters."""
    condensed = gower_condensed(X, schema) if condensed is None else condensed
    tree = linkage(condensed, method=method)
    return fcluster(tree, t=n_clusters, criterion="maxclust") - 1
