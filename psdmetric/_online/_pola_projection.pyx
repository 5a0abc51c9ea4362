# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""POLA's projection onto the PSD cone after a similar-pair step, without factorising A.

``Â = A − α v vᵀ`` (A ⪰ 0, α > 0) has at most one negative eigenvalue λ (interlacing);
the projection is ``Â − λ u uᵀ``. λ solves the secular equation ``α vᵀ(A − λI)⁻¹v = 1``
on ``λ < 0``. The solves with ``A − λI`` use a tridiagonal reduction ``A = W T Wᵀ``
refreshed every ``capacity`` rank-one terms, with the terms since kept as ``W U G Uᵀ Wᵀ``
(U orthonormal, k columns, G k×k symmetric: a term along a direction already held, such as
a projection's eigenvector, changes only G). By Woodbury, ``(D + U G Uᵀ)⁻¹ = D⁻¹ −
D⁻¹U (I + G UᵀD⁻¹U)⁻¹ G UᵀD⁻¹`` with ``D = T − λI ≻ 0`` (its ``L D Lᵀ`` costs O(m)): an
O(m k²) solve, against the O(m³) Cholesky factorisation of ``A − λI``. A refresh
(``dsytrd``: O(m³), W kept as its Householder reflectors) is shared by ``capacity ≈
m^{2/3}`` terms: O(m^{7/3}) per round amortised. Where the terms nearly cancel (a direction a
projection left at zero, probed just below λ = 0), Woodbury is too ill-conditioned and one
evaluation falls back to the Cholesky factorisation of the dense A; below ``DENSE_BELOW``
dimensions every evaluation is that factorisation, which is then the cheaper one.
"""
import numpy as np

from libc.math cimport fabs, sqrt
from scipy.linalg.cython_blas cimport dgemm, dgemv, dsyrk
from scipy.linalg.cython_lapack cimport dpotrs, dsytrd

from ._pola_linalg cimport (apply_reflectors, lu_factor, lu_solve, shifted_cholesky,
                           tridiagonal_residual)

# A negative eigenvalue above −_NEGLIGIBLE · (tr A + α‖v‖²) is not projected out: that far
# below the rounding level of the matrix it cannot be told from zero.
cdef double _NEGLIGIBLE = 1e-13
cdef int _MAX_NEWTON = 60
# Iterative refinement steps of a solve: each gains at least a factor 1e3 (see _solve).
cdef int _MAX_REFINEMENTS = 8
# A solve that stops gaining is accepted when its last correction δ changes the projection
# by at most this share of σ: |λ| ‖δ‖ / ‖x‖ ≤ _ACCEPTED_ERROR (and ‖δ‖ ≤ 0.1 ‖x‖).
cdef double _ACCEPTED_ERROR = 1e-12
# A term's direction within this relative distance of U's span adds no column to U.
cdef double _IN_SPAN = 1e-14


# Below this dimension a Cholesky factorisation of A − λI costs less than the solves on a
# reduction and its refreshes: every evaluation is dense (no reduction).
DENSE_BELOW = 64


def projection_capacity(Py_ssize_t stride):
    """Columns of U between refreshes: the O(m k²) solves against one O(m³) refresh."""
    return max(4, min(stride, int(stride ** (2.0 / 3.0))))


cdef class ProjectionWorkspace:
    """Owns the buffers of one :c:type:`Projection` of dimension up to ``stride``."""

    def __cinit__(self, Py_ssize_t stride):
        cdef Py_ssize_t n = max(stride, 1)
        cdef Py_ssize_t k = projection_capacity(n)
        lwork = 64 * n  # dsytrd: n times its block size
        doubles = [np.zeros(size) for size in (
            n * n, n, n, n * k, n * (k + 1), k * k,  # W, q, e, U, Ut, G
            n, n, n, n * (k + 1), k * k, k * k,  # l, dinv, root_dinv, Y, gram, S
            k, k, k, n, n,  # t, terms, coords, residual, correction
            n, n, n, n * n, n, lwork)]  # direction, vector, work, factor, tau, lapack_work
        integers = np.zeros(k, np.intc)
        self.buffers = (doubles, integers)
        cdef double* d[23]
        cdef double[::1] view
        cdef int[::1] pivots = integers
        for index in range(23):
            view = doubles[index]
            d[index] = &view[0]
        self.p = Projection(n, k, 0, 0, False, n < DENSE_BELOW, d[0], d[1], d[2], d[3], d[4],
                            d[5], d[6], d[7], d[8], d[9], d[10], d[11], &pivots[0], d[12],
                            d[13], d[14], d[15], d[16], 0.0, 0.0, d[17], d[18], d[19], d[20],
                            False, d[21], 0, d[22], <int> lwork, 0, 0, 0, 0)


cdef void _refresh(Projection* p, const double* A, Py_ssize_t m, Py_ssize_t lda) noexcept nogil:
    """``W T Wᵀ = A`` (its lower triangle) by ``dsytrd``, W kept as its reflectors; no terms."""
    cdef Py_ssize_t i, j
    cdef int n = <int> m, ld = <int> p.stride, info = 0
    for j in range(m):
        for i in range(j, m):
            p.W[j * p.stride + i] = A[j * lda + i]
    dsytrd(b"L", &n, p.W, &ld, p.q, p.e, p.tau, p.lapack_work, &p.lapack_lwork, &info)
    p.reflected = m
    if m > 0:
        p.e[m - 1] = 0.0
    p.m = m
    p.k = 0
    p.valid = info == 0
    p.refreshes = p.refreshes + 1


cdef inline void _reflect(Projection* p, double* x, bint transpose) noexcept nogil:
    """x ← Wᵀx (``transpose``) or W x; coordinates added by ``grow`` since are kept."""
    apply_reflectors(p.W, p.tau, p.reflected, p.stride, x, transpose)


cdef inline void _to_reduced(Projection* p, const double* v, double* out) noexcept nogil:
    """out = Wᵀv."""
    cdef Py_ssize_t i
    for i in range(p.m):
        out[i] = v[i]
    _reflect(p, out, True)


cdef void add_reduced_term(Projection* p, const double* z, double scale,
                           double coef) noexcept nogil:
    """Record ``A ← A + coef (W scale·z)(W scale·z)ᵀ``; z in W's coordinates.

    z is split into its coordinates on U and a residual (Gram–Schmidt, twice); a
    residual beyond rounding becomes a new column of U.
    """
    cdef Py_ssize_t i, j, k = p.k, m = p.m, ldg = p.capacity
    cdef int n = <int> m, kk = <int> k, ld = <int> p.stride, one = 1, sweep
    cdef double unit = 1.0, zero = 0.0, minus = -1.0, length = 0.0, residual = 0.0
    if not p.valid or coef == 0.0:
        return
    for i in range(m):
        p.residual[i] = scale * z[i]
        length = length + p.residual[i] * p.residual[i]
    for j in range(k):
        p.coords[j] = 0.0
    if k > 0:
        for sweep in range(2):
            dgemv(b"T", &n, &kk, &unit, p.U, &ld, p.residual, &one, &zero, p.t, &one)
            dgemv(b"N", &n, &kk, &minus, p.U, &ld, p.t, &one, &unit, p.residual, &one)
            for j in range(k):
                p.coords[j] = p.coords[j] + p.t[j]
    for i in range(m):
        residual = residual + p.residual[i] * p.residual[i]
    if residual > _IN_SPAN * _IN_SPAN * length:
        if k >= p.capacity:
            p.valid = False
            return
        residual = sqrt(residual)
        for i in range(m):
            p.U[k * p.stride + i] = p.residual[i] / residual
            p.Ut[i * (p.capacity + 1) + k] = p.U[k * p.stride + i]
        for j in range(k + 1):
            p.G[k * ldg + j] = 0.0
            p.G[j * ldg + k] = 0.0
        p.coords[k] = residual
        k = k + 1
        p.k = k
    for j in range(k):
        for i in range(k):
            p.G[j * ldg + i] = p.G[j * ldg + i] + coef * p.coords[i] * p.coords[j]


cdef void add_term(Projection* p, const double* v, double coef) noexcept nogil:
    """Record ``A ← A + coef v vᵀ``."""
    if not p.valid or coef == 0.0:
        return
    _to_reduced(p, v, p.work)
    add_reduced_term(p, p.work, 1.0, coef)


cdef void grow(Projection* p, Py_ssize_t m, double diagonal) noexcept nogil:
    """A gains a row and column m, zero but for ``A[m, m] = diagonal`` (a new basis vector)."""
    cdef Py_ssize_t i
    if not p.valid or p.m != m or m >= p.stride:
        p.valid = False
        return
    p.q[m] = diagonal
    p.e[m] = 0.0  # e[m − 1] is already 0: the last row of T has no subdiagonal entry
    for i in range(p.k):
        p.U[i * p.stride + m] = 0.0
        p.Ut[m * (p.capacity + 1) + i] = 0.0
    p.m = m + 1


cdef int _factor(Projection* p, double shift, double inverse_scale) noexcept nogil:
    """Prepare solves with ``A / σ − shift I``; nonzero when that is not positive definite.

    ``T / σ − shift I = L D Lᵀ`` (D > 0 exactly when it is positive definite), then the
    solves of the terms' columns and of the direction, and the capacitance matrix.
    """
    cdef Py_ssize_t i, j, m = p.m, k = p.k, ldt = p.capacity + 1
    cdef int n = <int> m, kk = <int> k, ldg = <int> p.capacity
    cdef int ld_rows = <int> (p.capacity + 1)
    cdef double pivot, coef, root, unit = 1.0, zero = 0.0
    cdef double* row
    cdef double* dinv = p.dinv
    cdef double* root_dinv = p.root_dinv
    cdef double* l = p.l
    cdef const double* e = p.e
    cdef const double* terms
    p.shift = shift
    p.inverse_scale = inverse_scale
    pivot = p.q[0] * inverse_scale - shift
    for i in range(m):
        if not pivot > 0.0:
            return 1
        dinv[i] = 1.0 / pivot
        coef = e[i] * inverse_scale
        l[i] = coef * dinv[i]
        if i + 1 < m:
            # One division on the recurrence's critical path, not a division and two products.
            pivot = p.q[i + 1] * inverse_scale - shift - coef * coef / pivot
    # Y = D^{-1/2} L⁻¹ [U d] by rows, the columns' recurrences side by side: row i is
    # D_i^{-1/2} ([U d]_i − l_{i−1} D_{i−1}^{1/2} row_{i−1}).
    for i in range(m):
        root = sqrt(dinv[i])
        root_dinv[i] = root
        row = p.Y + i * ldt
        terms = p.Ut + i * ldt
        if i == 0:
            for j in range(k):
                row[j] = root * terms[j]
            row[k] = root * p.direction[0]
        else:
            coef = l[i - 1] / root_dinv[i - 1]
            for j in range(k):
                row[j] = root * (terms[j] - coef * row[j - ldt])
            row[k] = root * (p.direction[i] - coef * row[k - ldt])
    if k > 0:
        dsyrk(b"L", b"N", &kk, &n, &unit, p.Y, &ld_rows, &zero, p.gram, &ldg)
    # Y ← ((T/σ − shift)⁻¹ [U d])ᵀ = (L⁻ᵀ D^{-1/2} Y)ᵀ, for the solves.
    row = p.Y + (m - 1) * ldt
    for j in range(k + 1):
        row[j] = row[j] * root_dinv[m - 1]
    for i in range(m - 2, -1, -1):
        row = p.Y + i * ldt
        root = root_dinv[i]
        coef = l[i]
        for j in range(k + 1):
            row[j] = row[j] * root - coef * row[j + ldt]
    if k == 0:
        return 0
    # S = I + (G / σ) Uᵀ(T/σ − shift)⁻¹U (the lower triangle of the Gram matrix is read)
    for j in range(k):
        for i in range(j + 1, k):
            p.gram[i * ldg + j] = p.gram[j * ldg + i]
    dgemm(b"N", b"N", &kk, &kk, &kk, &inverse_scale, p.G, &ldg, p.gram, &ldg, &zero, p.S,
          &ldg)
    for j in range(k):
        p.S[j * ldg + j] = p.S[j * ldg + j] + 1.0
    return lu_factor(p.S, k, p.capacity, p.pivots)


cdef void _woodbury(Projection* p, const double* b, double* x) noexcept nogil:
    """x = (T / σ − shift I + U G Uᵀ / σ)⁻¹ b by Woodbury, for the last ``_factor``."""
    cdef Py_ssize_t i, m = p.m, ldt = p.capacity + 1
    cdef int n = <int> m, kk = <int> p.k, ld = <int> p.stride, ldg = <int> p.capacity
    cdef int one = 1, ld_rows = <int> ldt
    cdef double unit = 1.0, zero = 0.0, minus = -1.0
    if b == p.direction:  # solved in _factor, beside the columns of U
        for i in range(m):
            x[i] = p.Y[i * ldt + p.k]
    else:  # x = L⁻ᵀ D⁻¹ L⁻¹ b
        for i in range(m):
            x[i] = b[i] - (p.l[i - 1] * x[i - 1] if i > 0 else 0.0)
        for i in range(m - 1, -1, -1):
            x[i] = x[i] * p.dinv[i] - (p.l[i] * x[i + 1] if i + 1 < m else 0.0)
    if p.k == 0:
        return
    dgemv(b"T", &n, &kk, &unit, p.U, &ld, x, &one, &zero, p.t, &one)
    dgemv(b"N", &kk, &kk, &p.inverse_scale, p.G, &ldg, p.t, &one, &zero, p.terms, &one)
    lu_solve(p.S, p.k, p.capacity, p.pivots, p.terms)
    dgemv(b"T", &kk, &n, &minus, p.Y, &ld_rows, p.terms, &one, &unit, x, &one)


cdef bint _solve(Projection* p, const double* b, double* x, bint refine=True) noexcept nogil:
    """x = (A / σ − shift I)⁻¹ b in W's coordinates, for the last ``_factor``.

    Woodbury loses accuracy when D has entries near zero (A singular, λ near 0) that the
    terms fill: up to about ``eps / min D``, at most about 1e-3 since λ ≤ −1e-13 σ.
    Iterative refinement on the O(m k) residual ``b − (D + U G Uᵀ / σ) x`` recovers full
    accuracy, each step gaining that factor: a correction below 1e-13 ‖x‖ leaves x exact
    to working precision once added. Or until the corrections stop shrinking (the
    rounding level of an ill-conditioned ``A − λI``, as for any solver). Returns false
    when the last correction could still move the projection by more than
    ``_ACCEPTED_ERROR · σ``: the terms nearly cancel on a direction (e.g. one a
    projection left at zero) and the capacitance matrix is too ill-conditioned for
    refinement to gain.
    """
    cdef Py_ssize_t i, step, m = p.m
    cdef int n = <int> m, kk = <int> p.k, ld = <int> p.stride, ldg = <int> p.capacity
    cdef int one = 1
    cdef double unit = 1.0, zero = 0.0, minus = -1.0, size = 0.0, change = 0.0
    cdef double previous = 0.0
    _woodbury(p, b, x)
    if p.k == 0 or not refine:
        return True
    for step in range(_MAX_REFINEMENTS):
        dgemv(b"T", &n, &kk, &unit, p.U, &ld, x, &one, &zero, p.t, &one)
        dgemv(b"N", &kk, &kk, &p.inverse_scale, p.G, &ldg, p.t, &one, &zero, p.coords,
              &one)
        # b − (T/σ − shift) x, then − U G Uᵀ x / σ
        tridiagonal_residual(p.q, p.e, m, p.inverse_scale, p.shift, b, x, p.residual)
        dgemv(b"N", &n, &kk, &minus, p.U, &ld, p.coords, &one, &unit, p.residual, &one)
        _woodbury(p, p.residual, p.work)
        size = 0.0
        change = 0.0
        for i in range(m):
            size = size + x[i] * x[i]
            change = change + p.work[i] * p.work[i]
        if step > 0 and change > 0.25 * previous:
            break  # stagnating at the rounding level of an ill-conditioned A − λI
        for i in range(m):
            x[i] = x[i] + p.work[i]
        if change <= 1e-26 * size:  # ‖δ‖ ≤ 1e-13 ‖x‖: what remains is below 1e-16 ‖x‖
            return True
        previous = change
    # The error a correction δ leaves in the projection is about |λ| ‖δ‖ / ‖x‖ (of σ).
    return (change * p.shift * p.shift <= _ACCEPTED_ERROR * _ACCEPTED_ERROR * size
            and change <= 1e-2 * size)


cdef int _dense_factor(Projection* p, const double* A, Py_ssize_t lda, double shift,
                       double inverse_scale) noexcept nogil:
    """Cholesky factor of ``A / σ − shift I`` from the dense A; nonzero if not positive definite."""
    return shifted_cholesky(A, lda, p.m, inverse_scale, shift, p.factor, p.stride)


cdef void _dense_solve(Projection* p, const double* b, double* x) noexcept nogil:
    """x = (A / σ − shift I)⁻¹ b in W's coordinates (A's own when ``dense_only``)."""
    cdef int n = <int> p.m, ld = <int> p.stride, one = 1, info = 0
    cdef Py_ssize_t i
    for i in range(p.m):
        x[i] = b[i]
    if not p.dense_only:
        _reflect(p, x, False)
    dpotrs(b"L", &n, &one, p.factor, &ld, x, &ld, &info)
    if not p.dense_only:
        _reflect(p, x, True)


cdef int _evaluate(Projection* p, const double* A, Py_ssize_t lda, double shift,
                   double inverse_scale, double* g, double* g_slope,
                   bint dense_fallback=True, bint rough=False) noexcept nogil:
    """``g = dᵀ(A/σ − shift I)⁻¹d`` and its slope ``‖(A/σ − shift I)⁻¹d‖²`` (d = v / ‖v‖).

    Leaves ``(A/σ − shift I)⁻¹d`` in ``p.vector``. When the solve with the terms fails
    (see ``_solve``), it is redone with a Cholesky factorisation of the dense A (O(m³),
    ``p.dense`` set), or without ``dense_fallback`` 2 is returned. Returns 1 when
    ``A/σ − shift I`` is not positive definite. A ``rough`` solve skips the iterative
    refinement where every pivot of ``T/σ − shift I`` is above 1e-8 (Newton far from λ).
    """
    cdef Py_ssize_t i, m = p.m
    cdef bint converged = False
    p.evaluations = p.evaluations + 1
    if not p.dense_only:
        if not p.valid or _factor(p, shift, inverse_scale) != 0:
            return 1
        p.dense = False
        for i in range(m):  # a rough solve only where Woodbury loses < ~eps · 1e8
            rough = rough and p.dinv[i] < 1e8
        converged = _solve(p, p.direction, p.vector, not rough)
        g[0] = 0.0
        for i in range(m):
            g[0] = g[0] + p.direction[i] * p.vector[i]
    if not (converged and g[0] > 0.0):
        if not dense_fallback:
            return 2
        if _dense_factor(p, A, lda, shift, inverse_scale) != 0:
            return 1
        p.dense = True
        p.dense_evaluations = p.dense_evaluations + 1
        _dense_solve(p, p.direction, p.vector)
        g[0] = 0.0
        for i in range(m):
            g[0] = g[0] + p.direction[i] * p.vector[i]
    g_slope[0] = 0.0
    for i in range(m):
        g_slope[0] = g_slope[0] + p.vector[i] * p.vector[i]
    return 0


cdef void _unit_vector_out(Projection* p, double* u, Py_ssize_t m) noexcept nogil:
    """Normalise ``p.vector`` and write it to u in the input coordinates."""
    cdef Py_ssize_t i
    cdef double norm = 0.0
    for i in range(m):
        norm = norm + p.vector[i] * p.vector[i]
    norm = sqrt(norm)
    for i in range(m):
        p.vector[i] = p.vector[i] / norm
    for i in range(m):
        u[i] = p.vector[i]
    if not p.dense_only:
        _reflect(p, u, False)


cdef double negative_eigenpair(Projection* p, const double* A, Py_ssize_t m,
                               Py_ssize_t lda, const double* v, double alpha,
                               double rayleigh, double* u) noexcept nogil:
    """The negative eigenvalue λ of ``Â = A − α v vᵀ`` (A ⪰ 0, α > 0), unit eigenvector u.

    Newton's method on ``ψ(λ) = 1 / vᵀ(A − λI)⁻¹v`` (concave and decreasing) started right
    of the root moves monotonically onto it without leaving ``λ < 0``. It starts from the
    Rayleigh quotient ``rayleigh = vᵀÂv / ‖v‖²`` when that is negative (then λ ≤ rayleigh
    exists). Otherwise one Newton step from the left end ``−α‖v‖²`` of the interval that
    holds λ lands right of the root, and below zero when a root exists: if it lands below
    ``−_NEGLIGIBLE · σ`` Newton continues from there; else one evaluation there, when its
    solve is accurate without a dense factorisation, says whether a root exists at all
    (the end for a pair that needs no projection) and if one does, Newton starts there.
    When that solve is not accurate, probes at ``−α‖v‖² 10^{-3j}`` look for a
    better-conditioned start right of the root, and the last start is just below zero,
    where ``A − λI`` is nearly singular whenever A is. A start's evaluation is the first
    Newton iteration's; after a step above 1e-3 |λ| the solve may be rough. Once a step is
    below 1e-7 |λ|, the last step is taken without a new solve setup and the eigenvector
    gets one step of inverse iteration with the shift λ, which leaves both accurate to
    about 1e-14 relative. The problem is solved for ``Â / σ`` with unit v, ``σ = tr A +
    α‖v‖²``, so no intermediate can overflow. On return ``p.vector`` holds u in W's
    coordinates.

    Returns 0 (u untouched) when no eigenvalue lies below ``−_NEGLIGIBLE · σ``.
    """
    cdef Py_ssize_t i, iteration
    cdef double length = 0.0, scale = 0.0, inverse_scale, weight, eigenvalue, step
    cdef double g = 0.0, g_slope = 0.0, shift_gain, probe
    cdef bint right_of_root, solved = False, evaluated = False, far = False
    if p.dense_only:
        p.m = m
    elif not p.valid or p.m != m or p.k + 2 > p.capacity:
        _refresh(p, A, m, lda)
    for i in range(m):
        length = length + v[i] * v[i]
        scale = scale + A[i * lda + i]
    length = sqrt(length)
    scale = scale + alpha * length * length
    inverse_scale = 1.0 / scale
    for i in range(m):
        p.work[i] = v[i] / length
        p.direction[i] = p.work[i]
    if not p.dense_only:
        _to_reduced(p, p.work, p.direction)
    # Â / σ = A / σ − weight · direction directionᵀ, its least eigenvalue in [−weight, 0).
    weight = alpha * length * length / scale
    eigenvalue = -_NEGLIGIBLE
    right_of_root = rayleigh / scale < eigenvalue
    if right_of_root:
        eigenvalue = rayleigh / scale if rayleigh / scale > -weight else -weight
    elif (not p.dense_only
          and _evaluate(p, A, lda, -weight, inverse_scale, &g, &g_slope) == 0):
        # Dense-only evaluations are accurate just below zero: no look-ahead there.
        # Not positive when weight · g ≥ 1: v lies in A's null space and λ = −weight.
        step = g * (1.0 - weight * g) / g_slope
        if -weight + step < eigenvalue:
            eigenvalue = -weight + step if step > 0.0 else -weight
            right_of_root = True
        elif _evaluate(p, A, lda, eigenvalue, inverse_scale, &g, &g_slope, False) == 0:
            # Accurate without the dense factorisation: ψ(−_NEGLIGIBLE) ≥ α means no
            # eigenvalue below it, else Newton starts there, right of the root.
            if weight * g <= 1.0:
                return 0.0
            right_of_root = evaluated = True
        probe = -weight * 1e-3
        while not right_of_root and probe < eigenvalue:
            # A root, if any, is near zero, where A − λI is nearly singular when A is:
            # probes on the way there look for a better-conditioned start right of it.
            if _evaluate(p, A, lda, probe, inverse_scale, &g, &g_slope) != 0:
                break
            if weight * g > 1.0:
                eigenvalue = probe
                right_of_root = evaluated = True
            probe = probe * 1e-3
    for iteration in range(_MAX_NEWTON):
        if not evaluated and _evaluate(p, A, lda, eigenvalue, inverse_scale, &g,
                                       &g_slope, True, far) != 0:
            # Rounding left A slightly indefinite: A − λI is not positive definite yet.
            if eigenvalue == -weight:
                return 0.0
            eigenvalue = 4.0 * eigenvalue if 4.0 * eigenvalue > -weight else -weight
            continue
        evaluated = False
        solved = True
        if weight * g <= 1.0 and far:
            far = False  # a rough evaluation says λ is at the root: read it again
            continue
        if weight * g <= 1.0:
            # ψ(λ) ≥ α: λ is at the root (up to rounding), or no eigenvalue is below λ.
            if not right_of_root:
                return 0.0
            break
        right_of_root = True
        step = g * (1.0 - weight * g) / g_slope
        if eigenvalue + step < -weight:
            step = -weight - eigenvalue
        if fabs(step) <= 1e-7 * fabs(eigenvalue) and not far:
            eigenvalue = eigenvalue + step
            break
        far = fabs(step) > 1e-3 * fabs(eigenvalue)  # the next solve may then be rough
        eigenvalue = eigenvalue + step
    if not solved or g_slope == 0.0:
        return 0.0  # no solve succeeded: nothing reliable to project out
    if weight * g != 1.0:
        # Inverse iteration with the solve at hand: (Â − λI)⁻¹u by Sherman–Morrison,
        # = (A − λI)⁻¹u + α g' / (1 − α g) · u.
        if p.dense:
            _dense_solve(p, p.vector, u)
        else:
            _solve(p, p.vector, u)
        shift_gain = weight * g_slope / (1.0 - weight * g)
        for i in range(m):
            p.vector[i] = u[i] + shift_gain * p.vector[i]
    _unit_vector_out(p, u, m)
    return eigenvalue * scale
