# The eigen update ``diag(Q) + ρ w wᵀ`` on a workspace, cimported by the kernels that
# change a matrix logarithm by rank-one terms (von Neumann, MEG, DefiniteBoost).
from ._eigen_workspace cimport Work


cdef class _Workspace:
    cdef Work w
    cdef double* dbuf
    cdef Py_ssize_t* ibuf


cdef int _decompose(Work* wk, const double* q, const double* zhat, double t) noexcept nogil
cdef void _spectrum(Work* wk) noexcept nogil
cdef void _apply(Work* wk, double* Q, double* Wc, double* Wn) noexcept nogil
cdef void _moments(Work* wk, double* logphi, double* dlogphi, double* logtrace,
                   double* ratio, const double* alleig, bint with_slope) noexcept nogil
cdef void _eigenvalues(Work* wk, double* out) noexcept nogil
cdef void _unit_spectrum(Work* wk, const double* Q, double nw) noexcept nogil
cdef _check_sorted(const double[::1] Q)


cdef inline void _normalize_top(double* Q, Py_ssize_t n, double* offset) noexcept nogil:
    """Shift Q so that its largest entry is 0 (Tsuda et al., 2005, eq. 7), adding the shift to offset."""
    cdef Py_ssize_t i
    cdef double top = Q[n - 1]
    for i in range(n):
        Q[i] -= top
    offset[0] += top
