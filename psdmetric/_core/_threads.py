"""One BLAS thread for a fit: the learners' products are small (d ≤ a few hundred), so a
second thread costs more in synchronisation than it saves (LogDetCV on digits: 4.4 s of
wall time with two OpenBLAS threads, 2.4 s with one), and a fit must not depend on the
number of threads of the machine it runs on.
"""

import functools

from threadpoolctl import ThreadpoolController


@functools.cache
def threadpool_controller():
    """One controller per process: building one scans every loaded library (about 2.5 ms)."""
    return ThreadpoolController()


def one_blas_thread():
    """A context in which BLAS runs on one thread."""
    return threadpool_controller().limit(limits=1, user_api="blas")


def one_thread():
    """A context in which BLAS and OpenMP (scikit-learn's neighbour search) run on one thread."""
    return threadpool_controller().limit(limits=1)
