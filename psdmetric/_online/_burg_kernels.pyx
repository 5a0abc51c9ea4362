# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled per-update loops of the online Burg learners (Jain, Kulis & Dhillon, 2007).

Every loop visits its examples in the given order and updates the learner's state in
place, so a pass over one chunk continues exactly where the previous chunk stopped.
"""
import numpy as np

from libc.math cimport INFINITY, fabs, sqrt

from .._core._factor_kernels cimport _cholupdatemult

# The adaptive learning rate of Burg's algorithms may only reach half of the largest
# step that keeps the weights inside their domain: the paper's bound itself would
# put a weight on the boundary (w = ∞, or an eigenvalue of W equal to 1).
cdef double _SAFETY = 0.5


cdef inline void _lower_solve(const double* L, double* x, Py_ssize_t r) noexcept nogil:
    """x <- L⁻¹ x for lower-triangular, column-major L (column by column: vectorises)."""
    cdef Py_ssize_t i, j
    cdef double xj
    cdef const double* column
    for j in range(r):
        column = L + j * r
        x[j] = x[j] / column[j]
        xj = x[j]
        for i in range(j + 1, r):
            x[i] = x[i] - xj * column[i]


cdef inline double _unit_difference(const double* a, const double* b, double* z,
                                    Py_ssize_t d) noexcept nogil:
    """z <- (a − b) / ‖a − b‖; return ‖a − b‖ (0 leaves z unnormalised).

    The norm is taken after dividing by the largest entry, so features near the
    overflow or underflow limits keep a finite, non-zero norm.
    """
    cdef Py_ssize_t k
    cdef double largest = 0.0, total = 0.0, norm
    for k in range(d):
        z[k] = a[k] - b[k]
        if fabs(z[k]) > largest:
            largest = fabs(z[k])
    if largest == 0.0:
        return 0.0
    for k in range(d):
        total = total + (z[k] / largest) * (z[k] / largest)
    norm = largest * sqrt(total)
    for k in range(d):
        z[k] = (z[k] / largest) / sqrt(total)
    return norm


def burg_vector_pass(const double[:, ::1] X, const double[::1] y, double[::1] w,
                     double eta, double[::1] predictions, double[::1] rates):
    """One pass of the Burg gradient algorithm (Jain et al., 2007, Alg. 1) over the rows of X.

    Predicts ``ŷ = w·x``, then ``1/w_i ← 1/w_i + 2η(ŷ − y)x_i`` for every i. The rate
    ``η`` is kept by an adaptive rule for inputs of any sign:
    ``η ← min(η, ½ / (2 max_i(−(ŷ − y) x_i w_i)))`` whenever that maximum is positive,
    which keeps every factor ``1 + 2η(ŷ − y)x_i w_i ≥ ½``, hence ``w > 0``. This bounds
    the rate only to keep w positive; the rule of Jain, Kulis & Dhillon (2007), Alg. 1,
    also keeps every ``w_i < 1`` (as Lemma 2 keeps ``W ≺ I`` in the matrix case), a
    ceiling a regression weight does not need.

    ``w`` is updated in place; ``predictions[t]`` and ``rates[t]`` receive the
    prediction made for row t and the rate used on it. Returns the final rate.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1]
    cdef Py_ssize_t t, i
    cdef double prediction, error, push, largest_push
    if (w.shape[0] != d or y.shape[0] != n or predictions.shape[0] != n
            or rates.shape[0] != n):
        raise ValueError("X, y, w, predictions and rates have inconsistent shapes")
    with nogil:
        for t in range(n):
            prediction = 0.0
            for i in range(d):
                prediction = prediction + w[i] * X[t, i]
            error = prediction - y[t]
            largest_push = 0.0
            for i in range(d):
                push = -error * X[t, i] * w[i]
                if push > largest_push:
                    largest_push = push
            if largest_push > 0.0 and eta > _SAFETY / (2.0 * largest_push):
                eta = _SAFETY / (2.0 * largest_push)
            for i in range(d):
                w[i] = w[i] / (1.0 + 2.0 * eta * error * X[t, i] * w[i])
            predictions[t] = prediction
            rates[t] = eta
    return eta


