# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled LogDet Bregman projections in factored form (seed 002, Alg. 1 and 2).

The learned matrix is kept as ``B Bᵀ`` in the r-dimensional range of
the prior, with ``B`` lower triangular and stored row-major, so one projection
costs ``r²`` flops for ``w = Bᵀ v`` and ``3r² + O(r)`` for CHOLUPDATEMULT,
independent of the number of points.
"""
import numpy as np

from libc.math cimport sqrt
from scipy.linalg.cython_blas cimport dtrmv


cdef void _cholupdatemult(double beta, const double* x, double* B, Py_ssize_t r,
                          double* a, double* h) noexcept nogil:
    """B <- B L with L L^T = I + beta x x^T; B lower triangular, row-major.

    Seed 002 Alg. 1 shifted to 0-based indices: a[k] holds the paper's a_{k+1}.
    """
    cdef Py_ssize_t i, j
    cdef double t, s
    cdef double* row
    a[0] = beta
    for i in range(r):
        t = 1.0 + a[i] * x[i] * x[i]
        h[i] = sqrt(t)
        a[i + 1] = a[i] / t
        row = B + i * r
        t = row[i]
        s = 0.0
        row[i] = t * h[i]
        for j in range(i - 1, -1, -1):
            s = s + t * x[j + 1]
            t = row[j]
            row[j] = (t + a[j + 1] * x[j] * s) * h[j]


def cholupdatemult(double beta, const double[::1] w, double[:, ::1] B):
    """Multiply lower-triangular ``B`` in place by the Cholesky factor of ``I + beta w wᵀ``.

    ``1 + beta * ||w||²`` must be positive. Costs ``3r² + O(r)`` flops.
    """
    cdef Py_ssize_t r = B.shape[0]
    if B.shape[1] != r or w.shape[0] != r:
        raise ValueError("B must be square and match the length of w")
    cdef double[::1] a = np.empty(r + 1)
    cdef double[::1] h = np.empty(max(r, 1))
    with nogil:
        _cholupdatemult(beta, &w[0], &B[0, 0], r, &a[0], &h[0])


def logdet_sweep(const double[:, ::1] G, const Py_ssize_t[:, ::1] pairs,
                 const double[::1] direction, double[::1] target,
                 double[::1] dual, double[:, ::1] B,
                 double gamma_ratio, double inv_gamma):
    """One cycle of LogDet Bregman projections with dual corrections.

    Constraint ``c`` asks ``direction[c] * (d²(i, j) - target[c]) <= 0`` with
    ``d²(i, j) = ||Bᵀ (G[i] - G[j])||²``. ``target`` holds the slack-adjusted
    bounds ξ and ``dual`` the multipliers ν; both are updated in place, as is ``B``.
    ``gamma_ratio = γ / (γ + 1)`` and ``inv_gamma = 1 / γ`` (both for γ = ∞: 1, 0).

    Returns the number of constraints violated when visited.
    """
    cdef Py_ssize_t r = B.shape[0]
    cdef Py_ssize_t m = pairs.shape[0]
    cdef Py_ssize_t c, k, i, j
    cdef int n = <int> r, inc = 1
    cdef double p, alpha, beta, delta
    cdef Py_ssize_t n_violated = 0
    cdef double[::1] w = np.empty(max(r, 1))
    cdef double[::1] a = np.empty(r + 1)
    cdef double[::1] h = np.empty(max(r, 1))
    if r == 0:
        return 0
    with nogil:
        for c in range(m):
            i = pairs[c, 0]
            j = pairs[c, 1]
            for k in range(r):
                w[k] = G[i, k] - G[j, k]
            # Row-major lower-triangular B is column-major upper-triangular Bᵀ.
            dtrmv("U", "N", "N", &n, &B[0, 0], &n, &w[0], &inc)
            p = 0.0
            for k in range(r):
                p = p + w[k] * w[k]
            # A pair with no length under the current metric carries no information.
            if not p > 1e-14 * target[c]:
                continue
            delta = direction[c]
            if delta * (p - target[c]) > 0.0:
                n_violated += 1
            alpha = delta * gamma_ratio * (1.0 / p - 1.0 / target[c])
            if dual[c] < alpha:
                alpha = dual[c]
            if alpha == 0.0:
                continue
            beta = delta * alpha / (1.0 - delta * alpha * p)
            target[c] = 1.0 / (1.0 / target[c] + delta * alpha * inv_gamma)
            dual[c] = dual[c] - alpha
            _cholupdatemult(beta, &w[0], &B[0, 0], r, &a[0], &h[0])
    return n_violated
