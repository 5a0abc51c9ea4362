# The small dense kernels of POLA's PSD projection (:mod:`._pola_projection`), inline: the
# LU factorisation of the capacitance matrix, Householder reflectors, a tridiagonal residual,
# the Cholesky factorisation of a shifted dense matrix.
from libc.math cimport fabs
from scipy.linalg.cython_lapack cimport dpotrf


cdef inline int lu_factor(double* S, Py_ssize_t k, Py_ssize_t ld, int* pivots) noexcept nogil:
    """S = P L U in place with partial pivoting, as LAPACK's dgetf2; nonzero if singular.

    The capacitance matrices have at most a few dozen rows: LAPACK's dgetrf and dgetrs
    spend more on their dispatch than on these flops.
    """
    cdef Py_ssize_t i, j, c, best
    cdef double largest, inverse, factor, swap
    cdef double* column
    cdef double* pivot_column
    for j in range(k):
        pivot_column = S + j * ld
        best = j
        largest = fabs(pivot_column[j])
        for i in range(j + 1, k):
            if fabs(pivot_column[i]) > largest:
                largest = fabs(pivot_column[i])
                best = i
        pivots[j] = <int> best
        if largest == 0.0:
            return <int> j + 1
        if best != j:
            for c in range(k):
                swap = S[c * ld + j]
                S[c * ld + j] = S[c * ld + best]
                S[c * ld + best] = swap
        inverse = 1.0 / pivot_column[j]
        for i in range(j + 1, k):
            pivot_column[i] = pivot_column[i] * inverse
        for c in range(j + 1, k):
            column = S + c * ld
            factor = column[j]
            if factor != 0.0:
                for i in range(j + 1, k):
                    column[i] = column[i] - factor * pivot_column[i]
    return 0


cdef inline void lu_solve(const double* S, Py_ssize_t k, Py_ssize_t ld, const int* pivots,
                          double* b) noexcept nogil:
    """b ← S⁻¹ b for the factors of ``lu_factor``."""
    cdef Py_ssize_t i, j
    cdef double swap
    for i in range(k):
        if pivots[i] != i:
            swap = b[i]
            b[i] = b[pivots[i]]
            b[pivots[i]] = swap
    for j in range(k):
        for i in range(j + 1, k):
            b[i] = b[i] - b[j] * S[j * ld + i]
    for j in range(k - 1, -1, -1):
        b[j] = b[j] / S[j * ld + j]
        for i in range(j):
            b[i] = b[i] - b[j] * S[j * ld + i]


cdef inline void apply_reflectors(const double* V, const double* tau, Py_ssize_t r,
                                  Py_ssize_t ld, double* x, bint transpose) noexcept nogil:
    """x ← Qᵀx (``transpose``) or x ← Q x, Q the orthogonal factor of ``dsytrd("L")``.

    ``Q = H₀ H₁ ⋯ H_{r−2}``, ``H_j = I − τ_j v vᵀ`` with ``v_{0:j+1} = 0``, ``v_{j+1} = 1``
    and ``v_{j+2:r}`` below the subdiagonal of column j of V (leading dimension ld). The
    2r² flops of a product with the formed Q, without forming it: LAPACK's dorgtr forms
    it reflector by reflector below 128 columns, at the cost of the reduction itself.
    One sweep over x per reflector: it applies one reflector and reads the next one's
    product ``vᵀx`` from the updated entries.
    """
    cdef Py_ssize_t i, j, step, next_j
    cdef const double* column
    cdef const double* following
    cdef double scale, s0, s1
    if r < 2:
        return
    j = 0 if transpose else r - 2
    step = 1 if transpose else -1
    column = V + j * ld
    scale = x[j + 1]
    for i in range(j + 2, r):
        scale = scale + column[i] * x[i]
    scale = tau[j] * scale
    while True:
        next_j = j + step
        x[j + 1] = x[j + 1] - scale
        if not 0 <= next_j <= r - 2:
            for i in range(j + 2, r):
                x[i] = x[i] - scale * column[i]
            return
        following = V + next_j * ld
        # The next reflector's vᵀx: its unit entry, then the entries this sweep updates
        # (two partial sums: one sum's chain of additions would bound the loop).
        s0 = x[next_j + 1] if transpose else x[next_j + 1] + following[j + 1] * x[j + 1]
        s1 = 0.0
        i = j + 2
        if transpose and r > j + 2:  # the next unit entry, updated but not in the sum
            x[j + 2] = x[j + 2] - scale * column[j + 2]
            s0 = x[j + 2]
            i = j + 3
        while i + 1 < r:
            x[i] = x[i] - scale * column[i]
            x[i + 1] = x[i + 1] - scale * column[i + 1]
            s0 = s0 + following[i] * x[i]
            s1 = s1 + following[i + 1] * x[i + 1]
            i = i + 2
        if i < r:
            x[i] = x[i] - scale * column[i]
            s0 = s0 + following[i] * x[i]
        scale = tau[next_j] * (s0 + s1)
        j = next_j
        column = following


cdef inline void tridiagonal_residual(const double* q, const double* e, Py_ssize_t m,
                                      double scale, double shift, const double* b,
                                      const double* x, double* residual) noexcept nogil:
    """residual = b − (T · scale − shift I) x, T with diagonal q and subdiagonal e.

    The ends apart, so that the loop over the interior rows vectorises.
    """
    cdef Py_ssize_t i
    if m == 1:
        residual[0] = b[0] - (q[0] * scale - shift) * x[0]
        return
    residual[0] = b[0] - (q[0] * scale - shift) * x[0] - e[0] * scale * x[1]
    for i in range(1, m - 1):
        residual[i] = (b[i] - (q[i] * scale - shift) * x[i] - e[i - 1] * scale * x[i - 1]
                       - e[i] * scale * x[i + 1])
    residual[m - 1] = (b[m - 1] - (q[m - 1] * scale - shift) * x[m - 1]
                       - e[m - 2] * scale * x[m - 2])


cdef inline int shifted_cholesky(const double* A, Py_ssize_t lda, Py_ssize_t m, double scale,
                                 double shift, double* factor, Py_ssize_t ld) noexcept nogil:
    """factor = the lower Cholesky factor of ``A · scale − shift I`` (A's lower triangle).

    Returns nonzero when that matrix is not positive definite.
    """
    cdef Py_ssize_t i, j
    cdef int n = <int> m, ldf = <int> ld, info = 0
    for j in range(m):
        for i in range(j, m):
            factor[j * ld + i] = A[j * lda + i] * scale
        factor[j * ld + j] = factor[j * ld + j] - shift
    dpotrf(b"L", &n, factor, &ldf, &info)
    return info
