# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""SCML's stochastic updates (regularised dual averaging with AdaGrad steps, §3.2) and
the distances its objective reads.

Each update forms one mini-batch of triplet rows ``Δ_t`` (squared projected
differences, near minus far) from the projections ``X Bᵀ``, sums those with a positive
slack ``1 + ⟨Δ_t, w⟩`` into the gradient, folds it into the running mean and the sum of
squares, and sets ``w`` in closed form. The updates are sequential (each reads the ``w``
of the last), so they run here, without the interpreter between them.
``tests/test_scml.py`` holds the NumPy versions these loops must match.
"""

import numpy as np

from libc.math cimport sqrt


def triplet_updates(const double[:, ::1] projections, const Py_ssize_t[:, ::1] triplets,
                    const Py_ssize_t[:, ::1] draws, double[::1] weights,
                    double[::1] mean_gradient, double[::1] squared_sum, double count, *,
                    double beta, double gamma, double delta):
    """Run one update per row of ``draws`` (indices into ``triplets``, one batch), in
    place, each drawn row ``Δ_t`` formed from the projections (no T × K matrix).

    Returns the update count after them (``count`` plus the number of batches).
    """
    cdef Py_ssize_t n_updates = draws.shape[0], batch = draws.shape[1]
    cdef Py_ssize_t n_basis = projections.shape[1], u, b, k, i, j, m
    cdef double slack, g, scale, anchor, near, far
    cdef double[::1] gradient = np.zeros(n_basis), row = np.zeros(n_basis)
    with nogil:
        for u in range(n_updates):
            for k in range(n_basis):
                gradient[k] = 0.0
            for b in range(batch):
                i, j, m = (triplets[draws[u, b], 0], triplets[draws[u, b], 1],
                           triplets[draws[u, b], 2])
                slack = 1.0
                for k in range(n_basis):
                    anchor = projections[i, k]
                    near, far = anchor - projections[j, k], anchor - projections[m, k]
                    row[k] = near * near - far * far
                    slack += row[k] * weights[k]
                if slack > 0.0:
                    for k in range(n_basis):
                        gradient[k] += row[k]
            count += 1.0
            for k in range(n_basis):
                g = gradient[k] / batch
                mean_gradient[k] += (g - mean_gradient[k]) / count
                squared_sum[k] += g * g
                scale = -count / (gamma * (delta + sqrt(squared_sum[k])))
                weights[k] = scale * min(mean_gradient[k] + beta, 0.0)
    return count


def weighted_distances(const double[:, ::1] projections, const Py_ssize_t[:, ::1] pairs,
                       const double[::1] weights):
    """``Σ_k w_k (p_ik − p_jk)²`` for every pair ``(i, j)`` of rows of the projections
    (the caller passes only the columns of nonzero weights).
    """
    cdef Py_ssize_t n_pairs = pairs.shape[0], n_basis = projections.shape[1], p, k, i, j
    cdef double difference
    cdef double[::1] distances = np.zeros(n_pairs)
    with nogil:
        for p in range(n_pairs):
            i, j = pairs[p, 0], pairs[p, 1]
            for k in range(n_basis):
                difference = projections[i, k] - projections[j, k]
                distances[p] += weights[k] * difference * difference
    return np.asarray(distances)
