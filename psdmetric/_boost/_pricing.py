"""PSDBoost's base learner (Shen, Welsh & Wang, 2008, (B1)): top eigenvectors of ``H = Σ w_r A_r``.

The triplet matrices ``A_r = p_r p_rᵀ − q_r q_rᵀ`` are never formed: ``differences``
stacks the ``p_r`` over the ``q_r``, so ``H = Eᵀ diag([w; −w]) E``.
"""

import numpy as np
from scipy import linalg
from scipy.linalg import blas
from scipy.sparse.linalg import LinearOperator, eigsh

# With at least as many weighted difference vectors as features, H is formed (D×D) for
# LAPACK up to this many features and Lanczos runs matrix-free beyond (crossover
# measured in bench/bench_psdboost.py).
_DENSE_MAX_FEATURES = 1536


def base_gains(differences, vectors):
    """``⟨A_r, u uᵀ⟩ = (p_r·u)² − (q_r·u)²`` for every triplet r and column u of ``vectors``.

    Returns an array of shape (n_vectors, n_triplets).
    """
    projected = differences @ vectors
    n_triplets = len(differences) // 2
    return (projected[:n_triplets] ** 2 - projected[n_triplets:] ** 2).T


def top_eigenpairs(differences, w, n_pairs, rng):
    """The ``n_pairs`` largest eigenvalues (descending) and unit eigenvectors of ``H``.

    ``H = Σ w_r A_r = Eᵀ diag(e) E`` with ``E`` the m stacked difference vectors of
    the triplets of positive weight and ``e = [w; −w]`` (B1, eq. 6-7 of Shen et al., 2008).
    With fewer difference vectors than features, ``H`` lives in their span: with
    ``Eᵀ = QR`` its eigenpairs there are those of the m×m ``R diag(e) Rᵀ``, and 0 on
    the complement. Otherwise ``H`` is formed for LAPACK up to
    ``_DENSE_MAX_FEATURES`` features and is a matrix-free operator for Lanczos beyond.
    """
    support = np.flatnonzero(w > 0)
    n_triplets = len(w)
    stacked = differences[np.concatenate([support, support + n_triplets])]
    signed = np.concatenate([w[support], -w[support]])
    n_vectors, n_features = stacked.shape
    n_pairs = min(n_pairs, n_features)
    if n_vectors < n_features:
        Q, R = linalg.qr(stacked.T, mode="economic")
        values, small = linalg.eigh((R * signed) @ R.T)
        # H is 0 on the complement of the span: orthonormal vectors of it join the list.
        n_zero = min(n_pairs, n_features - n_vectors)
        null = rng.standard_normal((n_features, n_zero))
        for _ in range(2):  # twice: one projection leaves round-off along Q
            null -= Q @ (Q.T @ null)
        values = np.concatenate([values, np.zeros(n_zero)])
        vectors = np.column_stack([Q @ small, linalg.qr(null, mode="economic")[0]])
        order = np.argsort(-values, kind="stable")[:n_pairs]
        return values[order], vectors[:, order]
    if n_features <= _DENSE_MAX_FEATURES:
        # H = PᵀWP − QᵀWQ by two SYRKs (half a GEMM's flops), upper triangle only.
        root = np.sqrt(w[support])[:, None]
        H = blas.dsyrk(1.0, (stacked[:len(support)] * root).T)
        H = blas.dsyrk(-1.0, (stacked[len(support):] * root).T, beta=1.0, c=H,
                       overwrite_c=True)
        values, vectors = linalg.eigh(
            H, lower=False, subset_by_index=[n_features - n_pairs, n_features - 1]
        )
    else:

        def product(u):
            return stacked.T @ (signed * (stacked @ u.ravel()))

        operator = LinearOperator((n_features, n_features), matvec=product, dtype=np.float64)
        start = rng.uniform(-1.0, 1.0, size=n_features)
        values, vectors = eigsh(operator, k=n_pairs, which="LA", v0=start)
        vectors /= np.linalg.norm(vectors, axis=0)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def extreme_points(differences, w, rank, n_bases, rng):
    """The base learner (B1) at weights ``w``: the best extreme points and the upper bound.

    The extreme points of ``{X : 0 ⪯ X ⪯ I / rank, tr X = 1}`` are ``U Uᵀ / rank`` with
    ``U`` of ``rank`` orthonormal columns (Overton & Womersley 1992; rank one: Shen et al., 2008
    Thm 3.4), and ``⟨H, U Uᵀ⟩ / rank`` is largest for the top ``rank`` eigenvectors of
    ``H``, the mean of whose eigenvalues bounds the SDP optimum from above. The
    ``n_bases`` bases are the windows of ``rank`` consecutive top eigenvectors.

    Returns the bound, the bases (n_bases, rank, n_features) and their gains
    (n_bases, n_triplets).
    """
    values, vectors = top_eigenpairs(differences, w, rank + n_bases - 1, rng)
    n_bases = min(n_bases, len(values) - rank + 1)
    window_sums = np.cumsum(np.vstack([np.zeros(len(w)), base_gains(differences, vectors)]),
                            axis=0)
    gains = (window_sums[rank:rank + n_bases] - window_sums[:n_bases]) / rank
    bases = np.stack([vectors[:, b:b + rank].T for b in range(n_bases)])
    return values[:rank].mean(), bases, gains
