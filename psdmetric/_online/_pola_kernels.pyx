# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled per-update loops of POLA (Shalev-Shwartz, Singer & Ng, 2004), linear and kernel.

Every loop visits its examples in the given order and updates the learner's state in
place, so a pass over one chunk continues exactly where the previous chunk stopped.
"""
import numpy as np

from libc.math cimport INFINITY, fabs, sqrt
from scipy.linalg.cython_lapack cimport dpotrf, dpotrs


# POLA's projection ignores a negative eigenvalue above −_NEGLIGIBLE · (tr A + α‖v‖²):
# that far below the rounding level of the matrix it cannot be told from zero.
cdef double _NEGLIGIBLE = 1e-13
cdef int _MAX_NEWTON = 60


cdef inline double _lower_quadratic_form(const double* A, Py_ssize_t m, Py_ssize_t lda,
                                         const double* v) noexcept nogil:
    """vᵀ A v for symmetric A held in its lower triangle (column-major, leading dim lda)."""
    cdef Py_ssize_t i, j
    cdef double total = 0.0, column_sum
    cdef const double* column
    for j in range(m):
        column = A + j * lda
        column_sum = 0.0
        for i in range(j + 1, m):
            column_sum = column_sum + column[i] * v[i]
        total = total + v[j] * (column[j] * v[j] + 2.0 * column_sum)
    return total


cdef inline void _lower_rank_one(double* A, Py_ssize_t m, Py_ssize_t lda, double coef,
                                 const double* v) noexcept nogil:
    """A ← A + coef v vᵀ on the lower triangle."""
    cdef Py_ssize_t i, j
    cdef double scaled
    cdef double* column
    for j in range(m):
        column = A + j * lda
        scaled = coef * v[j]
        for i in range(j, m):
            column[i] = column[i] + scaled * v[i]


cdef double _negative_eigenpair(const double* A, Py_ssize_t m, Py_ssize_t lda,
                                const double* v, double alpha, double rayleigh,
                                double* u, double* work, double* factor) noexcept nogil:
    """The negative eigenvalue λ of ``Â = A − α v vᵀ`` (A ⪰ 0, α > 0), unit eigenvector u.

    At most one eigenvalue of Â is negative (interlacing). It solves the secular equation
    ``α vᵀ(A − λI)⁻¹v = 1`` on ``λ < 0``, where ``A − λI ≻ 0``: each evaluation is one
    Cholesky factorisation, and the eigenvector is ``(A − λI)⁻¹v``. Newton's method on
    ``ψ(λ) = 1 / vᵀ(A − λI)⁻¹v`` (concave and decreasing) started right of the root moves
    monotonically onto it without leaving ``λ < 0``; it starts from the Rayleigh quotient
    ``rayleigh = vᵀÂv / ‖v‖²`` when that is negative (then λ ≤ rayleigh exists), else just
    below zero. Once a Newton step is below 1e-7 |λ|, the last step is taken without a
    new factorisation and the eigenvector gets one step of inverse iteration with the
    shift λ, which leaves both accurate to about 1e-14 relative. The problem is solved
    for ``Â / σ`` with unit v, ``σ = tr A + α‖v‖²``, so no intermediate can overflow.

    Returns 0 (u untouched) when no eigenvalue lies below ``−_NEGLIGIBLE · σ``.
    """
    cdef Py_ssize_t i, j, iteration
    cdef int n = <int> m, lda_factor = <int> m, one = 1, info = 0
    cdef char lower = b'L'
    cdef double length = 0.0, scale = 0.0, inverse_scale, weight, eigenvalue, step
    cdef double g = 0.0, g_slope = 0.0, norm, shift_gain
    cdef bint right_of_root
    cdef double* direction = work
    for i in range(m):
        length = length + v[i] * v[i]
        scale = scale + A[i * lda + i]
    length = sqrt(length)
    scale = scale + alpha * length * length
    inverse_scale = 1.0 / scale
    for i in range(m):
        direction[i] = v[i] / length
    # Â / σ = A / σ − weight · direction directionᵀ, its least eigenvalue in [−weight, 0).
    weight = alpha * length * length / scale
    eigenvalue = -_NEGLIGIBLE
    right_of_root = rayleigh / scale < eigenvalue
    if right_of_root:
        eigenvalue = rayleigh / scale if rayleigh / scale > -weight else -weight
    for iteration in range(_MAX_NEWTON):
        for j in range(m):
            for i in range(j, m):
                factor[j * m + i] = A[j * lda + i] * inverse_scale
            factor[j * m + j] = factor[j * m + j] - eigenvalue
        dpotrf(&lower, &n, factor, &lda_factor, &info)
        if info != 0:
            # Rounding left A slightly indefinite: A − λI is not positive definite yet.
            if eigenvalue == -weight:
                return 0.0
            eigenvalue = 4.0 * eigenvalue if 4.0 * eigenvalue > -weight else -weight
            continue
        for i in range(m):
            u[i] = direction[i]
        dpotrs(&lower, &n, &one, factor, &lda_factor, u, &lda_factor, &info)
        g = 0.0
        g_slope = 0.0
        for i in range(m):
            g = g + direction[i] * u[i]
            g_slope = g_slope + u[i] * u[i]
        if weight * g <= 1.0:
            # ψ(λ) ≥ α: λ is at the root (up to rounding), or no eigenvalue is below λ.
            if not right_of_root:
                return 0.0
            break
        right_of_root = True
        step = g * (1.0 - weight * g) / g_slope
        if eigenvalue + step < -weight:
            step = -weight - eigenvalue
        if fabs(step) <= 1e-7 * fabs(eigenvalue):
            eigenvalue = eigenvalue + step
            break
        eigenvalue = eigenvalue + step
    if g_slope == 0.0:
        return 0.0  # no factorisation succeeded: nothing reliable to project out
    if weight * g != 1.0:
        # Inverse iteration with the factorisation at hand: (Â − λI)⁻¹u by
        # Sherman–Morrison, = (A − λI)⁻¹u + α g' / (1 − α g) · u.
        for i in range(m):
            work[i] = u[i]
        dpotrs(&lower, &n, &one, factor, &lda_factor, work, &lda_factor, &info)
        shift_gain = weight * g_slope / (1.0 - weight * g)
        for i in range(m):
            u[i] = work[i] + shift_gain * u[i]
    norm = 0.0
    for i in range(m):
        norm = norm + u[i] * u[i]
    norm = sqrt(norm)
    for i in range(m):
        u[i] = u[i] / norm
    return eigenvalue * scale


cdef struct _Scratch:
    # Work arrays of the PSD projection (m, m and m² entries) and its count of projections
    # that removed a negative eigenvalue.
    double* u
    double* work
    double* factor
    Py_ssize_t projections


cdef double _pola_update(double* A, Py_ssize_t m, Py_ssize_t lda, const double* v,
                         double squared_norm, double label, double gamma,
                         double* threshold, _Scratch* scratch) noexcept nogil:
    """One POLA round (Shalev-Shwartz et al., 2004, Fig. 1; eq. 12 with γ > 0) on the lower triangle of A.

    ``v`` holds the coordinates of ``x − x'`` and ``squared_norm`` its squared length,
    which sets the step α. They differ only in the kernel form, by a residual too small
    to add a basis vector for. Counts projections onto the PSD cone that removed a
    negative eigenvalue in ``scratch.projections``. Returns the hinge loss before the
    update.
    """
    cdef double distance = _lower_quadratic_form(A, m, lda, v)
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
        if threshold[0] < 1.0:
            threshold[0] = 1.0
        return loss
    coordinate_norm = 0.0
    for i in range(m):
        coordinate_norm = coordinate_norm + v[i] * v[i]
    eigenvalue = _negative_eigenpair(
        A, m, lda, v, alpha,
        (distance - alpha * coordinate_norm * coordinate_norm) / coordinate_norm,
        scratch.u, scratch.work, scratch.factor)
    _lower_rank_one(A, m, lda, -alpha, v)
    if eigenvalue < 0.0:
        _lower_rank_one(A, m, lda, -eigenvalue, scratch.u)
        scratch.projections = scratch.projections + 1
    return loss


def pola_pass(const double[:, ::1] X, const Py_ssize_t[:, ::1] pairs,
              const double[::1] labels, double[::1, :] A, double threshold, double gamma,
              double[::1] losses, *, Py_ssize_t[::1] counters=None):
    """One pass of POLA over labelled pairs of rows of X.

    ``A`` (d×d, Fortran order) is updated in place on its lower triangle only.
    ``losses[t]`` receives the hinge loss of pair t before its update. ``counters``
    (optional, intp, length ≥ 1) accumulates the updates whose PSD projection removed
    an eigenvalue. Returns the new threshold b.
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
    cdef double[::1] work = np.empty(d)
    cdef double[::1] factor = np.empty(d * d)
    cdef _Scratch scratch = _Scratch(&u[0], &work[0], &factor[0], 0)
    with nogil:
        for t in range(n_pairs):
            squared_norm = 0.0
            for k in range(d):
                v[k] = X[pairs[t, 0], k] - X[pairs[t, 1], k]
                squared_norm = squared_norm + v[k] * v[k]
            losses[t] = _pola_update(&A[0, 0], d, d, &v[0], squared_norm, labels[t],
                                     gamma, &threshold, &scratch)
    if counters is not None:
        counters[0] += scratch.projections
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
    cdef double[::1] work = np.empty(capacity)
    cdef double[::1] factor = np.empty(capacity * capacity)
    cdef _Scratch scratch = _Scratch(&u[0], &work[0], &factor[0], 0)
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
                distance = _lower_quadratic_form(&M[0, 0], rank, lda, &c[0])
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
                rank = rank + 1
            losses[t] = _pola_update(&M[0, 0], rank, lda, &c[0], scale, labels[t], gamma,
                                     &threshold, &scratch)
    return n_stored, rank, threshold, n_new
