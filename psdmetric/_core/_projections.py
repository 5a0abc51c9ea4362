"""Euclidean (Frobenius) projections onto the PSD cone and onto its cut by a trace bound.

:func:`project_psd` clips the eigenvalues of the symmetric part at a floor; with
``trace=t`` it projects onto ``{A ⪰ 0, tr(A) ≤ t}``, the PSD cone intersected with a
half-space, exactly (the eigenvalues projected onto a capped simplex). A linear
constraint ``tr(S A) ≤ 1`` with ``S`` positive definite becomes such a trace bound in
the coordinates ``R A Rᵀ``, ``S = RᵀR``: MMC's similar-pair constraint (Xing, Ng,
Jordan & Russell, 2002, §2.1).
"""

import numpy as np
from scipy import linalg


def project_psd(M, floor=0.0, trace=None):
    """The nearest symmetric matrix to ``M`` with eigenvalues at least ``floor``.

    With ``trace``, the nearest PSD matrix of trace at most ``trace`` (the PSD cone cut
    by the half-space ``tr(A) ≤ trace``): its eigenvalues are those of ``M`` projected
    onto ``{λ ≥ 0, Σ λ ≤ trace}``, a clip at 0 or a shift onto the simplex.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        A square matrix; its symmetric part ``(M + Mᵀ)/2`` is projected.
    floor : float, default=0.0
        The smallest eigenvalue kept (0: the PSD cone; positive: a PD set); must be
        0 with ``trace``.
    trace : float, default=None
        The largest trace kept (``None``: no bound).

    Returns
    -------
    projected : ndarray of shape (d, d)
        ``V f(Λ) Vᵀ``, symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric._core import project_psd
    >>> project_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))
    array([[1.5, 1.5],
           [1.5, 1.5]])
    >>> project_psd(np.diag([3.0, 1.0, -1.0]), trace=2.0)
    array([[2., 0., 0.],
           [0., 0., 0.],
           [0., 0., 0.]])
    """
    values, vectors = linalg.eigh((M + M.T) / 2.0)
    clipped = np.maximum(values, floor)
    if trace is not None and clipped.sum() > trace:
        clipped = np.maximum(values - _simplex_shift(values, trace), 0.0)
    projected = (vectors * clipped) @ vectors.T
    return (projected + projected.T) / 2.0


def _simplex_shift(values, total):
    """``θ`` with ``Σ max(values − θ, 0) = total`` (Duchi et al.'s simplex projection)."""
    descending = np.sort(values)[::-1]
    sums = np.cumsum(descending) - total
    count = np.flatnonzero(descending - sums / np.arange(1, len(values) + 1) > 0)[-1] + 1
    return sums[count - 1] / count
