"""RCA: relevant component analysis (Bar-Hillel, Hertz, Shental & Weinshall, 2005).

Closed form: the metric is the inverse of the within-chunklet covariance, the
transform its inverse square root; with fewer components, the directions of least
within-chunklet relative to total variance first (the paper's §2.2 reduction). Above
100 features the default learns on the leading principal axes of X, no more than the
chunklets can estimate.
"""

from numbers import Integral

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _num_samples

from .._core import (AUTO_COMPONENTS, MahalanobisMixin, PairConstraints, on_leading_axes,
                     one_blas_thread, oriented_columns, span_coordinates, span_of_scatter)
from .._core._chunklets import Chunklets

# Within-chunklet to total variance (RCA), or eigenvalues relative to the largest (LFDA),
# below this are rank deficiency, not signal.
_RANK_TOL = 1e-10
# n_components="auto" above AUTO_COMPONENTS features: at most this many leading principal
# axes of X. Leave-one-data-set-out over the five sets above 100 features among 10, 25,
# 50, 100 and p − c alone (bench_wide.py) chose 25 on three held-out sets of five (10 with
# MNIST or ad_data held out); every feature fits none of them but ad_data.
AUTO_AXES = 25


class RCA(MahalanobisMixin):
    """Relevant component analysis (RCA): whitening by the within-chunklet covariance.

    A chunklet is a group of samples known to share a class. RCA estimates the
    variation that does not tell classes apart as the covariance of the samples about
    their chunklet means, ``C = (1/p) Σ_chunklets Σ_i (x_i − m_c)(x_i − m_c)ᵀ`` over
    the ``p`` samples in chunklets, and learns ``M = C⁻¹``: the transform
    ``L = C^(-1/2)`` whitens it (Bar-Hillel, Hertz, Shental & Weinshall, 2005, §2).
    ``M`` is also the maximum-likelihood metric of Gaussian classes of shared
    covariance given the chunklets. No iterations.

    Chunklets come from class labels (``n_chunks`` groups of ``chunk_size`` samples
    of one class, drawn at random as metric-learn's ``RCA_Supervised`` draws them),
    from explicit chunklet labels ``fit(X, chunks=...)`` (metric-learn's ``RCA``),
    or from similar pairs ``fit(X, constraints=PairConstraints(...))`` (the connected
    components of the similar pairs; dissimilar pairs are not used).

    Read more in the :ref:`User Guide <rca>`.

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rows of ``L``. ``None``: ``n_features`` and ``L = C^(-1/2)``. Fewer keep the
        directions of smallest within-chunklet variance relative to the total variance
        of the chunklets' samples (generalised eigenvectors of ``(C, S_t)``), whitened.
        ``"auto"``: ``None`` up to 100 features; above, RCA on the leading principal
        axes of ``X``, 25 of them and never more than the ``p − c`` the chunklets can
        estimate (``C`` of ``p`` samples in ``c`` chunklets has rank at most ``p − c``),
        which reduces the dimension before RCA as Bar-Hillel et al. (2005, §2.2)
        advise; nothing is learned across the axes (chosen by leave-one-data-set-out
        over the sets with more than 100 features; metric-learn's default is every
        feature, whose ``C`` is singular when ``p − c`` is below ``n_features``).
        When the rows of ``X`` span only ``r < n_features`` dimensions (constant or
        linearly dependent features), RCA learns in that span (at most ``r`` rows) and
        gives the directions in which every sample is the same no weight.

    n_chunks : int or None, default=None
        Chunklets drawn from class labels; ``None``: as many as the classes hold,
        every class cut into groups of ``chunk_size`` (metric-learn's default is 100).

    chunk_size : int, default=2
        Samples per chunklet drawn from class labels.

    random_state : int, RandomState instance or None, default=None
        Draws the chunklets from class labels.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``; the metric is ``M = LᵀL``.

    chunklets_ : ndarray of shape (n_samples,)
        The chunklet of each training sample (``-1``: none), numbered from 0.

    n_iter_ : int
        Always 1 (closed form).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    LFDA : Local Fisher discriminant analysis, also closed form.

    References
    ----------
    A. Bar-Hillel, T. Hertz, N. Shental and D. Weinshall, "Learning a Mahalanobis
    metric from equivalence constraints", JMLR 6 (2005), 937–965.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import RCA
    >>> X = np.array([[-0.05, 3.0], [0.05, -3.0], [0.1, -3.55], [-0.1, 3.55],
    ...               [-0.95, -0.05], [0.95, 0.05], [0.4, 0.05], [-0.4, -0.05]])
    >>> rca = RCA().fit(X, chunks=[0, 0, 1, 1, 2, 2, 3, 3])

    Within the chunklets the second feature varies most, so it weighs least:

    >>> np.round(rca.get_mahalanobis_matrix(), 3)
    array([[3.752, 0.076],
           [0.076, 0.187]])

    Above 100 features the default learns on the leading principal axes: 25 here,
    where 200 pairs of samples could estimate at most 200 directions of 300:

    >>> rng = np.random.RandomState(0)
    >>> X_wide = rng.randn(400, 300)
    >>> RCA().fit(X_wide, chunks=np.arange(400) // 2).components_.shape
    (25, 300)
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "n_chunks": [Interval(Integral, 1, None, closed="left"), None],
        "chunk_size": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components="auto", *, n_chunks=None, chunk_size=2,
                 random_state=None):
        self.n_components = n_components
        self.n_chunks = n_chunks
        self.chunk_size = chunk_size
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, chunks=None, constraints=None):
        """Learn the metric from chunklets, class labels or similar pairs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels, from which chunklets are drawn; ignored with ``chunks`` or
            ``constraints``.
        chunks : array-like of shape (n_samples,), default=None
            Chunklet label of each sample: samples with the same label ``>= 0`` share
            a class; ``-1``: in no chunklet.
        constraints : PairConstraints, default=None
            Pairs of rows of ``X``; the similar ones are joined into chunklets.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        if chunks is not None:
            if constraints is not None:
                raise ValueError("Pass chunks or constraints, not both.")
            chunklets = Chunklets(chunks)
            if len(chunklets.chunks) != _num_samples(X):
                raise ValueError(f"chunks has {len(chunklets.chunks)} labels but X has "
                                 f"{_num_samples(X)} rows; give one label per row.")
            constraints = PairConstraints(chunklets.pairs, np.ones(len(chunklets.pairs)))
            X, _ = self._validate_fit(X, None, constraints, rng)
        else:
            X, side = self._validate_fit(X, y, constraints, rng)
            chunklets = side if isinstance(side, Chunklets) else Chunklets.from_pairs(
                side.pairs, side.labels, len(X))
        # One BLAS thread: the second only spins on these small products (tissue fold:
        # 3.75 s CPU on two threads under load, 0.03 s on one).
        with one_blas_thread():
            components = _fit_components(X, chunklets.chunks, self.n_components)
        self.components_, self.chunklets_, self.n_iter_ = components, chunklets.chunks, 1
        return self

    def _constraints_from_labels(self, X, y, random_state):
        return Chunklets.from_labels(X, y, n_chunks=self.n_chunks, chunk_size=self.chunk_size,
                                     random_state=random_state)


