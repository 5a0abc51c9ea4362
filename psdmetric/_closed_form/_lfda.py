"""LFDA: local Fisher discriminant analysis (Sugiyama, 2007).

The local scatters are sums over pairs of samples of one class weighted by an
affinity, so they are built class by class and, within a class, in blocks of rows:
memory is at most ``_BLOCK_ENTRIES`` affinities at a time (never Σ n_c², never n²).
"""

from numbers import Integral

import numpy as np
from scipy import linalg
from scipy.linalg import lapack
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (AUTO_COMPONENTS, MahalanobisMixin, column_signs, on_leading_axes,
                     one_blas_thread, oriented_columns, span_of_scatter, spread_columns)
from ._rca import _RANK_TOL, _check_span

# Affinities held at once (32 MiB of float64): a class's n_c × n_c block in row slices.
_BLOCK_ENTRIES = 1 << 22
# n_components="auto" above AUTO_COMPONENTS features: LFDA on this many leading principal
# axes of X (bench_wide.py's LFDA case, leave-one-data-set-out among 25, 50, 100 and every
# feature over the five sets above 100 features).
AUTO_AXES = 50
# Block rows of the scatter products: fewer wastes flops above the diagonal, more
# makes each product too narrow for BLAS to run at speed.
_PRODUCT_PARTS = 4


class LFDA(MahalanobisMixin):
    """Local Fisher discriminant analysis (LFDA).

    Fisher discriminant analysis that keeps the local structure of multimodal classes
    (Sugiyama, 2007, §3). Pairs of samples of one class are weighted by the local-
    scaling affinity ``A_ij = exp(−‖x_i − x_j‖² / (σ_i σ_j))``, with ``σ_i`` the
    distance from ``x_i`` to its ``k``-th nearest neighbour in its class; the local
    within- and between-class scatters::

        S_w = ½ Σ_ij W_w,ij (x_i − x_j)(x_i − x_j)ᵀ,   W_w,ij = A_ij / n_c (same class), 0
        S_b = ½ Σ_ij W_b,ij (x_i − x_j)(x_i − x_j)ᵀ,   W_b,ij = A_ij (1/n − 1/n_c) (same
              class), 1/n (different classes)

    give the map's rows as the leading generalised eigenvectors of ``S_b v = λ S_w v``
    (``scipy.linalg.eigh``). No iterations.

    Read more in the :ref:`User Guide <lfda>`.

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rows of ``L``; ``None``: ``n_features``. ``"auto"``: ``None`` up to 100
        features; above, LFDA with every component on the 50 leading principal axes of
        ``X``, nothing learned across them (chosen by leave-one-data-set-out over the
        sets with more than 100 features, bench_wide.py: every feature fails on three of
        five, where the local within-class scatter is singular, and loses to Euclidean
        on MNIST). metric-learn's default is every feature. When the rows of ``X`` span only
        ``r < n_features`` dimensions (constant or linearly dependent features), LFDA
        learns in that span (at most ``r`` rows, ``r`` for ``None``) and gives the
        directions in which every sample is the same no weight.

    k : int, default=20
        The neighbour whose distance sets each sample's local scale ``σ_i``; a class of
        ``n_c ≤ k`` samples uses its ``n_c − 1``-th. Chosen by leave-one-data-set-out
        on the suite among 1–30 (docs/benchmarks/closed_form.md: every held-out set
        but three chose 20); the paper uses 7, metric-learn ``min(7, n_features − 1)``.

    embedding_type : {"weighted", "orthonormalized", "plain"}, default="weighted"
        Scaling of the rows: ``"weighted"``: each eigenvector (``vᵀ S_w v = 1``)
        times ``√λ``; ``"orthonormalized"``: the orthonormal basis of their span;
        ``"plain"``: the eigenvectors as they are.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``; the metric is ``M = LᵀL``.

    eigenvalues_ : ndarray of shape (n_components,)
        The generalised eigenvalues ``λ`` of the kept directions, in decreasing order.

    n_iter_ : int
        Always 1 (closed form).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    RCA : Relevant component analysis, also closed form.

    References
    ----------
    M. Sugiyama, "Dimensionality reduction of multimodal labeled data by local Fisher
    discriminant analysis", JMLR 8 (2007), 1027–1061.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from psdmetric import LFDA
    >>> X, y = load_iris(return_X_y=True)
    >>> lfda = LFDA(n_components=2).fit(X, y)
    >>> lfda.transform(X).shape
    (150, 2)
    >>> [round(float(value), 2) for value in lfda.eigenvalues_]
    [197.74, 6.28]
    """

    # Class labels only: its scatters sum over every pair of samples of each class.
    _constraint_kind = "classes"

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "embedding_type": [StrOptions({"weighted", "orthonormalized", "plain"})],
    }

    def __init__(self, n_components="auto", *, k=20, embedding_type="weighted"):
        self.n_components = n_components
        self.k = k
        self.embedding_type = embedding_type

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the metric from class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, codes = self._validate_fit(X, y, None, None)
        n_components = None if self.n_components == "auto" else self.n_components
        if (n_components or 0) > X.shape[1]:
            raise ValueError(f"n_components={n_components} must be at most "
                             f"n_features={X.shape[1]}.")
        # Its products are small or few: a second BLAS thread would only spin (CPU time).
        with one_blas_thread():
            reduced = None
            if self.n_components == "auto" and X.shape[1] > AUTO_COMPONENTS:
                X, reduced = on_leading_axes(X, "auto", auto=AUTO_AXES)
            # A constant feature adds nothing to the span: seek it among the others only
            # (MNIST fold: 634 of 784 pixels vary, 0.05 s less CPU).
            varying = np.flatnonzero(X.max(axis=0) > X.min(axis=0))
            between, within = local_scatters(
                X, codes, self.k, features=None if len(varying) == X.shape[1] else varying)
            # The scatters' span is that of X's centred rows: with two classes or more,
            # any two samples are joined through a sample of another class by pairs of
            # positive weight in S_b + S_w. LFDA's eigenvectors do not depend on the
            # basis of the span: the features it keeps are one, cheaper than axes (only
            # "orthonormalized" needs axes).
            span = span_of_scatter(between + within,
                                   orthonormal=self.embedding_type == "orthonormalized")
            _check_span(n_components, len(varying) if span is None else span.dimension,
                        X.shape[1], "LFDA")
            if span is not None:
                between, within = span.reduce(between), span.reduce(within)
            components, values = lfda_components(
                between, within, n_components or len(within), self.embedding_type)
            if span is not None:
                components = span.lift(components, varying, X.shape[1])
            elif len(varying) < X.shape[1]:
                components = spread_columns(components, varying, X.shape[1])
            if reduced is not None:
                components = components @ reduced.T
        self.components_ = np.ascontiguousarray(components)
        self.eigenvalues_, self.n_iter_ = values, 1
        return self

    def _constraints_from_labels(self, X, y, random_state):
        return np.unique(y, return_inverse=True)[1].ravel()


