# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""SCML's stochastic updates: regularised dual averaging with AdaGrad steps (§3.2).

Each update reads one mini-batch of triplet rows ``Δ_t`` (squared projected
differences, near minus far), sums those with a positive slack ``1 + ⟨Δ_t, w⟩`` into the
gradient, folds it into the running mean and the sum of squares, and sets ``w`` in
closed form. The updates are sequential (each reads the ``w`` of the last), so they run
here, without the interpreter between them. ``tests/test_scml.py`` holds the NumPy
version this loop must match.
"""

import numpy as np

from libc.math cimport sqrt


def dual_averaging_updates(const double[:, ::1] rows, const Py_ssize_t[:, ::1] draws,
                           double[::1] weights, double[::1] mean_gradient,
                           double[::1] squared_sum, double count, *, double beta,
                           double gamma, double delta):
    """Run one update per row of ``draws`` (indices into ``rows``, one batch), in place.

    Returns the update count after them (``count`` plus the number of batches).
    """
    cdef Py_ssize_t n_updates = draws.shape[0], batch = draws.shape[1]
    cdef Py_ssize_t n_basis = rows.shape[1], u, b, k, t
    cdef double slack, g, scale
    cdef double[::1] gradient = np.zeros(n_basis)
    with nogil:
        for u in range(n_updates):
            for k in range(n_basis):
                gradient[k] = 0.0
            for b in range(batch):
                t = draws[u, b]
                slack = 1.0
                for k in range(n_basis):
                    slack += rows[t, k] * weights[k]
                if slack > 0.0:
                    for k in range(n_basis):
                        gradient[k] += rows[t, k]
            count += 1.0
            for k in range(n_basis):
                g = gradient[k] / batch
                mean_gradient[k] += (g - mean_gradient[k]) / count
                squared_sum[k] += g * g
                scale = -count / (gamma * (delta + sqrt(squared_sum[k])))
                weights[k] = scale * min(mean_gradient[k] + beta, 0.0)
    return count
