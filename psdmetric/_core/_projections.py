"""The Euclidean (Frobenius) projection onto the PSD cone cut by a trace bound, in factored form.

:func:`project_trace_bounded` projects a symmetric operator onto ``{A ⪰ 0, tr(A) ≤ t}``
exactly (its eigenvalues projected onto a capped simplex). Only the eigenvalues above
the simplex's shift survive, so it needs the leading eigenpairs alone: a dense partial
``eigh``, or Lanczos on matrix-vector products when the operator is implicit, and
the result comes back as ``V diag(values) Vᵀ``. A linear constraint ``tr(S A) ≤ 1``
with ``S`` positive definite becomes such a trace bound in the coordinates
``R A Rᵀ``, ``S = RᵀR``: MMC's similar-pair constraint (Xing, Ng, Jordan & Russell,
2002, §2.1), whose iterates have rank a few.
"""

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import eigsh


def leading_eigenpairs(operator, count, start=None):
    """The ``count`` largest eigenvalues of a symmetric operator (descending), with vectors.

    ``operator`` is a dense symmetric ndarray (LAPACK's partial ``eigh``) or a scipy
    ``LinearOperator`` (ARPACK's Lanczos to machine precision, from ``start``); an
    operator asked for a quarter or more of its spectrum must be dense.
    """
    size = operator.shape[0]
    if isinstance(operator, np.ndarray):
        values, vectors = linalg.eigh(operator, subset_by_index=(size - count, size - 1),
                                      check_finite=False)
    else:
        values, vectors = eigsh(operator, k=count, which="LA", v0=start, tol=0.0)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def project_trace_bounded(operator, trace, *, rank=1, start=None):
    """The nearest PSD matrix of trace at most ``trace`` to a symmetric operator, factored.

    Its eigenvalues are the operator's projected onto ``{λ ≥ 0, Σ λ ≤ trace}``:
    ``max(λ − θ, 0)`` with the simplex shift ``θ ≥ 0``. ``rank + 2`` leading eigenpairs
    are computed, doubling until the smallest of them is at most ``θ``: the others,
    smaller still, are clipped to zero, so the projection is exact. An implicit operator
    is made dense (``operator @ I``) once a quarter of its spectrum is needed.

    Parameters
    ----------
    operator : ndarray or LinearOperator of shape (d, d)
        Symmetric.
    trace : float
        The largest trace kept.
    rank : int, default=1
        The expected rank of the projection (e.g. the previous iterate's).
    start : ndarray of shape (d,), default=None
        Lanczos's starting vector (e.g. the previous leading eigenvector).

    Returns
    -------
    values : ndarray of shape (r,)
        The projection's positive eigenvalues, descending.
    vectors : ndarray of shape (d, r)
        Their orthonormal eigenvectors.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric._core import project_trace_bounded
    >>> values, vectors = project_trace_bounded(np.diag([3.0, 1.0, -1.0]), 2.0)
    >>> values, np.abs(vectors.ravel())
    (array([2.]), array([1., 0., 0.]))
    """
    size = operator.shape[0]
    count = rank + 2
    while True:
        count = min(count, size)
        if 4 * count >= size and not isinstance(operator, np.ndarray):
            operator = operator @ np.eye(size)
        values, vectors = leading_eigenpairs(operator, count, start)
        shift = max(_simplex_shift(values, trace), 0.0)
        if count == size or values[-1] <= shift:
            break
        count *= 2
    kept = values > shift
    return values[kept] - shift, vectors[:, kept]


def _simplex_shift(values, total):
    """``θ`` with ``Σ max(values − θ, 0) = total`` (Duchi et al.'s simplex projection)."""
    descending = np.sort(values)[::-1]
    sums = np.cumsum(descending) - total
    count = np.flatnonzero(descending - sums / np.arange(1, len(values) + 1) > 0)[-1] + 1
    return sums[count - 1] / count