def lfda_components(between, within, rows, embedding_type):
    """The map's rows from the ``rows`` leading generalised eigenpairs of the scatters.

    May overwrite ``between`` (a copy would be fresh memory to fault in).

    Returns
    -------
    components : ndarray of shape (rows, n_features), maybe not C-contiguous
    values : ndarray of shape (rows,), decreasing
    """
    n_features = len(within)
    factor = _factor_if_clearly_full_rank(within)
    rank = n_features if factor is not None else _rank_in_mixture(within, between)
    if rank < n_features:
        raise _singular_within(rank, n_features)
    try:
        # Bisection for a few pairs, divide and conquer for more (MNIST fold, 612
        # dimensions: 0.03 / 0.05 / 0.10 / 0.24 s CPU for 2 / 50 / 200 / all pairs by
        # bisection, 0.07 s for all by divide and conquer).
        if 5 * rows <= n_features:
            values, vectors = linalg.eigh(between, within,
                                          subset_by_index=(n_features - rows, n_features - 1))
            values, vectors = values[::-1], vectors[:, ::-1]
        else:
            if factor is None:
                factor = linalg.cholesky(within, lower=True)
            values, vectors = _generalised_eigenpairs(between, factor)
            values, vectors = values[:rows], vectors[:, :rows]
    except linalg.LinAlgError:  # full rank in the mixture, past double precision in S_w
        raise _singular_within(_numerical_rank(within), n_features) from None
    # S_b is PSD, so a negative eigenvalue is rounding.
    values = np.maximum(values, 0.0)
    if embedding_type == "orthonormalized":
        return oriented_columns(linalg.qr(vectors, mode="economic")[0]).T, values
    # Signs and weights in one pass over the eigenvectors, in place (fresh memory).
    scales = column_signs(vectors)
    if embedding_type == "weighted":
        scales *= np.sqrt(values)
    vectors *= scales
    return vectors.T, values


