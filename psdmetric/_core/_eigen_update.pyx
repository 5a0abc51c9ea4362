# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled eigen updates ``diag(q) + ρ w wᵀ``, shared by the von Neumann-family kernels.

The von Neumann learner, DefiniteBoost and MEG all keep a matrix as ``W exp(Q) Wᵀ``
(``W`` r×r orthogonal, stored column-major; ``Q`` sorted ascending) and change its
logarithm by a rank-one term: with ``w = Wᵀ v`` the new logarithm is
``W (diag(Q) + ρ w wᵀ) Wᵀ``, so one diagonal-plus-rank-one eigenproblem
``diag(Q) + ρ w wᵀ = U diag(Θ) Uᵀ`` gives ``Q ← Θ`` and ``W ← W U``.

The eigenproblem (Golub 1973; Gu and Eisenstat 1994; Demmel 1997 §5.3.3):

1. deflation, as LAPACK's dlaed2: a component of w below roundoff leaves its pole an
   eigenvalue; two (nearly) equal poles are merged by a Givens rotation of W's columns;
2. the k remaining eigenvalues are the roots of the secular equation
   ``1/ρ + Σ w_j² / (q_j − λ) = 0``, solved in :mod:`psdmetric._core._secular`;
3. eigenvectors by Gu and Eisenstat: w is recomputed from the roots (Löwner's formula),
   and the vectors ``(q − λ_i)⁻¹ ŵ`` are then orthogonal to working precision;
4. ``W ← W U``: one dgemm on the non-deflated columns (rotations for the rest).

ρ < 0 is solved as ``−(−diag(q) + |ρ| w wᵀ)``: the poles are reflected and reversed.
"""
import numpy as np

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, exp, fabs, hypot, log, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemm, drot

from ._eigen_workspace cimport Work
from ._secular cimport _secular

# Below this gap the divided difference (e^a − e^b)/(a − b) loses more than 1e-11 to
# cancellation; the midpoint value is then accurate to gap²/24.
cdef double DD_GAP = 1e-5


cdef class _Workspace:
    """Owns the buffers of one :c:type:`Work` of dimension n."""

    def __cinit__(self, Py_ssize_t n):
        cdef Py_ssize_t nn = max(n, 1)
        self.dbuf = <double*> PyMem_Malloc((32 * nn + 4 * nn * nn) * sizeof(double))
        self.ibuf = <Py_ssize_t*> PyMem_Malloc(12 * nn * sizeof(Py_ssize_t))
        if self.dbuf == NULL or self.ibuf == NULL:
            raise MemoryError()
        cdef double* d = self.dbuf
        cdef Py_ssize_t* i = self.ibuf
        self.w.n = n
        self.w.all_poles = d; d += nn
        self.w.all_components = d; d += nn
        self.w.p = d; d += nn
        self.w.y = d; d += nn
        self.w.y_squared = d; d += nn
        self.w.dval = d; d += nn
        self.w.dwt = d; d += nn
        self.w.rotc = d; d += nn
        self.w.rots = d; d += nn
        self.w.porg = d; d += nn
        self.w.tau = d; d += nn
        self.w.lb = d; d += nn
        self.w.ub = d; d += nn
        self.w.psi = d; d += nn
        self.w.dpsi = d; d += nn
        self.w.phi = d; d += nn
        self.w.dphi = d; d += nn
        self.w.lam = d; d += nn
        self.w.wt = d; d += nn
        self.w.ex = d; d += nn
        self.w.acc = d; d += nn
        self.w.zhat = d; d += nn
        self.w.v = d; d += nn
        self.w.w = d; d += nn
        self.w.what = d; d += nn
        self.w.qnew = d; d += nn
        self.w.active_org = d; d += nn
        self.w.active_tau = d; d += nn
        self.w.active_psi = d; d += nn
        self.w.active_dpsi = d; d += nn
        self.w.active_phi = d; d += nn
        self.w.active_dphi = d; d += nn
        self.w.A = d; d += nn * nn
        self.w.B = d; d += nn * nn
        self.w.S = d; d += nn * nn
        self.w.W2 = d; d += nn * nn
        self.w.col = i; i += nn
        self.w.ndpos = i; i += nn
        self.w.dpos = i; i += nn
        self.w.rota = i; i += nn
        self.w.rotb = i; i += nn
        self.w.org = i; i += nn
        self.w.prev_ndpos = i; i += nn
        self.w.dord = i; i += nn
        self.w.act = i; i += nn
        self.w.roots_valid = False
        self.w.n_passes = 0
        self.w.n_evaluations = 0

    def __dealloc__(self):
        PyMem_Free(self.dbuf)
        PyMem_Free(self.ibuf)


# --------------------------------------------------------------------------------------
# The diagonal-plus-rank-one eigenproblem
# --------------------------------------------------------------------------------------

cdef void _deflate(Work* wk, const double* q, const double* zhat, double t) noexcept nogil:
    """Set up the problem diag(q) + t ẑẑᵀ (‖ẑ‖ = 1, q ascending) and deflate it."""
    cdef Py_ssize_t n = wk.n, j, pj = -1
    cdef double pmax = 0.0, tol_z, tol_d, s, c, r, gap, tmp
    if t >= 0.0:
        wk.sign = 1.0
        wk.rho = t
        for j in range(n):
            wk.col[j] = j
            wk.all_poles[j] = q[j]
            wk.all_components[j] = zhat[j]
    else:
        wk.sign = -1.0
        wk.rho = -t
        for j in range(n):
            wk.col[j] = n - 1 - j
            wk.all_poles[j] = -q[n - 1 - j]
            wk.all_components[j] = zhat[n - 1 - j]
    for j in range(n):
        if fabs(wk.all_poles[j]) > pmax:
            pmax = fabs(wk.all_poles[j])
    # Dropping y_j perturbs the matrix by ρ|y_j|; merging two poles by their gap times
    # c·s, independent of ρ (so a huge ρ cannot blur the small eigenvalues).
    tol_z = 8.0 * DBL_EPSILON * max(pmax, wk.rho)
    tol_d = 8.0 * DBL_EPSILON * pmax
    wk.k = 0
    wk.ndefl = 0
    wk.nrot = 0
    for j in range(n):
        if wk.rho * fabs(wk.all_components[j]) <= tol_z:
            wk.dpos[wk.ndefl] = j
            wk.dval[wk.ndefl] = wk.all_poles[j]
            wk.dwt[wk.ndefl] = wk.all_components[j] * wk.all_components[j]
            wk.ndefl += 1
            continue
        if pj < 0:
            pj = j
            continue
        s = wk.all_components[pj]
        c = wk.all_components[j]
        r = hypot(c, s)
        gap = wk.all_poles[j] - wk.all_poles[pj]
        c = c / r
        s = -s / r
        if fabs(gap * c * s) <= tol_d:
            # Rotate (pj, j) so that pj carries no weight and deflates.
            wk.all_components[j] = r
            wk.all_components[pj] = 0.0
            wk.rota[wk.nrot] = pj
            wk.rotb[wk.nrot] = j
            wk.rotc[wk.nrot] = c
            wk.rots[wk.nrot] = s
            wk.nrot += 1
            tmp = wk.all_poles[pj] * c * c + wk.all_poles[j] * s * s
            wk.all_poles[j] = wk.all_poles[pj] * s * s + wk.all_poles[j] * c * c
            wk.all_poles[pj] = tmp
            wk.dpos[wk.ndefl] = pj
            wk.dval[wk.ndefl] = tmp
            wk.dwt[wk.ndefl] = 0.0
            wk.ndefl += 1
        else:
            wk.ndpos[wk.k] = pj
            wk.k += 1
        pj = j
    if pj >= 0:
        wk.ndpos[wk.k] = pj
        wk.k += 1
    for j in range(wk.k):
        wk.p[j] = wk.all_poles[wk.ndpos[j]]
        wk.y[j] = wk.all_components[wk.ndpos[j]]
        wk.y_squared[j] = wk.y[j] * wk.y[j]


cdef extern from "_eigen_simd.h" nogil:
    void psdmetric_cauchy_vectors(Py_ssize_t k, const double* p, const double* p_org,
                                  const double* tau, const double* y, double* S,
                                  double* prod)
    double psdmetric_exp_frechet(Py_ssize_t m, const double* lam, const double* ex,
                                 const double* wt, double* acc, double dd_gap)


cdef void _vectors(Work* wk) noexcept nogil:
    """Eigenvectors, column-major S[j + i*k] (pole j, root i), by Gu and Eisenstat.

    ŵ is recomputed from the roots by Löwner's formula, so that the vectors
    ``(p − λ_i)⁻¹ ŵ`` are orthogonal to working precision (in ``_eigen_simd.h``).
    """
    if wk.k == 1:
        wk.S[0] = 1.0
        return
    psdmetric_cauchy_vectors(wk.k, wk.p, wk.porg, wk.tau, wk.y, wk.S, wk.what)


cdef int _decompose(Work* wk, const double* q, const double* zhat, double t) noexcept nogil:
    """Eigenvalues of diag(q) + t ẑẑᵀ; warm-started from the last call when possible."""
    cdef Py_ssize_t j
    cdef bint warm
    cdef int passes = 0
    _deflate(wk, q, zhat, t)
    warm = wk.roots_valid and wk.k == wk.prev_k and wk.sign == wk.prev_sign
    if warm:
        for j in range(wk.k):
            if wk.ndpos[j] != wk.prev_ndpos[j]:
                warm = False
                break
    if wk.k > 0:
        passes = _secular(wk, warm)
    wk.prev_k = wk.k
    wk.prev_sign = wk.sign
    for j in range(wk.k):
        wk.prev_ndpos[j] = wk.ndpos[j]
    wk.roots_valid = True
    return passes


cdef void _spectrum(Work* wk) noexcept nogil:
    """Eigenvalues and weights (u_iᵀ ẑ)² of the last decomposition, weight-0 ones left out."""
    cdef Py_ssize_t i, m = 0
    cdef double rho2 = wk.rho * wk.rho
    for i in range(wk.k):
        wk.lam[m] = wk.sign * (wk.porg[i] + wk.tau[i])
        # (u_iᵀ y)² = 1 / (ρ² Σ_j y_j² / (p_j − λ_i)²) by the secular equation.
        wk.wt[m] = 1.0 / (rho2 * (wk.dpsi[i] + wk.dphi[i]))
        m += 1
    for i in range(wk.ndefl):
        if wk.dwt[i] > 0.0:
            wk.lam[m] = wk.sign * wk.dval[i]
            wk.wt[m] = wk.dwt[i]
            m += 1
    wk.m = m


cdef void _apply(Work* wk, double* Q, double* Wc, double* Wn) noexcept nogil:
    """Q ← Θ (ascending), Wn ← Wc U for the last decomposition (Wc is rotated in place)."""
    cdef Py_ssize_t n = wk.n, k = wk.k, i, j, r, a = 0, pos, inb, idf, nd_i = 0
    cdef int ni = <int> n, ki = <int> k, one = 1
    cdef double c, s, alpha = 1.0, beta = 0.0, vnd = 0.0, vdf = 0.0
    cdef Py_ssize_t* dord = wk.dord
    if wk.ndefl == 0 and wk.sign > 0:
        # Nothing deflated (the common case once Q is spread) and solver order = W's
        # order: one product straight from Wc into Wn, no gather and scatter copies.
        # (ρ < 0 reverses the order; folding that into S would change the summation
        # order of the product and so the last bits of every learner's results.)
        _vectors(wk)
        dgemm(b"N", b"N", &ni, &ki, &ki, &alpha, Wc, &ni, wk.S, &ki, &beta, Wn, &ni)
        for pos in range(n):
            Q[pos] = wk.porg[pos] + wk.tau[pos]
        return
    for r in range(wk.nrot):
        c = wk.rotc[r]
        s = wk.rots[r]
        drot(&ni, Wc + wk.col[wk.rota[r]] * n, &one, Wc + wk.col[wk.rotb[r]] * n, &one, &c, &s)
    if k > 0:
        _vectors(wk)
        for j in range(k):
            memcpy(wk.A + j * n, Wc + wk.col[wk.ndpos[j]] * n, n * sizeof(double))
        dgemm(b"N", b"N", &ni, &ki, &ki, &alpha, wk.A, &ni, wk.S, &ki, &beta, wk.B, &ni)
    # Deflated eigenvalues in ascending solver order (insertion sort: nearly sorted).
    for i in range(wk.ndefl):
        j = i
        while j > 0 and wk.dval[dord[j - 1]] > wk.dval[i]:
            dord[j] = dord[j - 1]
            j -= 1
        dord[j] = i
    # Merge both lists into ascending order of the actual eigenvalues (sign * value).
    inb = 0
    idf = 0
    for pos in range(n):
        if inb < k:
            nd_i = inb if wk.sign > 0 else k - 1 - inb
            vnd = wk.sign * (wk.porg[nd_i] + wk.tau[nd_i])
        if idf < wk.ndefl:
            a = dord[idf] if wk.sign > 0 else dord[wk.ndefl - 1 - idf]
            vdf = wk.sign * wk.dval[a]
        if inb < k and (idf >= wk.ndefl or vnd <= vdf):
            Q[pos] = vnd
            memcpy(Wn + pos * n, wk.B + nd_i * n, n * sizeof(double))
            inb += 1
        else:
            Q[pos] = vdf
            memcpy(Wn + pos * n, Wc + wk.col[wk.dpos[a]] * n, n * sizeof(double))
            idf += 1


cdef void _moments(Work* wk, double* logphi, double* dlogphi, double* logtrace,
                   double* ratio, const double* alleig, bint with_slope) noexcept nogil:
    """log φ, (log φ)', log tr e^M and φ / tr e^M for φ = Σ wt e^lam (the spectrum in wk).

    ``alleig`` holds all n eigenvalues (for the trace); (log φ)' needs O(m²) divided
    differences and is only formed when ``with_slope``.
    """
    cdef Py_ssize_t m = wk.m, n = wk.n, i
    cdef double lmax = -INFINITY, amax = -INFINITY, s0 = 0.0, t0 = 0.0, s1
    cdef double* lam = wk.lam
    cdef double* wt = wk.wt
    cdef double* ex = wk.ex
    for i in range(m):
        if lam[i] > lmax:
            lmax = lam[i]
    for i in range(m):
        ex[i] = exp(lam[i] - lmax)
        s0 += wt[i] * ex[i]
    logphi[0] = lmax + log(s0)
    for i in range(n):
        if alleig[i] > amax:
            amax = alleig[i]
    for i in range(n):
        t0 += exp(alleig[i] - amax)
    logtrace[0] = amax + log(t0)
    ratio[0] = exp(logphi[0] - logtrace[0])
    if not with_slope:
        return
    # φ' = Σ_ij wt_i wt_j (e^λi − e^λj)/(λi − λj): the Fréchet derivative of wᵀe^M w.
    s1 = psdmetric_exp_frechet(m, lam, ex, wt, wk.acc, DD_GAP)
    dlogphi[0] = s1 / s0


cdef void _eigenvalues(Work* wk, double* out) noexcept nogil:
    """All n eigenvalues of the last decomposition, unordered."""
    cdef Py_ssize_t i
    for i in range(wk.k):
        out[i] = wk.sign * (wk.porg[i] + wk.tau[i])
    for i in range(wk.ndefl):
        out[wk.k + i] = wk.sign * wk.dval[i]


cdef void _unit_spectrum(Work* wk, const double* Q, double nw) noexcept nogil:
    """ẑ = w/‖w‖ and the spectrum of diag(Q) seen from ẑ (weights ẑ², zeros left out)."""
    cdef Py_ssize_t kk, m = 0
    for kk in range(wk.n):
        wk.zhat[kk] = wk.w[kk] / nw
        if wk.zhat[kk] != 0.0:
            wk.lam[m] = Q[kk]
            wk.wt[m] = wk.zhat[kk] * wk.zhat[kk]
            m += 1
    wk.m = m


cdef _check_sorted(const double[::1] Q):
    cdef Py_ssize_t i
    for i in range(1, Q.shape[0]):
        if not Q[i - 1] <= Q[i]:
            raise ValueError("Q must be sorted in ascending order")



# --------------------------------------------------------------------------------------
# The test entry point
# --------------------------------------------------------------------------------------

def rank_one_eigen_update(const double[::1] q, const double[::1] w, double rho):
    """Eigendecomposition of ``diag(q) + rho * w wᵀ`` by the compiled solver.

    Runs the same deflation, secular solver, Gu–Eisenstat vectors and ``W ← W U``
    accumulation as the learners, starting from ``W = I``.

    Returns
    -------
    theta : ndarray of shape (n,)
        Eigenvalues in ascending order.
    U : ndarray of shape (n, n)
        Orthonormal eigenvectors (columns), in the order of ``theta``.
    """
    cdef Py_ssize_t n = q.shape[0], i
    if w.shape[0] != n:
        raise ValueError("q and w must have the same length")
    sort = np.argsort(np.asarray(q), kind="stable")
    cdef double[::1] qs = np.ascontiguousarray(np.asarray(q)[sort])
    cdef double[::1] ws_ = np.ascontiguousarray(np.asarray(w)[sort])
    cdef double[::1, :] W = np.eye(n, order="F")
    theta = np.asarray(qs).copy()
    if n == 0:
        return theta, np.eye(0)
    cdef double nw = float(np.linalg.norm(ws_))
    cdef _Workspace space = _Workspace(n)
    cdef Work* wk = &space.w
    cdef double[::1] th = theta
    if nw > 0.0 and rho != 0.0:
        for i in range(n):
            wk.zhat[i] = ws_[i] / nw
        with nogil:
            _decompose(wk, &qs[0], wk.zhat, rho * nw * nw)
            _apply(wk, &th[0], &W[0, 0], wk.W2)
            memcpy(&W[0, 0], wk.W2, n * n * sizeof(double))
    U = np.empty((n, n))
    U[sort] = np.asarray(W)
    return theta, U
