# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""MLKR's kernel weights, one row at a time: squared distances from the Gram block,
the leave-one-out softmax, the prediction, its error and the gradient's weights.

NumPy would make a dozen passes over the rows × n block (and a temporary of its size);
here each row is swept while it sits in cache, once before NumPy's vectorised ``exp``
and once after. ``tests/test_mlkr.py`` holds the NumPy version these loops must match.
"""

from libc.math cimport INFINITY, fabs

# Weights under this (relative to the row's largest, 1) are zero in every sum, and their
# products would go subnormal and slow every operation after: they are zeroed.
cdef double _SMALLEST = 1e-260
# Exponents are raised to this (a normal weight under _SMALLEST): NumPy's exp takes a
# slow path for -inf and for underflow.
cdef double _FLOOR = -700.0
# Entries of W below this are flushed to zero: they count in no gradient sum unless the
# loss is itself ~1e-500, and as subnormals they would slow the GEMMs threefold.
cdef double _FLUSH = 1e-250
# Side of the square tiles add_transpose sweeps (two 32 KiB tiles stay in L2).
cdef Py_ssize_t _TILE = 64


def kernel_exponents(double[:, ::1] block, const double[::1] norms, Py_ssize_t start):
    """Turn ``block = Z[rows] Zᵀ`` (rows ``start …``) into the softmax exponents in place:
    ``−‖z_i − z_j‖²`` minus its largest over ``j ≠ i``, at least ``_FLOOR``, and
    ``_FLOOR`` at ``j = i``."""
    cdef Py_ssize_t n_rows = block.shape[0], n = block.shape[1], r, i, j
    cdef double largest
    with nogil:
        for r in range(n_rows):
            i = start + r
            for j in range(n):
                block[r, j] = min(2.0 * block[r, j] - norms[i] - norms[j], 0.0)
            block[r, i] = -INFINITY
            largest = -INFINITY
            for j in range(n):
                largest = max(largest, block[r, j])
            for j in range(n):
                block[r, j] = max(block[r, j] - largest, _FLOOR)


def kernel_weights(double[:, ::1] block, const double[::1] y, Py_ssize_t start,
                   double[::1] column_sums):
    """Turn ``block = exp(exponents)`` (rows ``start …``) into ``W`` in place.

    ``W_ij = p_ij (ŷ_i − y_i)(y_j − ŷ_i)``, ``p_ij`` the block's rows, zero under
    ``_SMALLEST``, normalised to sum to 1; entries of ``W`` under ``_FLUSH`` zero.
    Adds the column sums of ``W`` into ``column_sums`` and returns the block's
    ``Σ_i (ŷ_i − y_i)²``.
    """
    cdef Py_ssize_t n_rows = block.shape[0], n = block.shape[1], r, j
    cdef double total, weighted, predicted, error, scale, value, loss = 0.0
    with nogil:
        for r in range(n_rows):
            total = weighted = 0.0
            for j in range(n):
                value = block[r, j] if block[r, j] >= _SMALLEST else 0.0
                block[r, j] = value
                total += value
                weighted += value * y[j]
            predicted = weighted / total
            error = predicted - y[start + r]
            loss += error * error
            scale = error / total
            for j in range(n):
                value = block[r, j] * scale * (y[j] - predicted)
                if fabs(value) < _FLUSH:
                    value = 0.0
                block[r, j] = value
                column_sums[j] += value
    return loss


def add_transpose(double[:, ::1] block):
    """``block += blockᵀ`` in place (square), tile by tile so both reads stay in cache."""
    cdef Py_ssize_t n = block.shape[0], n_tiles = (n + _TILE - 1) // _TILE
    cdef Py_ssize_t ti, tj, i, j
    cdef double value
    with nogil:
        for ti in range(n_tiles):
            for tj in range(ti, n_tiles):
                for i in range(ti * _TILE, min(ti * _TILE + _TILE, n)):
                    for j in range(max(tj * _TILE, i), min(tj * _TILE + _TILE, n)):
                        value = block[i, j] + block[j, i]
                        block[i, j] = value
                        block[j, i] = value