def _factor_if_clearly_full_rank(scatter):
    """The scatter's lower Cholesky factor if it and its O(d²) condition estimate clear
    the scatter of rank deficiency, else None.

    A symmetric matrix's reciprocal 1-norm condition number is at most the ratio of its
    extreme eigenvalues, and LAPACK's estimate of it is rarely 3 times too high, so an
    estimate above 100 ``_RANK_TOL`` leaves no eigenvalue below ``_RANK_TOL`` of the
    largest (MNIST fold, 612 dimensions: 0.005 s against 0.02 s for the spectrum).
    """
    factor, info = lapack.dpotrf(scatter, lower=1, clean=1)
    if info != 0:
        return None
    # Its 1-norm without an |S| temporary; the transpose of the symmetric S is the
    # Fortran-ordered array LAPACK reads without a copy.
    norm = lapack.dlange("1", scatter.T)
    return factor if lapack.dpocon(factor, norm, uplo="L")[0] > 100 * _RANK_TOL else None


def _generalised_eigenpairs(between, factor):
    """``scipy.linalg.eigh(between, within, driver="gvd")`` from ``within``'s lower
    Cholesky factor, which the rank check has already computed: LAPACK's sygvd without
    its own factorisation. The pairs in decreasing order; overwrites ``between``."""
    # In place: the symmetric S_b's transpose is the Fortran-ordered array LAPACK reads.
    # Of −S_b, so that LAPACK's increasing order is λ's decreasing one: eigenvectors in
    # the columns' order need no reversed copy before products.
    np.negative(between, out=between)
    reduced, info = lapack.dsygst(between.T, factor, itype=1, lower=1, overwrite_a=1)
    if info == 0:
        values, vectors, info = lapack.dsyevd(reduced, compute_v=1, lower=1,
                                              overwrite_a=1)
    if info != 0:
        raise linalg.LinAlgError(f"LFDA: the generalised eigensolver failed (info {info}).")
    return -values, linalg.solve_triangular(factor, vectors, lower=True, trans="T",
                                            overwrite_b=True, check_finite=False)


def _singular_within(rank, n_features):
    return ValueError(
        f"LFDA: the local within-class scatter has rank {rank}, below the {n_features} "
        "dimensions the rows of X span, so the generalised eigenproblem is singular. "
        "Reduce the features (e.g. with sklearn.decomposition.PCA first) or give more "
        "samples per class."
    )


def _rank_in_mixture(within, between):
    """Directions S_w does not flatten relative to the local mixture scatter S_b + S_w:
    its generalised eigenvalues (in [0, 1]) above ``_RANK_TOL``.

    LFDA is affine-invariant, so a direction small in both scatters is not a flat one;
    against S_w's largest eigenvalue it would be. ``_numerical_rank`` if the mixture
    (positive definite on the span) fails its Cholesky factorisation.
    """
    try:
        return int(np.sum(linalg.eigvalsh(within, between + within) > _RANK_TOL))
    except linalg.LinAlgError:
        return _numerical_rank(within)


def _numerical_rank(scatter):
    """How many eigenvalues of the scatter are above ``_RANK_TOL`` of the largest."""
    spectrum = linalg.eigvalsh(scatter)
    return int(np.sum(spectrum > _RANK_TOL * max(spectrum.max(), np.finfo(float).tiny)))


