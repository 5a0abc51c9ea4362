# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""DefiniteBoost's greedy steps with approximate projections."""
import numpy as np

from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, exp, fabs, log
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport ddot, dgemm, dnrm2

from .._core._eigen_update cimport _Workspace, _apply, _check_sorted, _decompose, _normalize_top
from .._core._eigen_workspace cimport Work


cdef struct _Constraints:
    # Constraint j: Σ_k coef[k] T[k] T[k]ᵀ − shift[j] I over k in start[j]:start[j + 1],
    # eigenvalues in [lmin[j], lmax[j]], dual bounded by cap[j].
    Py_ssize_t m
    const double* coef
    const Py_ssize_t* start
    const double* shift
    const double* lmin
    const double* lmax
    const double* cap


cdef Py_ssize_t _most_violated(const _Constraints* c, const double* dual,
                               const double* a_term, double* r, bint correction,
                               double* residual) noexcept nogil:
    """The constraint to step on (-1 if none), with every ``r[j] = tr(W C_j)``.

    Candidates are the violated constraints whose dual is below its cap (with
    ``correction``, also those with a positive dual and ``r_j < 0``); the largest
    ``|r_j|`` wins. ``residual`` receives the largest normalised ``|r_j|`` among the
    candidates.
    """
    cdef Py_ssize_t j, kk, best = -1
    cdef double rj, score, best_score = 0.0
    residual[0] = 0.0
    for j in range(c.m):
        if not (c.lmin[j] < 0.0 < c.lmax[j]):
            continue
        rj = -c.shift[j]
        for kk in range(c.start[j], c.start[j + 1]):
            rj += c.coef[kk] * a_term[kk]
        r[j] = rj
        if (rj > 0.0 and dual[j] < c.cap[j]) or (correction and dual[j] > 0.0
                                                  and rj < 0.0):
            score = fabs(rj)
            # Relative to the bound (shift) when there is one, else to the range.
            residual[0] = max(residual[0], score / (fabs(c.shift[j]) if c.shift[j] != 0.0
                                                    else c.lmax[j] - c.lmin[j]))
            if score > best_score:
                best_score = score
                best = j
    return best


cdef void _term_traces(const double[:, ::1] points, const Py_ssize_t[:, ::1] ends,
                       const double[::1, :] omega, const double* ex, double zsum,
                       double* a_term) noexcept nogil:
    """``a_term[k] = tr(W T[k] T[k]ᵀ)`` for every term, from ``Ω = Wᵀ pointsᵀ``."""
    cdef Py_ssize_t kk, i, a, b, n = omega.shape[0]
    cdef double value
    for kk in range(ends.shape[0]):
        a, b = ends[kk, 0], ends[kk, 1]
        value = 0.0
        for i in range(n):
            value += ex[i] * (omega[i, a] - omega[i, b]) * (omega[i, a] - omega[i, b])
        a_term[kk] = value / zsum


cdef double* _subtract_terms(const double[:, ::1] points, const Py_ssize_t[:, ::1] ends,
                             const _Constraints* c, Py_ssize_t j, double z, double* Q,
                             double* Wc, double* Wn, double* offset,
                             Work* wk) noexcept nogil:
    """``S ← S − z Σ_k coef[k] T[k] T[k]ᵀ`` over constraint j's terms, one eigen update
    each; returns the buffer that holds W afterwards (the update swaps ``Wc``, ``Wn``).
    Each term's difference goes to ``wk.v``, which the eigen update does not read."""
    cdef Py_ssize_t kk, i, n = points.shape[1]
    cdef int ni = <int> n, one = 1
    cdef double nw
    cdef double* swap
    for kk in range(c.start[j], c.start[j + 1]):
        for i in range(n):
            wk.v[i] = points[ends[kk, 0], i] - points[ends[kk, 1], i]
        for i in range(n):
            wk.w[i] = ddot(&ni, Wc + i * n, &one, wk.v, &one)
        nw = dnrm2(&ni, wk.w, &one)
        if not (0.0 < nw < INFINITY) or c.coef[kk] == 0.0 or z == 0.0:
            continue
        for i in range(n):
            wk.zhat[i] = wk.w[i] / nw
        wk.roots_valid = False
        _decompose(wk, Q, wk.zhat, -z * c.coef[kk] * nw * nw)
        _apply(wk, Q, Wc, Wn)
        swap = Wc
        Wc = Wn
        Wn = swap
        _normalize_top(Q, n, offset)
    return Wc


