"""Bregman matrix divergences of Kulis et al., 2009 (§3, §4), full rank and low rank.

Used to state what the learners optimise and to check them: the LogDet learner
minimises :func:`logdet_divergence` to its prior, the von Neumann learner
:func:`von_neumann_divergence`.
"""

import numpy as np
from scipy import linalg

__all__ = ["logdet_divergence", "von_neumann_divergence"]


def _range_basis(Y, tol):
    eigenvalues, eigenvectors = linalg.eigh(Y)
    keep = eigenvalues > tol * max(eigenvalues.max(), 0.0)
    return eigenvectors[:, keep]


def logdet_divergence(X, Y, *, tol=1e-12):
    """LogDet divergence ``tr(X Y⁻¹) − log det(X Y⁻¹) − r`` restricted to range(Y).

    For rank-deficient ``Y`` (Kulis et al., 2009, Def. 4) both matrices are restricted to an
    orthonormal basis W of range(Y); the divergence is finite only when
    range(X) = range(Y).

    Parameters
    ----------
    X, Y : ndarray of shape (n, n)
        Symmetric positive semi-definite matrices.
    tol : float, default=1e-12
        Relative eigenvalue threshold that defines the range of ``Y``.

    Returns
    -------
    divergence : float
        ``np.inf`` when the ranges differ.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import logdet_divergence
    >>> round(logdet_divergence(2 * np.eye(3), np.eye(3)), 6)
    0.920558
    """
    W = _range_basis(np.asarray(Y, dtype=float), tol)
    X_r, Y_r = W.T @ X @ W, W.T @ Y @ W
    if np.linalg.matrix_rank(X, tol * max(np.abs(X).max(), 1e-300)) != W.shape[1]:
        return np.inf
    ratio = linalg.solve(Y_r, X_r, assume_a="pos")
    sign, logdet = np.linalg.slogdet(ratio)
    if sign <= 0:
        return np.inf
    return float(np.trace(ratio) - logdet - W.shape[1])


def von_neumann_divergence(X, Y, *, tol=1e-12):
    """Von Neumann divergence ``tr(X log X − X log Y − X + Y)`` restricted to range(Y).

    Finite only when range(X) ⊆ range(Y) (Kulis et al., 2009, Def. 4).

    Parameters
    ----------
    X, Y : ndarray of shape (n, n)
        Symmetric positive semi-definite matrices.
    tol : float, default=1e-12
        Relative eigenvalue threshold that defines the ranges.

    Returns
    -------
    divergence : float

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import von_neumann_divergence
    >>> round(von_neumann_divergence(np.diag([0.5, 0.5]), np.diag([0.9, 0.1])), 6)
    0.510826
    """
    W = _range_basis(np.asarray(Y, dtype=float), tol)
    X = np.asarray(X, dtype=float)
    leaked = X - W @ (W.T @ X @ W) @ W.T
    if np.abs(leaked).max() > tol * max(np.abs(X).max(), 1e-300) * 1e4:
        return np.inf
    x_values, x_vectors = linalg.eigh(W.T @ X @ W)
    y_values, y_vectors = linalg.eigh(W.T @ Y @ W)
    positive = x_values > 0
    x_log_x = np.sum(x_values[positive] * np.log(x_values[positive]))
    overlap = (x_vectors.T @ y_vectors) ** 2
    x_log_y = x_values @ overlap @ np.log(y_values)
    return float(x_log_x - x_log_y - x_values.sum() + y_values.sum())
