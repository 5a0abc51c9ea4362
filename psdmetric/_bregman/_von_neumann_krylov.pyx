# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Exact von Neumann Bregman projections that keep the logarithm L instead of its eigenbasis.

The projection only needs ``zᵀ exp(L + t ẑẑᵀ) z``, which lives in the Krylov space of L
and z (``L + t ẑẑᵀ`` has the same one), so a few Lanczos steps reduce it to the
projection of :mod:`._von_neumann_kernels` on an m × m problem, and the update of L is
one rank-one term.
"""
import numpy as np

from libc.math cimport INFINITY, NAN, exp, fabs, log, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport ddot, dnrm2, dscal

from .._core._eigen_update cimport _Workspace
from .._core._eigen_workspace cimport Work
from ._von_neumann_kernels cimport _Sweep, _count, _project

from ._von_neumann_kernels import _check_sweep


cdef extern from "_krylov_simd.h" nogil:
    void psdmetric_symmetric_product(Py_ssize_t r, const double* L, const double* x,
                                     double* y)
    void psdmetric_symmetric_rank_one(Py_ssize_t r, double t, const double* q, double* L)
    void psdmetric_rank_one_product(Py_ssize_t r, double t, const double* q, double* L,
                                    const double* x, double* y)
    double psdmetric_orthogonalise(Py_ssize_t r, Py_ssize_t k, const double* K, double* w,
                                   double* h)
    int psdmetric_tridiagonal_first_row(Py_ssize_t m, double* d, double* e, double* z)

# Lanczos stops once the Gauss quadrature remainder bounds the error of log(ẑᵀe^Lẑ) by this.
cdef double KRYLOV_TOL = 1e-13
cdef double LOG_KRYLOV_TOL = log(KRYLOV_TOL)
# A relaxed projection (root_rtol > 0) is solved only until its log-residual g falls to
# root_rtol·|g(0)|, so its Lanczos run may stop once the error of g is bounded by a tenth
# of that: far from the fixed point a visit needs fewer steps; near it |g(0)| and the
# tolerance shrink together, so the fixed point stays exact (as for the relaxed roots).
cdef double KRYLOV_FORCING = 0.1


cdef struct _Lanczos:
    # The Lanczos run of one visit on L (n × n, column-major): the basis (n × (n + 1),
    # column-major; column 0 is ẑ), the tridiagonal matrix (alpha, beta), its Ritz values
    # and first components, work arrays, and L's deferred rank-one update.
    Py_ssize_t n
    double* L
    double* basis
    double* alpha
    double* beta
    double* theta
    double* first
    double* scratch
    double* coefficients
    double* residual
    double* pending
    double pending_step


cdef double _log_ritz_quadratic(Py_ssize_t m, const double* alpha, const double* beta,
                                double* theta, double* first, double* scratch) noexcept nogil:
    """log(e₁ᵀ e^T e₁) of the m × m Lanczos matrix T (diagonal alpha, subdiagonal beta).

    Its eigenvalues go to theta, ascending, and the first components of their
    eigenvectors to first; ``scratch`` holds m entries. NaN if the QL iteration fails.
    """
    cdef Py_ssize_t k, i
    cdef double top, total = 0.0, value, component
    memcpy(theta, alpha, m * sizeof(double))
    memcpy(scratch, beta, m * sizeof(double))
    if psdmetric_tridiagonal_first_row(m, theta, scratch, first) != 0:
        return NAN
    for k in range(1, m):  # insertion sort, eigenvalues with their components
        value = theta[k]
        component = first[k]
        i = k
        while i > 0 and theta[i - 1] > value:
            theta[i] = theta[i - 1]
            first[i] = first[i - 1]
            i -= 1
        theta[i] = value
        first[i] = component
    top = theta[m - 1]
    for k in range(m):
        total += first[k] * first[k] * exp(theta[k] - top)
    return top + log(total)


cdef Py_ssize_t _lanczos(_Lanczos* k, double log_bound, double root_rtol,
                         Py_ssize_t first_check, double* estimate) noexcept nogil:
    """Lanczos on L from ``ẑ = basis[:, 0]`` until ``log(ẑᵀe^Lẑ)`` is known well enough.

    Stops when the Gauss quadrature remainder bounds the estimate's error by
    ``KRYLOV_TOL`` (or by ``KRYLOV_FORCING · root_rtol · |g(0)|``, g = estimate −
    log_bound), or when the space is invariant or full. ``first_check`` is the step at
    which to start checking. Returns the steps taken, with ``estimate`` the log of the
    Ritz quadratic at those steps (NaN if the QL iteration failed).
    """
    cdef Py_ssize_t j, kk, n = k.n, steps = 0, estimated = 0
    cdef int ni = <int> n, one = 1
    cdef double b, scale = 0.0, log_moment = 0.0, log_factorial = 0.0, top_bound = -INFINITY
    for j in range(n):
        # residual ← L q_j, made orthogonal to q_0 … q_j: one full pass keeps the
        # few-dozen-vector bases orthogonal to rounding (a second pass changed
        # fits by 1e-14 and cost 7 %).
        if j == 0 and k.pending_step != 0.0:
            psdmetric_rank_one_product(n, k.pending_step, k.pending, k.L, k.basis, k.residual)
            k.pending_step = 0.0
        else:
            psdmetric_symmetric_product(n, k.L, k.basis + j * n, k.residual)
        k.alpha[j] = psdmetric_orthogonalise(n, j + 1, k.basis, k.residual, k.coefficients)
        steps = j + 1
        # Not dnrm2: its overflow-safe scaling costs more than the product; the
        # residual is of the order of ‖L‖.
        b = sqrt(ddot(&ni, k.residual, &one, k.residual, &one))
        k.beta[j] = b
        # Gershgorin: no eigenvalue of T (nor, in practice, of L) lies above.
        top_bound = max(top_bound, k.alpha[j] + (k.beta[j - 1] if j > 0 else 0.0) + b)
        scale = max(scale, fabs(k.alpha[j]), b)
        # The space is invariant (or full): the estimate is exact.
        if steps == n or not b > 1e-12 * scale:
            break
        # The Gauss quadrature remainder (Golub & Meurant, 2010): the m-step
        # estimate falls short of ẑᵀe^Lẑ by e^η β₀²…β_{m-1}²/(2m)!, η ≤ λmax(L).
        log_moment += 2.0 * log(b)
        log_factorial += log(2.0 * steps * (2.0 * steps - 1.0))
        # Each check is an m × m tridiagonal eigenproblem, so checks start at the
        # step where the last visit stopped (consecutive visits need about as
        # many), or earlier once the bound meets KRYLOV_TOL with Gershgorin's
        # λmax and Jensen's ẑᵀe^Lẑ ≥ e^{α₀}.
        if steps >= first_check or (top_bound - k.alpha[0] + log_moment
                                    - log_factorial <= LOG_KRYLOV_TOL):
            estimate[0] = _log_ritz_quadratic(steps, k.alpha, k.beta, k.theta, k.first,
                                              k.scratch)
            estimated = steps
            # The bound relative to the estimate, λmax taken as the top Ritz value.
            if k.theta[steps - 1] - estimate[0] + log_moment - log_factorial <= log(max(
                    KRYLOV_TOL * max(1.0, fabs(estimate[0])),
                    KRYLOV_FORCING * root_rtol * fabs(estimate[0] - log_bound))):
                break
        b = 1.0 / b
        for kk in range(n):
            k.basis[(j + 1) * n + kk] = k.residual[kk] * b
    if estimated != steps:
        estimate[0] = _log_ritz_quadratic(steps, k.alpha, k.beta, k.theta, k.first,
                                          k.scratch)
    return steps


def von_neumann_krylov_sweep(const double[:, ::1] F, const Py_ssize_t[:, ::1] pairs,
                             const double[::1] direction, double[::1] target,
                             const double[::1] slack, double[::1] dual, double[::1] Q,
                             double[::1, :] W, const Py_ssize_t[::1] order, *,
                             double root_rtol=0.0, Py_ssize_t[::1] counters=None):
    """One cycle of :func:`von_neumann_sweep` (``relative=False``) without eigenbasis.

    Same arguments, constraints and results up to rounding: the cycle starts from
    ``L = W diag(Q) Wᵀ`` and ends by writing L's eigendecomposition back to ``Q`` and
    ``W``. In between, each visit runs Lanczos on L from ``ẑ = z/‖z‖``, with full
    reorthogonalisation, until the Gauss quadrature remainder bounds the error of
    ``log(ẑᵀ e^L ẑ)`` by ``KRYLOV_TOL``, or by ``KRYLOV_FORCING · root_rtol · |g(0)|``
    when the projection is relaxed, g its log-residual; with the
    Lanczos matrix ``T = Y diag(θ) Yᵀ`` of m steps, ``ẑᵀ e^{L + tẑẑᵀ} ẑ`` is
    ``e₁ᵀ e^{T + t e₁e₁ᵀ} e₁`` (both matrices share the Krylov space), so the projection is
    the one of :func:`von_neumann_sweep` on ``diag(θ)`` seen from ``‖z‖ Yᵀe₁``, and the
    update is ``L ← L + t ẑẑᵀ``, applied in one pass with the next visit's first product. A
    visit costs about 2mr² flops (m ≈ 13 on MNIST at r = 100 with exact roots, fewer with
    relaxed ones) against the r³ rotation of the
    eigenbasis.

    ``counters`` (optional, intp, length ≥ 3): projections, root-finder evaluations,
    secular passes and, if there is a fourth entry, Lanczos steps.

    Returns the number of constraints violated when visited.
    """
    cdef Py_ssize_t n = Q.shape[0], m = pairs.shape[0]
    cdef Py_ssize_t tt, c, kk, steps, n_lanczos = 0, first_check = 1
    cdef int ni = <int> n, one = 1
    cdef double nv, t, b, estimate = 0.0
    _check_sweep(F, pairs, direction, target, slack, dual, Q, W, order, counters)
    if n == 0 or m == 0:
        return 0
    L_array = np.asfortranarray((np.asarray(W) * np.asarray(Q)) @ np.asarray(W).T)
    cdef double[::1, :] L = L_array
    cdef double[::1, :] basis = np.empty((n, n + 1), order="F")
    cdef double[::1] alpha = np.empty(n)
    cdef double[::1] beta = np.empty(n)
    cdef double[::1] theta = np.empty(n)
    cdef double[::1] first = np.empty(n)
    cdef double[::1] scratch = np.empty(n)
    cdef double[::1] coefficients = np.empty(n)
    cdef double[::1] residual = np.empty(n)
    cdef double[::1] pending = np.empty(n)
    cdef _Lanczos k = _Lanczos(n, &L[0, 0], &basis[0, 0], &alpha[0], &beta[0], &theta[0],
                               &first[0], &scratch[0], &coefficients[0], &residual[0],
                               &pending[0], 0.0)
    cdef _Sweep sweep = _Sweep(&direction[0], &target[0], &slack[0], &dual[0], False,
                               root_rtol, 0, 0)
    cdef _Workspace ws = _Workspace(n)
    cdef Work* wk = &ws.w
    with nogil:
        for tt in range(order.shape[0]):
            c = order[tt]
            for kk in range(n):
                basis[kk, 0] = F[pairs[c, 0], kk] - F[pairs[c, 1], kk]
            nv = dnrm2(&ni, &basis[0, 0], &one)
            # A pair with no length carries no information.
            if not (0.0 < nv < INFINITY):
                continue
            b = 1.0 / nv
            dscal(&ni, &b, &basis[0, 0], &one)
            # g = log(ẑᵀe^Lẑ) − log_bound
            steps = _lanczos(&k, log(target[c]) - 2.0 * log(nv), root_rtol, first_check,
                             &estimate)
            first_check = steps
            n_lanczos += steps
            if not (fabs(estimate) < INFINITY):
                continue  # the QL iteration failed: leave this constraint alone
            # z = ‖z‖ q₀ = ‖z‖ Σ_k Y[0, k] y_k: its coordinates in the Ritz basis.
            wk.n = steps
            for kk in range(steps):
                wk.w[kk] = nv * k.first[kk]
            if not _project(wk, k.theta, nv, c, &sweep, &t):
                continue
            # L ← L + t ẑẑᵀ, deferred to the next visit's first product.
            k.pending_step = t
            memcpy(k.pending, &basis[0, 0], n * sizeof(double))
        if k.pending_step != 0.0:
            psdmetric_symmetric_rank_one(n, k.pending_step, k.pending, &L[0, 0])
    # Q ascending and W orthonormal again, for the screen and the next cycle.
    values, eigenvectors = np.linalg.eigh(L_array)
    np.asarray(Q)[:] = values
    np.asarray(W)[:] = eigenvectors
    _count(counters, sweep.n_projections, wk, n_lanczos)
    return sweep.n_violated