def auto_dimension(n_features, chunks, cap=AUTO_AXES):
    """Leading principal axes ``n_components="auto"`` learns on, or None for every feature.

    Above ``AUTO_COMPONENTS`` features: ``cap``, and at most the rank the within-chunklet
    covariance can have (``p − c`` for ``p`` samples in ``c`` chunklets: each chunklet's
    deviations from its mean sum to zero); None if that is every feature.
    """
    if n_features <= AUTO_COMPONENTS:
        return None
    codes = chunks[chunks >= 0]
    dimension = min(cap, len(codes) - len(np.unique(codes)))
    return None if dimension >= n_features else dimension


def _fit_components(X, chunks, n_components):
    """``L`` for ``n_components``: on the leading axes for "auto", in the span of X."""
    reduced = None
    if n_components == "auto":
        dimension = auto_dimension(X.shape[1], chunks)
        n_components = None
        if dimension is not None:
            X, reduced = on_leading_axes(X, "auto", auto=dimension)
    span = span_coordinates(X)
    if span is None:
        components = rca_components(X, chunks, n_components)
    else:
        _check_span(n_components, span.dimension, X.shape[1], "RCA")
        components = span.lift(rca_components(span.project(X), chunks, n_components))
    return components if reduced is None else components @ reduced.T


