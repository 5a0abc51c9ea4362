# The factor kernels other compiled kernels cimport: LogDet's projections and the online
# Burg learner update their Cholesky factors with CHOLUPDATEMULT.
cdef void _cholupdatemult(double beta, const double* x, double* B, Py_ssize_t r,
                          double* P, double* s) noexcept nogil
cdef void _lower_transpose_times(const double* B, const double* v, double* w,
                                 Py_ssize_t r) noexcept nogil
