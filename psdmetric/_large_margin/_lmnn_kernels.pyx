# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""LMNN's loss in one pass over its pairs and triplets with the image ``(D − W) Z`` of
its gradient, and the impostor search's pairs within their radii.

NumPy would make a pass per step over the triplets (their margins, the active mask, two
weighted counts) and assemble a sparse Laplacian per evaluation; here each push pair's
squared distance is computed once, its triplets are swept while it is in a register,
and the Laplacian is applied pair by pair (``_lmnn_simd.h`` and the core's
``_distance_simd.h``: the per-pair loops at the CPU's vector width).
``tests/test_lmnn.py`` holds the NumPy versions these loops must match.
"""

import numpy as np

ctypedef fused pull_index:
    int
    Py_ssize_t


cdef extern from "../_core/_distance_simd.h" nogil:
    double psdmetric_squared_distance(const double* a, const double* b, Py_ssize_t r)


cdef extern from "_lmnn_simd.h" nogil:
    void psdmetric_add_pair(double* image_a, double* image_b, const double* a,
                            const double* b, double weight, Py_ssize_t r)


cdef inline double _squared_distance(const double[:, ::1] Z, Py_ssize_t a,
                                     Py_ssize_t b) noexcept nogil:
    return psdmetric_squared_distance(&Z[a, 0], &Z[b, 0], Z.shape[1])


cdef inline void _add_pair(double[:, ::1] image, const double[:, ::1] Z, Py_ssize_t a,
                           Py_ssize_t b, double weight) noexcept nogil:
    # A pair of a point with itself adds w (z_a − z_a) = 0: skipped, so the rows differ.
    if a != b:
        psdmetric_add_pair(&image[a, 0], &image[b, 0], &Z[a, 0], &Z[b, 0], weight,
                           Z.shape[1])


def triplet_loss(const double[:, ::1] Z, const Py_ssize_t[:, ::1] pull,
                 const Py_ssize_t[:, ::1] push, const Py_ssize_t[::1] push_start,
                 const pull_index[::1] triplet_pull, double mu, *, double[:, ::1] image=None):
    """The loss at ``Z = X Lᵀ`` and its number of active triplets; with ``image``
    (``Z``'s shape, not overlapping it), also ``(D − W) Z`` in it, ``D − W`` the
    Laplacian of the pairs' gradient weights (the gradient is ``2 ((D − W) Z)ᵀ X``).

    The triplets of push pair ``p`` are ``(p, q)`` for the pull rows ``q`` in
    ``triplet_pull[push_start[p]:push_start[p + 1]]``, each with the margin
    ``1 + d²(pull[q]) − d²(push[p])``. A pull pair weighs ``1 − mu`` plus ``mu`` per
    active triplet, a push pair ``−mu`` per active triplet.
    """
    cdef Py_ssize_t n = Z.shape[0], n_pull = pull.shape[0], n_push = push.shape[0]
    cdef Py_ssize_t p, q, t, count, n_active = 0
    cdef double push_squared, margin, pull_total = 0.0, hinge = 0.0
    _check(n, pull, push, push_start, triplet_pull)
    if image is not None and (image.shape[0] != n or image.shape[1] != Z.shape[1]):
        raise ValueError("image must have the shape of Z")
    pull_squared_array = np.empty(n_pull)
    pull_active_array = np.zeros(n_pull, dtype=np.intp)
    push_active_array = np.empty(n_push, dtype=np.intp)
    cdef double[::1] pull_squared = pull_squared_array
    cdef Py_ssize_t[::1] pull_active = pull_active_array, push_active = push_active_array
    if image is not None:
        image[...] = 0.0
    with nogil:
        for q in range(n_pull):
            pull_squared[q] = _squared_distance(Z, pull[q, 0], pull[q, 1])
            pull_total += pull_squared[q]
        for p in range(n_push):
            count = 0
            if push_start[p + 1] > push_start[p]:
                push_squared = _squared_distance(Z, push[p, 0], push[p, 1])
                for t in range(push_start[p], push_start[p + 1]):
                    q = triplet_pull[t]
                    margin = pull_squared[q] - push_squared + 1.0
                    if margin > 0.0:
                        hinge += margin
                        count += 1
                        pull_active[q] += 1
            push_active[p] = count
            n_active += count
        if image is not None:
            for q in range(n_pull):
                _add_pair(image, Z, pull[q, 0], pull[q, 1],
                          pull_active[q] * mu + (1.0 - mu))
            for p in range(n_push):
                if push_active[p]:
                    _add_pair(image, Z, push[p, 0], push[p, 1], push_active[p] * -mu)
    return (1.0 - mu) * pull_total + mu * hinge, n_active


def _check(Py_ssize_t n, const Py_ssize_t[:, ::1] pull, const Py_ssize_t[:, ::1] push,
           const Py_ssize_t[::1] push_start, triplet_pull):
    """Refuse indices out of range before the loops read memory with them."""
    if pull.shape[1] != 2 or push.shape[1] != 2:
        raise ValueError("pull and push must have two columns")
    if len(push_start) != push.shape[0] + 1 or push_start[0] != 0 \
            or push_start[push.shape[0]] != len(triplet_pull) \
            or np.any(np.diff(push_start) < 0):
        raise ValueError("push_start must rise from 0 to len(triplet_pull), one per push pair")
    for name, pairs in (("pull", pull), ("push", push)):
        if pairs.shape[0] and (np.min(pairs) < 0 or np.max(pairs) >= n):
            raise ValueError(f"{name} must index the {n} rows of Z")
    if len(triplet_pull) and (np.min(triplet_pull) < 0
                              or np.max(triplet_pull) >= pull.shape[0]):
        raise ValueError("triplet_pull must index the rows of pull")


def close_pairs(double[:, ::1] block, const double[::1] row_norms,
                const double[::1] column_norms, const double[::1] row_radii,
                const double[::1] column_radii):
    """The entries of ``block = Z_rows Z_columnsᵀ`` whose squared distance is below the
    row's radius, and those below the column's, each as (row, column) positions in
    row-major order.

    ``block`` is overwritten with the squared distances ``‖z_r‖² + ‖z_c‖² − 2 z_r·z_c``,
    summed in NumPy's order, so that the pairs are those NumPy's comparisons find; two
    passes (count, then fill) over it instead of NumPy's six and two boolean matrices.
    """
    cdef Py_ssize_t n_rows = block.shape[0], n_columns = block.shape[1], r, c
    cdef Py_ssize_t n_forward = 0, n_backward = 0
    cdef double squared
    if (row_norms.shape[0] != n_rows or row_radii.shape[0] != n_rows
            or column_norms.shape[0] != n_columns or column_radii.shape[0] != n_columns):
        raise ValueError("norms and radii must have one entry per row and column of block")
    with nogil:
        for r in range(n_rows):
            for c in range(n_columns):
                squared = (row_norms[r] + column_norms[c]) - 2.0 * block[r, c]
                block[r, c] = squared
                n_forward += squared < row_radii[r]
                n_backward += squared < column_radii[c]
    forward_array = np.empty((2, n_forward), dtype=np.intp)
    backward_array = np.empty((2, n_backward), dtype=np.intp)
    cdef Py_ssize_t[:, ::1] forward = forward_array, backward = backward_array
    n_forward = n_backward = 0
    with nogil:
        for r in range(n_rows):
            for c in range(n_columns):
                if block[r, c] < row_radii[r]:
                    forward[0, n_forward] = r
                    forward[1, n_forward] = c
                    n_forward += 1
                if block[r, c] < column_radii[c]:
                    backward[0, n_backward] = r
                    backward[1, n_backward] = c
                    n_backward += 1
    return forward_array, backward_array
