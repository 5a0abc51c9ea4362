# The PSD projection of a POLA round, cimported by the compiled passes of _pola_kernels.

cdef struct Projection:
    # A = W (T + U G Uᵀ) Wᵀ: the tridiagonal reduction of A at the last refresh (T has
    # diagonal q and subdiagonal e, W is orthogonal, held as dsytrd's reflectors in the
    # array W) and the rank-one terms added since, on k orthonormal columns U (in W's
    # coordinates).
    Py_ssize_t stride     # leading dimension of W, U and Y (the largest dimension m)
    Py_ssize_t capacity   # columns of U before the next refresh; leading dimension of G
    Py_ssize_t m          # dimension of the representation
    Py_ssize_t k
    bint valid
    bint dense_only       # small m: every evaluation by the dense Cholesky factorisation
    double* W
    double* q
    double* e
    double* U
    double* Ut            # U's rows, capacity + 1 apart (U transposed, for the recurrences)
    double* G
    # Scratch of the solves with A / σ − λI: T / σ − λI = L D Lᵀ (L unit lower
    # bidiagonal with subdiagonal l), D⁻¹, D^{-1/2}, Y = ((T/σ − λ)⁻¹[U d])ᵀ (rows
    # capacity + 1 apart; d the direction), Uᵀ(T/σ − λ)⁻¹U, the k×k matrix
    # I + G Uᵀ(T/σ − λ)⁻¹U / σ and its pivots.
    double* l
    double* dinv
    double* root_dinv
    double* Y
    double* gram
    double* S
    int* pivots
    double* t
    double* terms
    double* coords
    double* residual
    double* correction
    double shift           # the last _factor's λ and 1/σ
    double inverse_scale
    double* direction     # the pair's unit difference in W's coordinates
    double* vector        # the negative eigenvector in W's coordinates
    double* work
    # The Cholesky factor of A / σ − λI when the solve with the terms fails (dense).
    double* factor
    bint dense
    double* tau           # the Householder scalars of the reduction
    Py_ssize_t reflected  # the dimension at the refresh: W's reflectors act on it
    double* lapack_work
    int lapack_lwork
    # Counters for the benchmarks: projections that removed an eigenvalue, refreshes,
    # evaluations of the secular function and those that needed the dense factorisation.
    Py_ssize_t projections
    Py_ssize_t refreshes
    Py_ssize_t evaluations
    Py_ssize_t dense_evaluations


cdef class ProjectionWorkspace:
    cdef Projection p
    cdef object buffers


cdef double negative_eigenpair(Projection* p, const double* A, Py_ssize_t m,
                               Py_ssize_t lda, const double* v, double alpha,
                               double rayleigh, double* u) noexcept nogil
cdef void add_term(Projection* p, const double* v, double coef) noexcept nogil
cdef void add_reduced_term(Projection* p, const double* z, double scale,
                         double coef) noexcept nogil
cdef void grow(Projection* p, Py_ssize_t m, double diagonal) noexcept nogil
