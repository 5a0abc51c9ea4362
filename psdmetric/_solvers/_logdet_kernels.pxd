# Lets other compiled kernels cimport the CHOLUPDATEMULT loop (the online Burg learner
# updates its Cholesky factors with it).
cdef void _cholupdatemult(double beta, const double* x, double* B, Py_ssize_t r,
                          double* P, double* s) noexcept nogil
