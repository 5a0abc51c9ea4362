# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Matrix Exponentiated Gradient: one pass of updates over the examples (MEG)."""
from libc.math cimport INFINITY
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport ddot, dnrm2

from .._core._eigen_update cimport (
    _Workspace,
    _apply,
    _check_sorted,
    _decompose,
    _moments,
    _normalize_top,
    _unit_spectrum,
)
from .._core._eigen_workspace cimport Work


def meg_pass(const double[:, ::1] F, const Py_ssize_t[:, ::1] pairs,
             const double[::1] targets, const double[::1] sides, double eta,
             double[::1] Q, double[::1, :] W, double[::1] losses):
    """One pass of Matrix Exponentiated Gradient updates over the examples, in order.

    The trace-one matrix is ``W e^Q Wᵀ / tr e^Q`` (``Q`` ascending with maximum 0, as
    in Tsuda et al., 2005, eq. 7; ``W`` orthogonal, column-major; both updated in place). Example
    ``c`` is ``X_c = z zᵀ`` with ``z = F[i] − F[j]`` and label ``targets[c]``; the
    prediction is ``ŷ = tr(W X_c)`` and the update adds ``−2 eta (ŷ − y) z zᵀ`` to the
    logarithm. ``sides[c]`` makes the label a bound: +1 asks ``ŷ ≤ y``, −1 ``ŷ ≥ y``,
    0 ``ŷ = y``; an example within its bound has no loss and no update (the eigen
    update, the costly step, is skipped). ``losses[c]`` receives ``(ŷ − y)²`` (0 within
    the bound) before the update.

    Returns the total loss of the pass.
    """
    cdef Py_ssize_t n = Q.shape[0], m = pairs.shape[0], c, a, b, kk
    cdef int ni = <int> n, one = 1
    cdef double nw, lphi, dlphi, ltr, ratio, yhat, diff, total = 0.0, offset = 0.0
    if W.shape[0] != n or W.shape[1] != n or F.shape[1] != n:
        raise ValueError("F, Q and W must describe the same dimension")
    if targets.shape[0] != m or sides.shape[0] != m or losses.shape[0] != m:
        raise ValueError("targets, sides and losses need one entry per example")
    _check_sorted(Q)
    if n == 0:
        return 0.0
    cdef _Workspace space = _Workspace(n)
    cdef Work* wk = &space.w
    cdef double* Wc = &W[0, 0]
    cdef double* Wn = wk.W2
    cdef double* swap
    with nogil:
        for c in range(m):
            a = pairs[c, 0]
            b = pairs[c, 1]
            for kk in range(n):
                wk.v[kk] = F[a, kk] - F[b, kk]
            for kk in range(n):
                wk.w[kk] = ddot(&ni, Wc + kk * n, &one, wk.v, &one)
            nw = dnrm2(&ni, wk.w, &one)
            if not (0.0 < nw < INFINITY):
                losses[c] = targets[c] * targets[c]
                total += losses[c]
                continue
            _unit_spectrum(wk, &Q[0], nw)
            _moments(wk, &lphi, &dlphi, &ltr, &ratio, &Q[0], False)
            yhat = nw * nw * ratio
            diff = yhat - targets[c]
            if sides[c] * diff < 0.0:
                diff = 0.0
            losses[c] = diff * diff
            total += losses[c]
            if diff == 0.0:
                continue
            wk.roots_valid = False
            _decompose(wk, &Q[0], wk.zhat, -2.0 * eta * diff * nw * nw)
            _apply(wk, &Q[0], Wc, Wn)
            swap = Wc
            Wc = Wn
            Wn = swap
            _normalize_top(&Q[0], n, &offset)
        if Wc != &W[0, 0]:
            memcpy(&W[0, 0], Wc, n * n * sizeof(double))
    return total
