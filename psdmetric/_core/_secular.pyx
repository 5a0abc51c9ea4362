# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""The secular equation of ``diag(p) + ρ y yᵀ`` (ρ > 0, p ascending, no deflation left).

Its k eigenvalues are the roots of ``1/ρ + Σ y_j² / (p_j − λ) = 0``, one per interval;
each is iterated relative to its nearest pole (the "middle way" of Li 1994, with
bisection safeguards), so every ``p_j − λ_i`` is exact to working precision. All k roots
are iterated together, one O(k²) pass per iteration that loops over roots innermost
and so vectorises. Used by :mod:`psdmetric._core._eigen_update`.
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, fabs, sqrt

from ._eigen_workspace cimport Work

# The middle way converges quadratically; dlaed4 allows 30 iterations, a cold start with
# a bad initial guess may need a few bisections more.
cdef int MAX_SECULAR_PASSES = 60


cdef extern from "_eigen_simd.h" nogil:
    void psdmetric_secular_sums(Py_ssize_t k, Py_ssize_t na, const double* p,
                                const double* y_squared, const Py_ssize_t* act,
                                const double* p_org, const double* tau, double* psi,
                                double* dpsi, double* phi, double* dphi)


cdef void _secular_sums(Work* wk, Py_ssize_t na) noexcept nogil:
    """Secular sums for the active roots ``act[0:na]`` (ascending) at their current tau.

    Slot ``a`` gets Σ_{j<=i} y_j²/(p_j − λ_i) (psi) and Σ_{j>i} (phi) for root
    ``i = act[a]``, with their derivatives (in ``_eigen_simd.h``, vectorised over roots).
    """
    psdmetric_secular_sums(wk.k, na, wk.p, wk.y_squared, wk.act, wk.active_org,
                           wk.active_tau, wk.active_psi, wk.active_dpsi, wk.active_phi,
                           wk.active_dphi)
    wk.n_passes += 1


cdef inline double _clamp_into(double t, double lo, double hi) noexcept nogil:
    """t if strictly inside (lo, hi), else the midpoint."""
    if lo < t < hi:
        return t
    return 0.5 * (lo + hi)


cdef inline void _activate_all(Work* wk) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(wk.k):
        wk.act[i] = i
        wk.active_org[i] = wk.porg[i]
        wk.active_tau[i] = wk.tau[i]


