# The projection both von Neumann sweeps share, cimported by the Krylov sweep.
from .._core._eigen_workspace cimport Work


cdef struct _Sweep:
    # One cycle's constraints (``direction[c] · (d² − target[c]) ≤ 0``, slack, duals), the
    # projection's options and the cycle's counts.
    const double* direction
    double* target
    const double* slack
    double* dual
    bint relative
    double root_rtol
    Py_ssize_t n_violated
    Py_ssize_t n_projections


cdef bint _project(Work* wk, const double* Q, double nw, Py_ssize_t c, _Sweep* sweep,
                   double* t) noexcept nogil
cdef void _count(Py_ssize_t[::1] counters, Py_ssize_t n_projections, Work* wk,
                 Py_ssize_t fourth)
