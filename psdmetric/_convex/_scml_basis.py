"""SCML's rank-one bases and its triplets from labels (Shi, Bellet & Sha, 2014, §4).

- ``lda_basis``: discriminant directions of local neighbourhoods (k-means centres,
  each with its nearest samples of every class, at two scales), as metric-learn's
  SCML_Supervised builds them;
- ``triplet_difference_basis``: eigenvectors of ``Σ v vᵀ − Σ u uᵀ`` over random
  groups of the triplets' similar (v) and dissimilar (u) differences, for triplets
  without labels;
- ``knn_triplets``: every sample with each of its ``k_genuine`` nearest same-class
  samples and each of its ``k_impostor`` nearest other-class samples.
"""

import numpy as np
from scipy import linalg
from sklearn.cluster import KMeans
from sklearn.neighbors import NearestNeighbors

# Ridge of a neighbourhood's within-class scatter, relative to its mean eigenvalue.
_RIDGE = 1e-3


def default_lda_bases(n_samples, n_features, n_classes):
    """metric-learn's default: ``min(20 d, 2 n (c − 1) − 1)`` bases."""
    return min(20 * n_features, 2 * n_samples * min(n_classes - 1, n_features) - 1)


def lda_basis(X, codes, n_basis, random_state):
    """``n_basis`` unit rows: local discriminant directions at two neighbourhood sizes."""
    n_samples, n_features = X.shape
    n_classes = codes.max() + 1
    per_region = min(n_classes - 1, n_features)
    n_clusters = int(np.ceil(n_basis / (2 * per_region)))
    centres = KMeans(n_clusters=n_clusters, n_init=1,
                     random_state=random_state).fit(X).cluster_centers_
    scales = (20, 50) if n_features > 50 else (10, 20)
    counts = np.bincount(codes, minlength=n_classes)
    nearest = []
    for c in range(n_classes):
        members = np.flatnonzero(codes == c)
        k = min(counts[c], scales[1])
        found = NearestNeighbors(n_neighbors=k).fit(X[members]).kneighbors(
            centres, return_distance=False)
        nearest.append(members[found])
    directions = []
    for scale in scales:
        rows = np.hstack([found[:, :min(scale, found.shape[1])] for found in nearest])
        directions.extend(_discriminant_directions(X[region], codes[region], per_region)
                          for region in rows)
    basis = np.vstack(directions)[:n_basis]
    return basis / np.maximum(linalg.norm(basis, axis=1, keepdims=True), np.finfo(float).tiny)


def _discriminant_directions(X, codes, count):
    """The ``count`` leading generalised eigenvectors of the between- and within-scatter."""
    present, local = np.unique(codes, return_inverse=True)
    means = np.zeros((len(present), X.shape[1]))
    np.add.at(means, local, X)
    sizes = np.bincount(local)
    means /= sizes[:, None]
    centred = X - means[local]
    within = centred.T @ centred / len(X)
    spread = (means - X.mean(axis=0)).T * np.sqrt(sizes / len(X))
    ridge = _RIDGE * max(np.trace(within) / X.shape[1], np.finfo(float).tiny)
    within += ridge * np.eye(X.shape[1])
    if count >= X.shape[1]:
        return linalg.eigh(spread @ spread.T, within)[1][:, ::-1][:, :count].T
    # The between-scatter S Sᵀ has rank below d: with W = L Lᵀ the leading generalised
    # eigenvectors are L⁻ᵀ times the left singular vectors of L⁻¹ S (d × classes).
    factor = linalg.cholesky(within, lower=True)
    left = linalg.svd(linalg.solve_triangular(factor, spread, lower=True),
                      full_matrices=False)[0]
    return linalg.solve_triangular(factor, left[:, :count], lower=True, trans="T").T


def triplet_difference_basis(X, triplets, n_basis, rng):
    """``n_basis`` unit rows from groups of ``d`` triplets' difference scatters."""
    n_features = X.shape[1]
    if n_features > len(triplets):
        raise ValueError(
            f"basis='triplet_diffs' draws groups of n_features={n_features} triplets, but "
            f"there are only {len(triplets)}: pass more triplets or a basis array.")
    similar = X[triplets[:, 0]] - X[triplets[:, 1]]
    dissimilar = X[triplets[:, 0]] - X[triplets[:, 2]]
    # Directions are scale-free; the scatters below are X's scale to the 4th power.
    scale = max(np.abs(similar).max(), np.abs(dissimilar).max())
    if scale > 0:
        similar, dissimilar = similar / scale, dissimilar / scale
    rows, found = [], 0
    for _ in range(100 * n_basis):
        pick = rng.choice(len(triplets), size=n_features, replace=False)
        difference = similar[pick].T @ similar[pick] - dissimilar[pick].T @ dissimilar[pick]
        values, vectors = linalg.eigh(difference.T @ difference)
        positive = vectors[:, values > n_features * np.finfo(float).eps * values.max()]
        rows.append(positive.T)
        found += positive.shape[1]
        if found >= n_basis:
            break
    return np.vstack(rows)[:n_basis]


def knn_triplets(X, codes, k_genuine, k_impostor):
    """Triplets ``(i, j, l)``: ``j`` among ``i``'s ``k_genuine`` nearest of its class,
    ``l`` among its ``k_impostor`` nearest of the other classes."""
    n_classes = codes.max() + 1
    genuine = np.full((len(X), k_genuine), -1)
    impostor = np.full((len(X), k_impostor), -1)
    for c in range(n_classes):
        members, others = np.flatnonzero(codes == c), np.flatnonzero(codes != c)
        k = min(k_genuine, len(members) - 1)
        if k > 0:
            found = NearestNeighbors(n_neighbors=k + 1).fit(X[members]).kneighbors(
                X[members], return_distance=False)
            # Drop each sample itself (first, unless duplicates tie with it).
            own = found != np.arange(len(members))[:, None]
            kept = np.array([row[mask][:k] for row, mask in zip(found, own)])
            genuine[members, :k] = members[kept]
        k = min(k_impostor, len(others))
        found = NearestNeighbors(n_neighbors=k).fit(X[others]).kneighbors(
            X[members], return_distance=False)
        impostor[members, :k] = others[found]
    i = np.repeat(np.arange(len(X)), k_genuine * k_impostor)
    j = np.repeat(genuine, k_impostor, axis=1).ravel()
    far = np.tile(impostor, (1, k_genuine)).ravel()
    keep = (j >= 0) & (far >= 0)
    return np.column_stack([i[keep], j[keep], far[keep]])
