# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled per-update loops of POLA (Shalev-Shwartz, Singer & Ng, 2004), linear and kernel.

Every loop visits its examples in the given order and updates the learner's state in
place, so a pass over one chunk continues exactly where the previous chunk stopped.
"""
import numpy as np

from libc.math cimport INFINITY, sqrt
from scipy.linalg.cython_blas cimport ddot, dsymv, dsyr

from ._pola_projection cimport (Projection, ProjectionWorkspace, add_reduced_term,
                                add_term, grow, negative_eigenpair)


cdef inline double _lower_quadratic_form(const double* A, Py_ssize_t m, Py_ssize_t lda,
                                         const double* v, double* work) noexcept nogil:
    """vᵀ A v for symmetric A held in its lower triangle (column-major, leading dim lda)."""
    cdef int n = <int> m, ld = <int> lda, one = 1
    cdef double unit = 1.0, zero = 0.0
    if m == 0:
        return 0.0
    dsymv(b"L", &n, &unit, <double*> A, &ld, <double*> v, &one, &zero, work, &one)
    return ddot(&n, <double*> v, &one, work, &one)


cdef inline void _lower_rank_one(double* A, Py_ssize_t m, Py_ssize_t lda, double coef,
                                 const double* v) noexcept nogil:
    """A ← A + coef v vᵀ on the lower triangle."""
    cdef int n = <int> m, ld = <int> lda, one = 1
    if m > 0:
        dsyr(b"L", &n, &coef, <double*> v, &one, A, &ld)


cdef double _pola_update(double* A, Py_ssize_t m, Py_ssize_t lda, const double* v,
                         double squared_norm, double label, double gamma,
                         double* threshold, Projection* projection,
                         double* u) noexcept nogil:
    """One POLA round (Shalev-Shwartz et al., 2004, Fig. 1; eq. 12 with γ > 0) on the lower triangle of A.

    ``v`` holds the coordinates of ``x − x'`` and ``squared_norm`` its squared length,
    which sets the step α. They differ only in the kernel form, by a residual too small
    to add a basis vector for. ``projection`` holds A's tridiagonal reduction and the terms
    added since (kept in step with A here) and counts in ``projection.projections`` the
    projections onto the PSD cone that removed a negative eigenvalue; u is scratch of
    length m. Returns the hinge loss before the update.
    """
    cdef double distance = _lower_quadratic_form(A, m, lda, v, u)
    cdef double loss = label * (distance - threshold[0]) + 1.0
    cdef double alpha, eigenvalue, coordinate_norm
    cdef Py_ssize_t i
    if not loss > 0.0:
        return 0.0
    alpha = loss / (squared_norm * squared_norm + 1.0 + gamma)
    if not (alpha > 0.0 and alpha < INFINITY):
        # ‖v‖⁴ overflowed (the step vanishes) or the loss did (no finite step exists).
        return loss
    threshold[0] = threshold[0] + label * alpha
    if label < 0:
        _lower_rank_one(A, m, lda, alpha, v)
        add_term(projection, v, alpha)
        if threshold[0] < 1.0:
            threshold[0] = 1.0
        return loss
    coordinate_norm = 0.0
    for i in range(m):
        coordinate_norm = coordinate_norm + v[i] * v[i]
    eigenvalue = negative_eigenpair(
        projection, A, m, lda, v, alpha,
        (distance - alpha * coordinate_norm * coordinate_norm) / coordinate_norm, u)
    _lower_rank_one(A, m, lda, -alpha, v)
    # The W coordinates of v/‖v‖ are at hand: no product with W for this term.
    add_reduced_term(projection, projection.direction, sqrt(coordinate_norm), -alpha)
    if eigenvalue < 0.0:
        _lower_rank_one(A, m, lda, -eigenvalue, u)
        add_reduced_term(projection, projection.vector, 1.0, -eigenvalue)
        projection.projections = projection.projections + 1
    return loss


def pola_pass(const double[:, ::1] X, const Py_ssize_t[:, ::1] pairs,
              const double[::1] labels, double[::1, :] A, double threshold, double gamma,
              double[::1] losses, *, Py_ssize_t[::1] counters=None):
    """One pass of POLA over labelled pairs of rows of X.

    ``A`` (d×d, Fortran order) is updated in place on its lower triangle only.
    ``losses[t]`` receives the hinge loss of pair t before its update. ``counters``
    (optional, intp, length ≥ 1) accumulates the updates whose PSD projection removed
    an eigenvalue and, when it has 4 entries, the refreshed reductions of A, the
    evaluations of the secular function and those that needed a dense Cholesky
    factorisation (see :mod:`._pola_projection`). Returns the new threshold b.
    """
    cdef Py_ssize_t n_pairs = pairs.shape[0], d = X.shape[1]
    cdef Py_ssize_t t, k
    cdef double squared_norm
    if (A.shape[0] != d or A.shape[1] != d or labels.shape[0] != n_pairs
            or losses.shape[0] != n_pairs):
        raise ValueError("X, pairs, labels, A and losses have inconsistent shapes")
    if counters is not None and counters.shape[0] < 1:
        raise ValueError("counters needs 1 entry")
    if d == 0:
        return threshold
    cdef double[::1] v = np.empty(d)
    cdef double[::1] u = np.empty(d)
    cdef ProjectionWorkspace workspace = ProjectionWorkspace(d)
    cdef Projection* projection = &workspace.p
    with nogil:
        for t in range(n_pairs):
            squared_norm = 0.0
            for k in range(d):
                v[k] = X[pairs[t, 0], k] - X[pairs[t, 1], k]
                squared_norm = squared_norm + v[k] * v[k]
            losses[t] = _pola_update(&A[0, 0], d, d, &v[0], squared_norm, labels[t],
                                     gamma, &threshold, projection, &u[0])
    if counters is not None:
        counters[0] += projection.projections
        if counters.shape[0] > 3:
            counters[1] += projection.refreshes
            counters[2] += projection.evaluations
            counters[3] += projection.dense_evaluations
    return threshold


cdef void _add_basis_vector(double[::1, :] coefficients, double[::1, :] M, double* c,
                            Py_ssize_t n_stored, Py_ssize_t rank,
                            double residual) noexcept nogil:
    """Append ``q = (φ(p_a) − φ(p_b) − Σ_k c_k q_k) / residual`` to the basis.

    ``p_a`` and ``p_b`` become stored points ``n_stored`` and ``n_stored + 1``;
    ``residual`` is the length of the numerator, the new coordinate ``c[rank]`` of the
    difference; M gains a zero row and column.
    """
    cdef Py_ssize_t j, k
    for j in range(n_stored + 2):
        coefficients[j, rank] = 0.0
    for k in range(rank):
        for j in range(n_stored):
            coefficients[j, rank] = coefficients[j, rank] - c[k] * coefficients[j, k]
    for j in range(n_stored):
        coefficients[j, rank] = coefficients[j, rank] / residual
    coefficients[n_stored, rank] = 1.0 / residual
    coefficients[n_stored + 1, rank] = -1.0 / residual
    for k in range(rank):
        coefficients[n_stored, k] = 0.0
        coefficients[n_stored + 1, k] = 0.0
    for k in range(rank + 1):
        M[rank, k] = 0.0
        M[k, rank] = 0.0
    c[rank] = residual


cdef void _complete_coordinates(double[:, ::1] coordinates, Py_ssize_t[::1] known,
                                Py_ssize_t p, Py_ssize_t rank,
                                const double[::1, :] coefficients, const double[:, ::1] gram,
                                const Py_ssize_t[::1] row_of,
                                Py_ssize_t n_stored) noexcept nogil:
    """Coordinates of point p along the basis vectors added since they were last read.

    ``q_k = Σ_j coefficients[j, k] φ(s_j)``; a point stored after q_k was made has a zero
    coefficient in it, so the sum may run over every point stored so far.
    """
    cdef Py_ssize_t j, k
    cdef double total
    for k in range(known[p], rank):
        total = 0.0
        for j in range(n_stored):
            total = total + coefficients[j, k] * gram[row_of[j], p]
        coordinates[p, k] = total
    known[p] = rank


def kernel_pola_block(const double[:, ::1] gram, Py_ssize_t n_stored,
                      const Py_ssize_t[:, ::1] pairs, const double[::1] labels,
                      double[::1, :] coefficients, double[::1, :] M, Py_ssize_t rank,
                      double threshold, double gamma, *, double tolerance,
                      double initial_scale, double[::1] losses,
                      Py_ssize_t[::1] new_stored, double[:, ::1] coordinates,
                      double[::1] lengths, bint can_grow):
    """POLA in a kernel's feature space (Shalev-Shwartz et al., 2004, §3.3) over one block of pairs.

    The learned matrix is ``A = Σ_kl M_kl q_k q_lᵀ`` over an orthonormal basis
    ``q_k = Σ_j coefficients[j, k] φ(s_j)`` of the span of the differences seen so far,
    built by kernel Gram–Schmidt over stored points ``s_j``. The block's pairs index its
    own points ``p_a``; ``gram`` holds ``K(s_j, p_a)`` in its first ``n_stored`` rows
    and ``K(p_b, p_a)`` below. A difference whose residual against the basis exceeds
    ``tolerance`` times its squared length (and that triggers an update) adds a basis
    vector, storing its two points: their indices into the block's points go to
    ``new_stored``. With ``initial_scale`` c > 0 the start is ``A₁ = c·I`` on the span of
    the differences: every difference with a residual adds a basis vector, whose
    diagonal entry of M starts at c, before its loss is read. ``coefficients`` and
    ``M`` (lower triangle used) must have room for ``n_stored + 2 n_pairs`` points and
    ``rank + n_pairs`` basis vectors. ``coordinates[p, :rank]`` holds the coordinates of
    the block's point p in the basis on entry (``gramᵀ`` times ``coefficients``, one
    product for the block); the coordinates along basis vectors added during the block
    are computed when a pair first needs them, so a pair costs O(rank), not
    O(n_stored · rank), once the basis stops growing.

    ``lengths[t]`` receives ``‖φ(p_a) − φ(p_b)‖²`` of pair t. With ``can_grow`` false no
    pair adds a basis vector (true of a pass over pairs that a previous pass added none
    for: same residuals, same basis), ``gram`` is not read, ``coordinates`` holds every
    point's coordinates and ``lengths`` is read: the whole pass is one call.

    Returns ``(n_stored, rank, threshold, n_new_stored)`` after the block.
    """
    cdef Py_ssize_t n_pairs = pairs.shape[0], n_points = coordinates.shape[0]
    cdef Py_ssize_t capacity = coefficients.shape[1]
    # Room for the basis vectors (and their stored points) the pairs may add.
    cdef Py_ssize_t growth = n_pairs if can_grow else 0
    cdef Py_ssize_t t, j, k, a, b, n_new = 0, first_new = n_stored
    cdef double squared_norm, residual, distance, scale
    cdef bint grows
    if ((can_grow and (gram.shape[0] != n_stored + n_points or gram.shape[1] != n_points))
            or labels.shape[0] != n_pairs or lengths.shape[0] != n_pairs
            or losses.shape[0] != n_pairs or new_stored.shape[0] < 2 * growth
            or coefficients.shape[0] < n_stored + 2 * growth
            or capacity < rank + growth or M.shape[0] < capacity
            or M.shape[1] < capacity
            or coordinates.shape[1] < (capacity if can_grow else rank)):
        raise ValueError("gram, pairs, labels, coefficients, M, coordinates, lengths and "
                         "outputs disagree")
    cdef Py_ssize_t lda = M.shape[0]
    # row_of[j]: the row of gram holding K(s_j, ·) for stored point j.
    cdef Py_ssize_t[::1] row_of = np.empty(n_stored + 2 * growth, dtype=np.intp)
    # known[p]: how many leading basis vectors coordinates[p] holds.
    cdef Py_ssize_t[::1] known = np.full(n_points, rank, dtype=np.intp)
    cdef double[::1] c = np.empty(capacity)
    cdef double[::1] u = np.empty(capacity)
    cdef ProjectionWorkspace workspace = ProjectionWorkspace(rank + growth)
    cdef Projection* projection = &workspace.p
    for j in range(n_stored):
        row_of[j] = j
    with nogil:
        for t in range(n_pairs):
            a = pairs[t, 0]
            b = pairs[t, 1]
            _complete_coordinates(coordinates, known, a, rank, coefficients, gram, row_of,
                                  n_stored)
            _complete_coordinates(coordinates, known, b, rank, coefficients, gram, row_of,
                                  n_stored)
            squared_norm = 0.0
            for k in range(rank):
                c[k] = coordinates[a, k] - coordinates[b, k]
                squared_norm = squared_norm + c[k] * c[k]
            if can_grow:
                scale = (gram[first_new + a, a] - 2.0 * gram[first_new + a, b]
                         + gram[first_new + b, b])
                lengths[t] = scale
                residual = scale - squared_norm
                grows = residual > tolerance * scale
            else:
                scale = lengths[t]
                grows = False
            if grows and not initial_scale > 0.0:
                # From A₁ = 0 a difference joins the basis only if its pair moves A (the
                # update reads the loss of a pair that does not grow the basis itself).
                distance = _lower_quadratic_form(&M[0, 0], rank, lda, &c[0], &u[0])
                if not labels[t] * (distance - threshold) + 1.0 > 0.0:
                    losses[t] = 0.0
                    continue
            if grows:
                _add_basis_vector(coefficients, M, &c[0], n_stored, rank, sqrt(residual))
                M[rank, rank] = initial_scale
                row_of[n_stored] = first_new + a
                row_of[n_stored + 1] = first_new + b
                new_stored[n_new] = a
                new_stored[n_new + 1] = b
                n_new = n_new + 2
                n_stored = n_stored + 2
                grow(projection, rank, initial_scale)
                rank = rank + 1
            losses[t] = _pola_update(&M[0, 0], rank, lda, &c[0], scale, labels[t], gamma,
                                     &threshold, projection, &u[0])
    return n_stored, rank, threshold, n_new
