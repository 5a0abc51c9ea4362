# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Kernels on a metric kept as a factor: CHOLUPDATEMULT and pair distances.

CHOLUPDATEMULT (Kulis, Sustik & Dhillon, 2009, Alg. 1) multiplies a lower-triangular
``B`` by the Cholesky factor of ``I + β w wᵀ`` in ``3r² + O(r)`` flops; LogDet's
projections and the online Burg learner update their factors with it.
"""
import numpy as np


cdef extern from "_distance_simd.h" nogil:
    double psdmetric_squared_distance(const double* a, const double* b, Py_ssize_t r)


cdef extern from "_cholesky_simd.h" nogil:
    void psdmetric_cholupdatemult(double beta, const double* x, double* B, Py_ssize_t r,
                                  double* P, double* s)
    void psdmetric_lower_transpose_times(const double* B, const double* v, double* w,
                                         Py_ssize_t r)


cdef void _cholupdatemult(double beta, const double* x, double* B, Py_ssize_t r,
                          double* P, double* s) noexcept nogil:
    """B <- B L with L Lᵀ = I + beta x xᵀ; B lower triangular, column-major.

    The loop lives in ``_cholesky_simd.h``, compiled for both baseline x86-64 and AVX2/FMA
    and dispatched on the running CPU; ``P`` and ``s`` are work arrays of r + 1 and r.
    """
    psdmetric_cholupdatemult(beta, x, B, r, P, s)


cdef void _lower_transpose_times(const double* B, const double* v, double* w,
                                 Py_ssize_t r) noexcept nogil:
    """w <- Bᵀ v for lower-triangular ``B`` (r×r, column-major)."""
    psdmetric_lower_transpose_times(B, v, w, r)


def cholupdatemult(double beta, const double[::1] w, double[::1, :] B):
    """Multiply lower-triangular ``B`` in place by the Cholesky factor of ``I + beta w wᵀ``.

    ``B`` must be Fortran-ordered and ``1 + beta * ||w||²`` positive. Costs
    ``3r² + O(r)`` flops.
    """
    cdef Py_ssize_t r = B.shape[0]
    if B.shape[1] != r or w.shape[0] != r:
        raise ValueError("B must be square and match the length of w")
    if r == 0:
        return
    cdef double[::1] work = np.empty(2 * r + 1)
    with nogil:
        _cholupdatemult(beta, &w[0], &B[0, 0], r, &work[0], &work[r + 1])


def pair_squared_distances(const double[:, ::1] F, const Py_ssize_t[:, ::1] pairs):
    """``‖F[i] − F[j]‖²`` for every pair ``(i, j)`` of ``pairs``, without m×r temporaries.

    The screen of the cyclic driver: with ``F`` the samples under the current metric's
    factor, these are every constraint's current squared distance, in ``m r`` flops.
    """
    cdef Py_ssize_t m = pairs.shape[0], n = F.shape[0], r = F.shape[1]
    cdef Py_ssize_t c
    if pairs.shape[1] != 2:
        raise ValueError("pairs must have two columns")
    if m and (np.min(pairs) < 0 or np.max(pairs) >= n):
        raise ValueError(f"pairs must index the {n} rows of F")
    out = np.empty(m)
    cdef double[::1] distances = out
    with nogil:
        for c in range(m):
            distances[c] = psdmetric_squared_distance(&F[pairs[c, 0], 0],
                                                      &F[pairs[c, 1], 0], r)
    return out