def definite_boost_steps(const double[:, ::1] points, const Py_ssize_t[:, ::1] ends,
                         const double[::1] coef, const Py_ssize_t[::1] start,
                         const double[::1] shift, const double[::1] lmin,
                         const double[::1] lmax,
                         double[::1] dual, double[::1] Q, double[::1, :] W, *,
                         double[::1] offset, Py_ssize_t max_steps, double tol,
                         bint correction, double floor, cap=None):
    """Greedy DefiniteBoost steps with approximate projections.

    The steps of Tsuda, Rätsch & Warmuth (2005), §4.2. Constraint ``j`` is
    ``tr(W C_j) <= 0`` for the trace-one ``W = e^S / tr e^S``, with
    ``C_j = Σ_k coef[k] T[k] T[k]ᵀ − shift[j] I`` over ``k`` in
    ``start[j]:start[j + 1]``, each term a difference of two rows of ``points``,
    ``T[k] = points[ends[k, 0]] − points[ends[k, 1]]`` (pairs share their samples, so
    ``Wᵀ T[k]`` for every term costs one product with the samples, not one per term),
    and the eigenvalues of ``C_j`` in ``[lmin[j], lmax[j]]``
    (``lmin < 0 < lmax``; other constraints are never chosen). ``S = W diag(Q) Wᵀ``
    (``Q`` ascending with maximum 0, ``W`` column-major; updated in place).

    Each step picks the constraint with the largest ``r_j = tr(W C_j)`` among the
    violated ones (with ``correction``, also among those with ``dual > 0`` and
    ``r_j < 0``, by ``|r_j|``), takes the step
    ``α = log((1 − r/lmin) / (1 − r/lmax)) / (lmax − lmin)`` (eq. 13, signs derived in
    ALGORITHMS.md §4), clipped so that ``0 ≤ dual[j] ≤ cap[j]``, and sets
    ``S ← S − α Σ_k coef[k] T[k] T[k]ᵀ`` (the multiple of I only rescales W), one rank-one
    eigen update per term; ``dual[j] += α``. ``cap`` (default: all infinite) bounds the
    duals: this is the slack problem ``min D_vN(W, W₁) + Σ_j cap_j max(0, tr(W C_j))``,
    whose dual (eq. 9 over the box ``0 ≤ γ ≤ cap``) the steps minimise; a violated
    constraint whose dual sits at its cap is no longer a candidate. It stops when the largest
    ``|r_j| / |shift_j|`` among those candidates (``|r_j| / (lmax_j − lmin_j)`` where
    ``shift_j = 0``) is at most ``tol``, or after ``max_steps`` steps.

    ``offset[0]`` tracks the dual objective (eq. 9):
    ``log tr exp(log W₁ − Σ_j dual_j C_j) = log Σ e^Q + offset[0] + Σ_j dual_j shift_j``
    when ``Q, W`` start from ``log W₁``. The loop also stops when it falls below
    ``floor``: with ``floor = log λmin(W₁)`` that proves the constraints infeasible
    (weak duality: a feasible trace-one W has ``D_vN(W, W₁) ≤ −log λmin(W₁)``).

    Returns ``(steps, residual, dual_objective)``: the steps taken, the largest
    normalised violation when the loop ended and the dual objective.
    """
    cdef Py_ssize_t n = Q.shape[0], nt = ends.shape[0], m = shift.shape[0]
    cdef Py_ssize_t n_points = points.shape[0], step = 0, j, i
    cdef int ni = <int> n, npi = <int> n_points
    cdef double alpha = 1.0, beta = 0.0, z, rj, residual = INFINITY
    cdef double sum_gb = 0.0, zsum, dual_value = 0.0
    cdef double[::1] upper = np.full(m, INFINITY) if cap is None else cap
    if W.shape[0] != n or W.shape[1] != n or points.shape[1] != n:
        raise ValueError("points, Q and W must describe the same dimension")
    if ends.shape[1] != 2 or (nt > 0 and not (0 <= np.min(ends) and np.max(ends) < n_points)):
        raise ValueError("ends must hold pairs of row indices of points")
    if start.shape[0] != m + 1 or start[m] != nt or coef.shape[0] != nt:
        raise ValueError("start must delimit the terms of each constraint")
    if (lmin.shape[0] != m or lmax.shape[0] != m or dual.shape[0] != m
            or upper.shape[0] != m):
        raise ValueError("lmin, lmax, dual and cap need one entry per constraint")
    _check_sorted(Q)
    if n == 0 or m == 0:
        return 0, 0.0, 0.0
    cdef double[::1, :] omega = np.empty((n, max(n_points, 1)), order="F")
    cdef double[::1] a_term = np.empty(max(nt, 1))
    cdef double[::1] r = np.empty(m)
    cdef double[::1] ex = np.empty(n)
    cdef _Workspace space = _Workspace(n)
    cdef double* Wc = &W[0, 0]
    cdef _Constraints c
    c.m, c.coef, c.start, c.shift = m, &coef[0] if nt else NULL, &start[0], &shift[0]
    c.lmin, c.lmax, c.cap = &lmin[0], &lmax[0], &upper[0]
    for j in range(m):
        sum_gb += dual[j] * shift[j]
    with nogil:
        for step in range(max_steps + 1):
            # r_j = tr(W C_j): all terms at once from Ω = Wᵀ pointsᵀ.
            zsum = 0.0
            for i in range(n):
                ex[i] = exp(Q[i])
                zsum += ex[i]
            dual_value = log(zsum) + offset[0] + sum_gb
            if dual_value < floor:
                break
            if nt > 0:
                dgemm(b"T", b"N", &ni, &npi, &ni, &alpha, Wc, &ni, &points[0, 0], &ni,
                      &beta, &omega[0, 0], &ni)
            _term_traces(points, ends, omega, &ex[0], zsum, &a_term[0])
            j = _most_violated(&c, &dual[0], &a_term[0], &r[0], correction, &residual)
            if j < 0 or residual <= tol or step == max_steps:
                break
            rj = r[j]
            # r_j reaches lmax (or lmin) only for a singular W: cap the step.
            z = log(max(1.0 - rj / lmin[j], DBL_EPSILON)
                    / max(1.0 - rj / lmax[j], DBL_EPSILON)) / (lmax[j] - lmin[j])
            if correction and z < -dual[j]:
                z = -dual[j]
            if z >= upper[j] - dual[j]:
                z = upper[j] - dual[j]
                dual[j] = upper[j]
            else:
                dual[j] += z
            sum_gb += z * shift[j]
            Wc = _subtract_terms(points, ends, &c, j, z, &Q[0], Wc,
                                 space.w.W2 if Wc == &W[0, 0] else &W[0, 0],
                                 &offset[0], &space.w)
        if Wc != &W[0, 0]:
            memcpy(&W[0, 0], Wc, n * n * sizeof(double))
    return step, residual, dual_value