def local_scatters(X, codes, k, features=None):
    """The local between- and within-class scatters ``(S_b, S_w)`` of Sugiyama (2007),
    of ``X[:, features]`` when given.

    With ``R_c = (D_c − A_c) X_c`` the affinity Laplacian of class ``c`` times its rows,
    ``s`` the sums of rows: ``S_w = Σ_c X_cᵀ R_c / n_c`` and
    ``S_b = Σ_c X_cᵀ (R_c − n_c X_c + 1 s_cᵀ) / n + (XᵀX − s sᵀ/n) − S_w``: both are
    ``Xᵀ`` times rows of weights built class by class, one product for each.
    """
    # Rows grouped by class, each class a slice of X and of the weights, and the features
    # taken in the same gather (one fresh n × d array).
    order = np.argsort(codes, kind="stable")
    X = X[order] if features is None else X[np.ix_(order, features)]
    n_samples, n_features = X.shape
    bounds = np.r_[0, np.cumsum(np.bincount(codes))]
    classes = [(X[start:stop], slice(start, stop))
               for start, stop in zip(bounds[:-1], bounds[1:])]
    # One array of weights, the within rows R_c/n_c and then, in place, the between rows
    # (each temporary is fresh memory).
    weights = np.empty_like(X)
    for members, rows in classes:
        _class_laplacian_rows(members, k, out=weights[rows])
        weights[rows] /= len(members)
    within = _symmetric_product(X, weights)
    total = X.sum(axis=0)
    for members, rows in classes:
        # (R_c − n_c X_c + 1 s_cᵀ)/n + X_c − R_c/n_c − 1 sᵀ/n (its product is the − s sᵀ/n).
        between_rows = weights[rows]
        np.subtract(members, between_rows, out=between_rows)
        between_rows *= 1.0 - len(members) / n_samples
        between_rows += (members.sum(axis=0) - total) / n_samples
    return _symmetric_product(X, weights), within


def _symmetric_product(X, weights):
    """``Xᵀ weights``, a product known to be symmetric, from its lower block triangle:
    10 of 16 blocks (MNIST fold, 612 dimensions: 0.036 s for both scatters against
    0.046 s for the whole products)."""
    n_features = X.shape[1]
    product = np.empty((n_features, n_features))
    edges = np.linspace(0, n_features, _PRODUCT_PARTS + 1).astype(int)
    for start, stop in zip(edges[:-1], edges[1:]):
        np.matmul(X[:, start:stop].T, weights[:, :stop], out=product[start:stop, :stop])
    for start, stop in zip(edges[:-1], edges[1:]):
        product[:start, start:stop] = product[start:stop, :start].T
    return product


def _class_laplacian_rows(members, k, out):
    """``(D − A) X_c`` for the class's local-scaling affinity, in row blocks, into ``out``."""
    n_members = len(members)
    if n_members < 2:
        out[...] = 0.0
        return
    step = max(1, _BLOCK_ENTRIES // n_members)
    norms = np.einsum("ij,ij->i", members, members)
    neighbour = min(k, n_members - 1)
    # A class within one block keeps its distances for the affinity; larger ones recompute.
    kept = _squared_distances(members, norms, 0, step) if step >= n_members else None

    def distances(start):
        return kept if kept is not None else _squared_distances(members, norms, start, step)

    scales = np.concatenate([
        np.sqrt(np.partition(distances(start), neighbour, axis=1)[:, neighbour])
        for start in range(0, n_members, step)])
    for start in range(0, n_members, step):
        block = slice(start, start + step)
        # The affinities in the array of the scales' products, in place: each temporary
        # of a large class is fresh memory to fault in.
        laplacian = np.outer(scales[block], scales)
        # A sample at distance 0 from its k-th neighbour has no scale: no affinity.
        unscaled = laplacian == 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(distances(start), laplacian, out=laplacian)
        np.negative(laplacian, out=laplacian)
        np.exp(laplacian, out=laplacian)
        laplacian[unscaled] = 0.0
        # D − A in place (−A, each row's degree added on its diagonal), so that one
        # product gives the rows without n_c × d temporaries.
        degrees = laplacian.sum(axis=1)
        np.negative(laplacian, out=laplacian)
        diagonal = np.arange(len(degrees))
        laplacian[diagonal, start + diagonal] += degrees
        np.matmul(laplacian, members, out=out[block])


def _squared_distances(members, norms, start, step):
    """Squared distances of rows ``start:start+step`` to every row, 0 on the diagonal."""
    block = members[start:start + step] @ members.T
    block *= -2.0
    block += norms[start:start + step, None]
    block += norms
    np.maximum(block, 0.0, out=block)
    diagonal = np.arange(len(block))
    block[diagonal, start + diagonal] = 0.0
    return block
