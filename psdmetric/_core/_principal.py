"""Leading principal axes of the data: the subspace the high-dimensional defaults learn in."""

import numpy as np
from scipy import linalg


def principal_axes(X, n_components):
    """The ``n_components`` leading principal axes of ``X``, orthonormal columns (d × k).

    From the d × d scatter of the centred rows (cheaper than an SVD of X when n > d, and
    a partial eigensolve). Axes of equal variance, such as the zero-variance ones that
    complete the basis when X has fewer rows than ``n_components``, come in an arbitrary
    orthonormal order.
    """
    n_features = X.shape[1]
    centred = X - X.mean(axis=0)
    _, vectors = linalg.eigh(centred.T @ centred, check_finite=False,
                             subset_by_index=(n_features - n_components, n_features - 1))
    return np.ascontiguousarray(vectors[:, ::-1])


def learned_dimension(n_components, n_features, auto):
    """How many leading axes an ``n_components`` parameter asks for, or None for all.

    ``"auto"`` asks for ``auto`` axes, ``None`` (or ``n_features``) for every feature;
    an integer above ``n_features`` is a ValueError naming it.
    """
    if n_components not in ("auto", None) and n_components > n_features:
        raise ValueError(f"n_components={n_components} cannot exceed the number of "
                         f"features ({n_features}).")
    wanted = auto if n_components == "auto" else n_components
    return None if wanted is None or wanted >= n_features else wanted


def leading_axes(X, dimension):
    """``principal_axes(X, dimension)``, or None when ``dimension`` is None (all features)."""
    return None if dimension is None else principal_axes(X, dimension)
