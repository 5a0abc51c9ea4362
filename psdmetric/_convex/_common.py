"""What the convex learners share: the metric's factor and a positive-definite prior."""

import warnings

import numpy as np
from scipy import linalg
from sklearn.utils import check_array

from .._core import oriented_columns

# Ridge added to a singular covariance, relative to its mean eigenvalue.
COVARIANCE_RIDGE = 1e-3


def components_from_metric(M):
    """``L`` with ``LᵀL = M`` for a PSD ``M``: rows ``√λ vᵀ`` of its positive eigenpairs.

    Eigenvalues below ``d·eps`` times the largest are dropped (``M`` of rank r gives r
    rows; the zero matrix one zero row, so ``transform`` keeps a column).
    """
    values, vectors = linalg.eigh((M + M.T) / 2.0)
    keep = values > M.shape[0] * np.finfo(float).eps * max(values.max(), 0.0)
    if not keep.any():
        return np.zeros((1, M.shape[0]))
    vectors = oriented_columns(vectors[:, keep][:, ::-1])
    return np.ascontiguousarray(np.sqrt(values[keep][::-1])[:, None] * vectors.T)


def prior_and_inverse(X, prior, name):
    """The prior metric ``M₀`` and its inverse, both positive definite.

    ``"identity"``: ``I``. ``"covariance"``: the inverse covariance of ``X``; a
    singular covariance (collinear features, fewer samples than features) gets a ridge
    of ``COVARIANCE_RIDGE`` times its mean eigenvalue, with a warning. An array: a
    symmetric positive-definite matrix, else ``ValueError``.
    """
    n_features = X.shape[1]
    if isinstance(prior, str) and prior == "identity":
        return np.eye(n_features), np.eye(n_features)
    if isinstance(prior, str) and prior == "covariance":
        covariance = np.atleast_2d(np.cov(X, rowvar=False))
        values = linalg.eigvalsh(covariance)
        ridge = COVARIANCE_RIDGE * max(values.mean(), np.finfo(float).tiny)
        if values.min() <= n_features * np.finfo(float).eps * max(values.max(), 0.0):
            warnings.warn(
                f"{name}: the covariance of X is singular (rank below {n_features}, e.g. "
                "collinear features or fewer samples than features); the prior is the "
                f"inverse of the covariance plus {COVARIANCE_RIDGE:g} times its mean "
                "eigenvalue on the diagonal.",
                UserWarning,
            )
            covariance = covariance + ridge * np.eye(n_features)
        return linalg.pinvh(covariance), covariance
    try:
        matrix = check_array(prior, input_name="prior")
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"prior must be 'identity', 'covariance' or a matrix: {exc}") from exc
    if matrix.shape != (n_features, n_features):
        raise ValueError(f"prior must have shape ({n_features}, {n_features}) to match X; "
                         f"got {matrix.shape}.")
    scale = max(np.abs(matrix).max(), np.finfo(float).tiny)
    if not np.allclose(matrix, matrix.T, rtol=0, atol=1e-10 * scale):
        raise ValueError("prior must be a symmetric matrix.")
    matrix = (matrix + matrix.T) / 2.0
    smallest = linalg.eigvalsh(matrix).min()
    if smallest <= n_features * np.finfo(float).eps * scale:
        raise ValueError(f"{name} needs a positive-definite prior (its log-determinant "
                         f"term is infinite otherwise); the prior's smallest eigenvalue "
                         f"is {smallest:.3g}.")
    return matrix, linalg.pinvh(matrix)