cdef double _largest_root_bound(Work* wk) noexcept nogil:
    """The largest root lies in (p[k-1], p[k-1] + ρ Σ y²]."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    for i in range(wk.k):
        total += wk.y_squared[i]
    return total * wk.rho


cdef void _cold_start(Work* wk) noexcept nogil:
    """Origins and initial guesses from the secular function at each interval's middle
    (as LAPACK's dlaed4): the rest of the sum frozen there, the two nearest poles exact."""
    cdef Py_ssize_t k = wk.k, i
    cdef double rinv = 1.0 / wk.rho, total = _largest_root_bound(wk)
    cdef double dl, mid, f, c, a, b, disc, t0
    for i in range(k - 1):
        wk.org[i] = i
        wk.porg[i] = wk.p[i]
        wk.tau[i] = 0.5 * (wk.p[i + 1] - wk.p[i])
    wk.org[k - 1] = k - 1
    wk.porg[k - 1] = wk.p[k - 1]
    wk.tau[k - 1] = total if k == 1 else 0.5 * total
    if k == 1:
        wk.lb[0] = total
        wk.ub[0] = total
        return
    _activate_all(wk)
    _secular_sums(wk, k)
    for i in range(k - 1):
        dl = wk.p[i + 1] - wk.p[i]
        mid = 0.5 * dl
        f = rinv + wk.active_psi[i] + wk.active_phi[i]
        c = f + wk.y_squared[i] / mid - wk.y_squared[i + 1] / mid
        if f >= 0.0:
            a = c * dl + wk.y_squared[i] + wk.y_squared[i + 1]
            b = wk.y_squared[i] * dl
            disc = sqrt(fabs(a * a - 4.0 * b * c))
            t0 = 2.0 * b / (a + disc) if a > 0.0 else (a - disc) / (2.0 * c)
            wk.lb[i] = 0.0
            wk.ub[i] = mid
        else:
            wk.org[i] = i + 1
            wk.porg[i] = wk.p[i + 1]
            a = c * dl - wk.y_squared[i] - wk.y_squared[i + 1]
            b = wk.y_squared[i + 1] * dl
            disc = sqrt(fabs(a * a + 4.0 * b * c))
            t0 = 2.0 * b / (a - disc) if a < 0.0 else -(a + disc) / (2.0 * c)
            wk.lb[i] = -mid
            wk.ub[i] = 0.0
        wk.tau[i] = _clamp_into(t0, wk.lb[i], wk.ub[i])
    i = k - 1
    mid = 0.5 * total
    dl = wk.p[k - 1] - wk.p[k - 2]
    f = rinv + wk.active_psi[i]
    c = f - wk.y_squared[k - 2] / (-dl - mid) + wk.y_squared[k - 1] / mid
    a = -c * dl + wk.y_squared[k - 2] + wk.y_squared[k - 1]
    b = wk.y_squared[k - 1] * dl
    disc = sqrt(fabs(a * a + 4.0 * b * c))
    t0 = 2.0 * b / (disc - a) if a < 0.0 else (a + disc) / (2.0 * c)
    if f <= 0.0:
        wk.lb[i] = mid
        wk.ub[i] = total
    else:
        wk.lb[i] = 0.0
        wk.ub[i] = mid
    wk.tau[i] = _clamp_into(t0, wk.lb[i], wk.ub[i])
    _activate_all(wk)


cdef inline bint _accept(Work* wk, Py_ssize_t i, double ps, double dps, double ph,
                         double dph) noexcept nogil:
    """Root i has converged: keep its secular sums (they give its eigenvector's weight)."""
    wk.psi[i] = ps
    wk.dpsi[i] = dps
    wk.phi[i] = ph
    wk.dphi[i] = dph
    return True


cdef bint _converged_or_step(Work* wk, Py_ssize_t i, double ps, double dps, double ph,
                             double dph) noexcept nogil:
    """Test root i with the secular sums at its tau; if not converged, move it.

    Converged roots keep their sums (the next warm start and the weights use them).
    The step is the middle way of Li (1994): the secular function modelled by two poles
    at the ends of the interval matching its value and slope, safeguarded by bisection.
    """
    cdef Py_ssize_t k = wk.k
    cdef double rinv = 1.0 / wk.rho, f = rinv + ps + ph, df = dps + dph
    cdef double err, d1, d2, sp, sq, a, b, c, disc, eta, t1, dl, tau = wk.tau[i]
    # Rounding bound of f as in LAPACK's dlaed4 (a root on a pole, f infinite, never passes).
    err = 8.0 * (ph - ps) + 2.0 * rinv + 3.0 * fabs(tau) * df
    if fabs(f) <= DBL_EPSILON * err and fabs(f) < INFINITY:
        return _accept(wk, i, ps, dps, ph, dph)
    if f < 0.0:
        wk.lb[i] = max(wk.lb[i], tau)
    else:
        wk.ub[i] = min(wk.ub[i], tau)
    if (wk.ub[i] - wk.lb[i] <= 4.0 * DBL_EPSILON * max(fabs(wk.lb[i]), fabs(wk.ub[i]))
            and fabs(f) < INFINITY):
        # Bracketed to the last bit: f cannot be resolved further.
        return _accept(wk, i, ps, dps, ph, dph)
    if i < k - 1:
        d1 = (wk.p[i] - wk.porg[i]) - tau
        d2 = (wk.p[i + 1] - wk.porg[i]) - tau
        sp = dps
        sq = dph
    else:
        d1 = (wk.p[k - 2] - wk.porg[i]) - tau
        d2 = -tau
        sq = wk.y_squared[k - 1] / (tau * tau)
        sp = df - sq
    c = f - d1 * sp - d2 * sq
    a = (d1 + d2) * f - d1 * d2 * df
    b = d1 * d2 * f
    if c == 0.0:
        eta = b / a if a != 0.0 else -f / df
    else:
        disc = sqrt(fabs(a * a - 4.0 * b * c))
        if i < k - 1:
            eta = (a - disc) / (2.0 * c) if a <= 0.0 else 2.0 * b / (a + disc)
        else:
            eta = (a + disc) / (2.0 * c) if a >= 0.0 else 2.0 * b / (a - disc)
    if f * eta >= 0.0 or eta != eta:
        eta = -f / df
    t1 = tau + eta
    # Strictly inside the bracket: its ends are poles or points already evaluated.
    if not (wk.lb[i] < t1 < wk.ub[i]):
        t1 = 0.5 * (tau + (wk.ub[i] if f < 0.0 else wk.lb[i]))
        if not (wk.lb[i] < t1 < wk.ub[i]) and fabs(f) < INFINITY:
            # No other double inside the bracket: tau is the root to working precision.
            return _accept(wk, i, ps, dps, ph, dph)
    if i < k - 1:
        # Keep the nearer pole as origin (a warm start may cross the middle).
        dl = wk.p[i + 1] - wk.p[i]
        if wk.org[i] == i and t1 > 0.5 * dl:
            wk.org[i] = i + 1
            wk.porg[i] = wk.p[i + 1]
            t1 -= dl
            wk.lb[i] -= dl
            wk.ub[i] -= dl
        elif wk.org[i] == i + 1 and t1 < -0.5 * dl:
            wk.org[i] = i
            wk.porg[i] = wk.p[i]
            t1 += dl
            wk.lb[i] += dl
            wk.ub[i] += dl
    wk.tau[i] = t1
    return False


cdef Py_ssize_t _warm_start(Work* wk) noexcept nogil:
    """First step for a new rho from the sums of the last solve (same poles and weights):
    the secular function only changes by the constant 1/ρ, so no pass is needed.
    Returns the number of roots left active."""
    cdef Py_ssize_t k = wk.k, i, na = 0
    cdef double dl, total = _largest_root_bound(wk)
    for i in range(k):
        # Rotations may have merged poles to slightly different values this time.
        wk.porg[i] = wk.p[wk.org[i]]
    for i in range(k - 1):
        dl = wk.p[i + 1] - wk.p[i]
        if wk.org[i] == i:
            wk.lb[i] = 0.0
            wk.ub[i] = dl
        else:
            wk.lb[i] = -dl
            wk.ub[i] = 0.0
    wk.lb[k - 1] = 0.0
    wk.ub[k - 1] = total
    if k == 1:
        wk.tau[0] = total
        wk.lb[0] = total
        return 0
    for i in range(k):
        if not (wk.lb[i] < wk.tau[i] < wk.ub[i]):
            wk.tau[i] = _clamp_into(wk.tau[i], wk.lb[i], wk.ub[i])
        elif _converged_or_step(wk, i, wk.psi[i], wk.dpsi[i], wk.phi[i], wk.dphi[i]):
            continue
        wk.act[na] = i
        wk.active_org[na] = wk.porg[i]
        wk.active_tau[na] = wk.tau[i]
        na += 1
    return na


cdef int _secular(Work* wk, bint warm) noexcept nogil:
    """Iterate the k roots until each passes the rounding test; only unconverged roots
    take part in a pass. Returns the number of passes, or -1 if some root failed."""
    cdef Py_ssize_t k = wk.k, a, na, keep, i
    cdef int passes
    if warm:
        na = _warm_start(wk)
    else:
        _cold_start(wk)
        na = k
    if k == 1:
        # λ = p + ρ y² exactly; the sums below give its weight.
        wk.act[0] = 0
        wk.active_org[0] = wk.porg[0]
        wk.active_tau[0] = wk.tau[0]
        _secular_sums(wk, 1)
        wk.psi[0] = wk.active_psi[0]
        wk.dpsi[0] = wk.active_dpsi[0]
        wk.phi[0] = 0.0
        wk.dphi[0] = 0.0
        return 1
    for passes in range(1, MAX_SECULAR_PASSES + 1):
        if na == 0:
            return passes - 1
        _secular_sums(wk, na)
        keep = 0
        for a in range(na):
            i = wk.act[a]
            if not _converged_or_step(wk, i, wk.active_psi[a], wk.active_dpsi[a], wk.active_phi[a],
                                      wk.active_dphi[a]):
                wk.act[keep] = i
                wk.active_org[keep] = wk.porg[i]
                wk.active_tau[keep] = wk.tau[i]
                keep += 1
        na = keep
    return -1 if na > 0 else MAX_SECULAR_PASSES