def burg_matrix_pass(const double[:, ::1] X, const Py_ssize_t[:, ::1] pairs,
                     const double[::1] targets, const double[::1] sides,
                     double[::1, :] F, double[::1, :] G,
                     double eta, double scale, *, double[::1] predictions,
                     double[::1] relative_targets, double[::1] rates):
    """One pass of the matrix Burg algorithm (Jain et al., 2007, Alg. 2) over rank-one examples.

    Pair ``t`` enters as the unit-trace instance ``ẑẑᵀ`` (``ẑ = z/‖z‖``,
    ``z = X[i] − X[j]``) with target ``y' = targets[t] / (scale ‖z‖²)``; the learned
    metric is ``scale · W``. ``W`` is kept through ``K = W⁻¹ − I ≻ 0`` (so
    ``0 ≺ W ≺ I`` holds by construction) as two lower-triangular, column-major
    Cholesky factors updated in place: ``F Fᵀ = K`` and ``G Gᵀ = I + K``. Alg. 2's
    step ``W⁻¹ ← W⁻¹ + 2η(ŷ − y)ẑẑᵀ`` is the same rank-one change of both, applied by
    CHOLUPDATEMULT in O(d²).

    The rate of pair ``t`` is ``η_t = min(η, ½ / (2(y − ŷ) ẑᵀ(W⁻¹ − I)⁻¹ẑ))`` when
    ``ŷ < y`` and ``η`` otherwise: Alg. 2's bound (the paper's
    ``tr((I + (W⁻¹ − I)⁻¹) W X) = ẑᵀ(W⁻¹ − I)⁻¹ẑ``), halved so W stays strictly below I.
    Unlike Alg. 2, the cut applies to that pair only: Alg. 2 carries it to every later
    pair, so one pair along a direction where W is near I (where the bound tends to 0)
    freezes the whole run.

    ``sides[t]`` makes the target a bound: +1 asks ``ŷ ≤ y``, −1 ``ŷ ≥ y``, 0 ``ŷ = y``;
    a pair within its bound has error 0 and leaves W and the rate unchanged.

    For each pair, ``predictions[t] = ẑᵀWẑ``, ``relative_targets[t] = y'`` and
    ``rates[t]`` the rate used; pairs of identical points are skipped and marked NaN.
    """
    cdef Py_ssize_t n_pairs = pairs.shape[0], d = X.shape[1]
    cdef Py_ssize_t t, k
    cdef double length, target, prediction, error, curvature, rate
    cdef double nan = float("nan")
    if (F.shape[0] != d or F.shape[1] != d or G.shape[0] != d or G.shape[1] != d
            or targets.shape[0] != n_pairs or sides.shape[0] != n_pairs
            or predictions.shape[0] != n_pairs
            or relative_targets.shape[0] != n_pairs or rates.shape[0] != n_pairs):
        raise ValueError("X, pairs, targets, sides, factors and outputs have inconsistent "
                         "shapes")
    cdef double[::1] z = np.empty(d)
    cdef double[::1] x_inner = np.empty(d)
    cdef double[::1] x_outer = np.empty(d)
    cdef double[::1] work = np.empty(2 * d + 1)
    with nogil:
        for t in range(n_pairs):
            length = _unit_difference(&X[pairs[t, 0], 0], &X[pairs[t, 1], 0], &z[0], d)
            if length == 0.0:
                predictions[t] = nan
                relative_targets[t] = nan
                rates[t] = eta
                continue
            target = targets[t] / length / length / scale
            for k in range(d):
                x_outer[k] = z[k]
                x_inner[k] = z[k]
            _lower_solve(&G[0, 0], &x_outer[0], d)
            _lower_solve(&F[0, 0], &x_inner[0], d)
            prediction = 0.0
            curvature = 0.0
            for k in range(d):
                prediction = prediction + x_outer[k] * x_outer[k]
                curvature = curvature + x_inner[k] * x_inner[k]
            error = prediction - target
            if sides[t] * error < 0.0:
                error = 0.0
            rate = eta
            if error < 0.0 and rate > _SAFETY / (-2.0 * error * curvature):
                rate = _SAFETY / (-2.0 * error * curvature)
            predictions[t] = prediction
            relative_targets[t] = target
            rates[t] = rate
            if error == 0.0:
                continue
            _cholupdatemult(2.0 * rate * error, &x_inner[0], &F[0, 0], d, &work[0],
                            &work[d + 1])
            _cholupdatemult(2.0 * rate * error, &x_outer[0], &G[0, 0], d, &work[0],
                            &work[d + 1])
