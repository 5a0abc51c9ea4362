# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled LogDet Bregman projections in factored form (Kulis et al., 2009, Alg. 1 and 2).

The learned matrix is kept as ``B Bᵀ`` in the r-dimensional range of the prior, with
``B`` lower triangular and stored column-major, so one projection costs ``r²`` flops
for ``w = Bᵀ v`` and ``3r² + O(r)`` for CHOLUPDATEMULT, independent of the number of
points.
"""
import numpy as np

from .._core._factor_kernels cimport _cholupdatemult, _lower_transpose_times


cdef void _check_order(const Py_ssize_t[::1] order, Py_ssize_t m) except *:
    """Raise unless every entry of ``order`` indexes one of the ``m`` constraints."""
    cdef Py_ssize_t t
    for t in range(order.shape[0]):
        if order[t] < 0 or order[t] >= m:
            raise ValueError(f"order holds {order[t]}, not a constraint index in [0, {m})")


def logdet_sweep(const double[:, ::1] G, const Py_ssize_t[:, ::1] pairs,
                 const double[::1] direction, double[::1] target,
                 double[::1] dual, double[::1, :] B,
                 double gamma_ratio, double inv_gamma, const Py_ssize_t[::1] order):
    """One cycle of LogDet Bregman projections with dual corrections.

    Constraints are visited in ``order``: a permutation of the constraint indices, or of
    the subset the cyclic driver's screen keeps (the others would be no-ops).

    Constraint ``c`` asks ``direction[c] * (d²(i, j) - target[c]) <= 0`` with
    ``d²(i, j) = ||Bᵀ (G[i] - G[j])||²``. ``target`` holds the slack-adjusted
    bounds ξ and ``dual`` the multipliers ν; both are updated in place, as is ``B``.
    ``gamma_ratio = γ / (γ + 1)`` and ``inv_gamma = 1 / γ`` (both for γ = ∞: 1, 0).

    Returns the number of constraints violated when visited.
    """
    cdef Py_ssize_t r = B.shape[0]
    cdef Py_ssize_t m = pairs.shape[0]
    cdef Py_ssize_t c, t, k, i, j
    cdef double p, alpha, beta, delta
    cdef Py_ssize_t n_violated = 0
    _check_order(order, m)
    if r == 0:
        return 0
    cdef double[::1] v = np.empty(r)
    cdef double[::1] w = np.empty(r)
    cdef double[::1] work = np.empty(2 * r + 1)
    with nogil:
        for t in range(order.shape[0]):
            c = order[t]
            i = pairs[c, 0]
            j = pairs[c, 1]
            for k in range(r):
                v[k] = G[i, k] - G[j, k]
            _lower_transpose_times(&B[0, 0], &v[0], &w[0], r)
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
            _cholupdatemult(beta, &w[0], &B[0, 0], r, &work[0], &work[r + 1])
    return n_violated
