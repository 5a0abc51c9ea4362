# The secular-equation solver of the eigen update, cimported by _eigen_update.
from ._eigen_workspace cimport Work

cdef int _secular(Work* wk, bint warm) noexcept nogil