def rca_components(X, chunks, n_components=None):
    """``L`` with ``LᵀL`` the inverse within-chunklet covariance (reduced if asked).

    ``chunks`` numbers the chunklets from 0; ``-1`` marks samples in none.
    """
    inside = chunks >= 0
    members, codes = X[inside], chunks[inside]
    means = np.zeros((codes.max() + 1, X.shape[1]))
    np.add.at(means, codes, members)
    means /= np.bincount(codes)[:, None]
    centred = members - means[codes]
    within = centred.T @ centred / len(members)
    n_features = X.shape[1]
    rows = n_features if n_components is None else n_components
    if rows > n_features:
        raise ValueError(f"n_components={rows} must be at most n_features={n_features}.")
    spread = members - members.mean(axis=0)
    total = spread.T @ spread / len(members)
    # A direction is flat where the chunklets do not vary relative to their samples (the
    # generalised eigenvalues of (C, S_t) lie in [0, 1]): relative to the largest
    # eigenvalue of C, a direction of small scale would look flat too.
    members_span = span_of_scatter(total.copy())  # X's span criterion, on the samples
    if members_span is not None or not total.diagonal().max() > 0:
        # They span less than X: neither S_t nor C has an inverse on X's span.
        rank = 0 if members_span is None else members_span.dimension
        if rows == n_features and rank:  # C's own rank, counted where the samples vary
            rank = int(np.sum(linalg.eigvalsh(members_span.reduce(within),
                                              members_span.reduce(total)) > _RANK_TOL))
        _rank_error("within-chunklet covariance" if rows == n_features else
                    "total covariance of the chunklets' samples", rank, n_features,
                    len(members), codes.max() + 1)
    if rows == n_features:
        flat = int(np.sum(linalg.eigvalsh(within, total) <= _RANK_TOL))
        values, vectors = linalg.eigh(within)
        # (C's own eigenvalues lose a direction only past double precision's reach.)
        flat = max(flat, int(np.sum(values <= 0.0)))
        if flat:
            _rank_error("within-chunklet covariance", n_features - flat, n_features,
                        len(members), codes.max() + 1)
        return (vectors / np.sqrt(values)) @ vectors.T
    values, vectors = linalg.eigh(within, total, subset_by_index=(0, rows - 1))
    # A zero generalised eigenvalue is a direction that RCA would weigh infinitely, and the
    # first any n_components keeps.
    flat = int(np.sum(values <= _RANK_TOL))
    if flat:
        raise ValueError(
            f"RCA: the within-chunklet covariance (from {len(members)} samples in "
            f"{codes.max() + 1} chunklet(s)) is zero along {flat}"
            f"{' or more' if flat == rows else ''} direction(s) in which those samples "
            "vary, so its inverse does not exist there whatever n_components. Use more or "
            "larger chunklets, or fewer features (e.g. sklearn.decomposition.PCA first).")
    # Aᵀ S_t A = I, so Aᵀ C A = diag(values): whiten each kept direction.
    return np.ascontiguousarray((oriented_columns(vectors) / np.sqrt(values)).T)


def _check_span(n_components, span, n_features, learner):
    """Raise when ``n_components`` asks for more rows than the ``span`` dimensions that X's
    centred rows span."""
    if n_components is not None and n_components > span:
        raise ValueError(
            f"{learner}: n_components={n_components} exceeds the {span} "
            f"dimensions the rows of X span (of {n_features} features: some are constant "
            f"or linearly dependent); set n_components <= {span}.")


def _rank_error(what, rank, needed, n_members, n_groups):
    """Raise: ``what`` has rank ``rank``, below the ``needed`` dimensions RCA inverts."""
    raise ValueError(
        f"RCA: the {what} has rank {rank} (from {n_members} samples in {n_groups} "
        f"chunklet(s)), below the {needed} dimensions asked for, so its inverse does not "
        f"exist. Use more or larger chunklets, set n_components <= {rank}, or remove "
        "linearly dependent features (e.g. with sklearn.decomposition.PCA first)."
    )
