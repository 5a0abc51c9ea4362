"""The subspaces the learners work in: leading principal axes of the data (the
high-dimensional defaults) and coordinates on the span of its centred rows."""

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

# n_components="auto" learns in at most this many principal axes of X. At MNIST's 784
# pixels VonNeumann's full rank cost 15x the CPU for more 5-NN errors (161 against 137
# of 2,000 over the suite's folds); leave-one-data-set-out among 50, 100, 200 and the full
# rank (on the suite sets they change: digits, cells, MNIST, tissue) chose 100 on three of
# four, and 50 without MNIST (161 errors on it, as at full rank).
AUTO_COMPONENTS = 100


def principal_axes(X, n_components):
    """The ``n_components`` leading principal axes of ``X``, orthonormal columns (d × k).

    From the d × d scatter of the centred rows (cheaper than an SVD of X when n > d, and
    a partial eigensolve). Axes of equal variance, such as the zero-variance ones that
    complete the basis when X has fewer rows than ``n_components``, come in an arbitrary
    orthonormal order.
    """
    n_features = X.shape[1]
    _, vectors = linalg.eigh(_scatter(X), check_finite=False,
                             subset_by_index=(n_features - n_components, n_features - 1))
    return np.ascontiguousarray(vectors[:, ::-1])


def _scatter(X):
    """The d × d scatter of the centred rows of X."""
    centred = X - X.mean(axis=0)
    return centred.T @ centred


# Largest ‖W‖_F (left-out features in the kept ones) for which the features serve.
_FEATURE_BASIS_BOUND = 10.0


class SpanCoordinates:
    """Coordinates on the r-dimensional span of X's centred rows, and back to its d features.

    ``project(X)`` is ``X @ C``, ``reduce(S)`` is ``Cᵀ S C`` and ``lift(L)`` is ``L @ Cᵀ``
    for a basis ``C`` (d × r) of the span: with ``axes`` an orthonormal one, else r of
    X's own features (``kept``) with each left-out feature written in them on the
    centred rows (its column of ``coefficients``, (r × (d − r))), so that the maps cost
    (d − r) r flops per row instead of d r. A learner whose result does not depend on the
    basis of the span (LFDA's generalised eigenvectors) may take the features; one that
    does (RCA's reduced rank) takes the axes.
    """

    def __init__(self, n_features, kept, left_out, coefficients, axes=None):
        self.n_features, self.kept, self.left_out = n_features, kept, left_out
        self.coefficients, self.axes = coefficients, axes
        self.dimension = len(kept)

    def project(self, X):
        """The rows of ``X`` (n × d) in the coordinates (n × r)."""
        if self.axes is not None:
            return X @ self.axes
        projected = X[:, self.kept]
        projected += X[:, self.left_out] @ self.coefficients.T
        return projected

    def reduce(self, scatter):
        """A quadratic form on the features (d × d) on the coordinates (r × r): ``Cᵀ S C``."""
        if self.axes is not None:
            return self.axes.T @ scatter @ self.axes
        # With W the coefficients: S_kk + H Wᵀ + W Hᵀ, H = S_kl + ½ W S_ll (r × (d − r)),
        # the two terms as one product [H W] [W H]ᵀ added in place to the gathered S_kk
        # (its transpose, as S is symmetric, is the Fortran-ordered array BLAS updates):
        # one large array, as each is fresh memory to fault in.
        kept, left_out, coefficients = self.kept, self.left_out, self.coefficients
        half = scatter[np.ix_(kept, left_out)]
        half += 0.5 * coefficients @ scatter[np.ix_(left_out, left_out)]
        reduced = scatter[np.ix_(kept, kept)]
        return blas.dgemm(1.0, np.hstack([half, coefficients]),
                          np.hstack([coefficients, half]), beta=1.0, c=reduced.T,
                          trans_b=1, overwrite_c=1).T

    def lift(self, L, columns=None, n_columns=None):
        """The rows of a map on the coordinates (k × r) as a map on the features (k × d).

        With ``columns``, the features are those columns (d indices) of a map of
        ``n_columns``, zero on the others: one array, without a k × d one to spread.
        """
        if self.axes is not None:
            lifted = L @ self.axes.T
            return lifted if columns is None else spread_columns(lifted, columns, n_columns)
        if columns is None:
            columns, n_columns = np.arange(self.n_features), self.n_features
        lifted = np.zeros((len(L), n_columns))
        lifted[:, columns[self.kept]] = L
        lifted[:, columns[self.left_out]] = L @ self.coefficients
        return lifted


def spread_columns(L, columns, n_columns):
    """``L`` (k × len(columns)) as those columns of a k × n_columns map, zero elsewhere."""
    spread = np.zeros((len(L), n_columns))
    spread[:, columns] = L
    return spread


def span_coordinates(X, rtol=1e-10, orthonormal=True):
    """``SpanCoordinates`` of the span of X's centred rows; None if they span all d.

    Along a direction without variance every row of X is the same, so a learner that
    inverts a scatter of X has nothing to learn there: it learns in these coordinates
    and gives the other directions no weight. ``span_of_scatter`` of X's scatter.
    """
    return span_of_scatter(_scatter(X), rtol, orthonormal)


def span_of_scatter(scatter, rtol=1e-10, orthonormal=True):
    """``SpanCoordinates`` of the range of a PSD scatter (d × d); None if it is all d.

    A pivoted Cholesky factor of the scatter finds it: a feature whose variance left
    over given the features picked before it is below ``rtol`` times the largest feature
    variance adds no direction. None also when no direction has variance (all rows
    equal), which the learners refuse on their own. ``orthonormal``: on orthonormal axes
    of the span (a QR factor), else on the features the factor picked when they are a
    well-conditioned basis (MNIST fold, 634 pixels spanning 612 dimensions: 0.025 s for
    the axes against 0.05 s by an eigendecomposition, and no QR or products with the 612
    kept pixels for the features; their basis has condition number 2.2). Overwrites
    ``scatter``, which the learners build for it alone: a copy would be fresh memory.
    """
    n_features = len(scatter)
    largest = scatter.diagonal().max()
    if not largest > 0:
        return None
    # The symmetric scatter's transpose is the Fortran-ordered array LAPACK factors in place.
    factor, pivots, rank, _ = lapack.dpstrf(scatter.T, tol=rtol * largest, lower=1,
                                            overwrite_a=1)
    if rank == n_features:
        return None
    kept, left_out = pivots[:rank] - 1, pivots[rank:] - 1
    # The factor's rows: L₁₁ (kept) and L₂₁ (left out); span = P [I; L₂₁ L₁₁⁻¹]. L₁₁ᵀ W =
    # L₂₁ᵀ is the whole factor's system [L₁₁ᵀ L₂₁ᵀ; 0 I] [W; 0] = [L₂₁ᵀ; 0] once its
    # trailing block is I: LAPACK reads the factor in place, where L₁₁ alone is a copy.
    right = np.zeros((n_features, n_features - rank), order="F")
    right[:rank] = factor[rank:, :rank].T
    factor[rank:, rank:] = np.eye(n_features - rank)
    solution, _ = lapack.dtrtrs(factor, right, lower=1, trans=1, overwrite_b=1)
    coefficients = solution[:rank]
    # The features' basis [I; W] has condition number at most √(1 + ‖W‖²): past this
    # bound its distortion of the learner's problem is not worth the saving.
    if not orthonormal and np.linalg.norm(coefficients) <= _FEATURE_BASIS_BOUND:
        return SpanCoordinates(n_features, kept, left_out, coefficients)
    basis = np.zeros((n_features, rank))
    basis[kept, np.arange(rank)] = 1.0
    basis[left_out] = coefficients.T
    axes = np.ascontiguousarray(linalg.qr(basis, mode="economic")[0])
    return SpanCoordinates(n_features, kept, left_out, coefficients, axes)


def learned_dimension(n_components, n_features, auto=AUTO_COMPONENTS):
    """How many leading axes an ``n_components`` parameter asks for, or None for all.

    ``"auto"`` asks for ``auto`` axes (``AUTO_COMPONENTS`` by default), ``None`` (or
    ``n_features``) for every feature; an integer above ``n_features`` is a ValueError
    naming it.
    """
    if n_components not in ("auto", None) and n_components > n_features:
        raise ValueError(f"n_components={n_components} cannot exceed the number of "
                         f"features ({n_features}).")
    wanted = auto if n_components == "auto" else n_components
    return None if wanted is None or wanted >= n_features else wanted


def leading_axes(X, dimension):
    """``principal_axes(X, dimension)``, or None when ``dimension`` is None (all features)."""
    return None if dimension is None else principal_axes(X, dimension)


def on_leading_axes(X, n_components, every_feature=False, auto=AUTO_COMPONENTS):
    """``X`` on the leading principal axes ``n_components`` asks for (``"auto"``: ``auto``
    of them), and the axes; ``X`` and None for all features, or with ``every_feature``
    (an array prior, basis or init of the learner fixes them)."""
    axes = None if every_feature else leading_axes(
        X, learned_dimension(n_components, X.shape[1], auto))
    return (X, None) if axes is None else (X @ axes, axes)
