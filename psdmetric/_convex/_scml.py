"""SCML: sparse compositional metric learning (Shi, Bellet & Sha, 2014).

The metric is a sparse non-negative combination of rank-one bases, ``M = Σ_i w_i b_i
b_iᵀ``; the weights minimise the mean triplet hinge loss plus an L1 penalty::

    min_(w ≥ 0)  (1/T) Σ_t [1 + Σ_i w_i (⟨b_i, x − x⁺⟩² − ⟨b_i, x − x⁻⟩²)]₊ + β Σ_i w_i,

by the paper's stochastic composite scheme: regularised dual averaging with AdaGrad
step sizes on mini-batches (§3.2), as metric-learn runs it. A triplet's row of
``Δ_ti = ⟨b_i, x − x⁺⟩² − ⟨b_i, x − x⁻⟩²`` is formed, only when drawn, from the
projections ``X Bᵀ`` (n × K; no T × K matrix). A round is ``output_iter`` updates
(compiled, ``_scml_kernels.pyx``), after which the objective is evaluated (each distinct
pair's distance once, over the bases of nonzero weight) and the best weights kept.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    ArrayCheckpoint,
    MahalanobisMixin,
    Round,
    TripletConstraints,
    iterate,
    on_leading_axes,
    one_blas_thread,
    one_thread,
)
from ._common import components_from_metric
from ._scml_basis import default_lda_bases, knn_triplets, lda_basis, triplet_difference_basis
from ._scml_kernels import triplet_updates, weighted_distances

# AdaGrad's offset (metric-learn's delta).
_DELTA = 1e-3


class SCML(MahalanobisMixin):
    """Sparse compositional metric learning (SCML) from triplets or labels.

    Learns ``M = Σ_i w_i b_i b_iᵀ`` with sparse weights ``w ≥ 0`` on a set of rank-one
    bases ``b_i``, from triplets ``(x, x⁺, x⁻)`` asking ``x`` to be closer to ``x⁺``
    than to ``x⁻`` by a unit margin (Shi, Bellet & Sha, 2014)::

        min_(w ≥ 0)  (1/T) Σ_t [1 + d²_w(x, x⁺) − d²_w(x, x⁻)]₊ + beta Σ_i w_i.

    With labels, the bases are local discriminant directions and the triplets join
    each sample with its nearest same-class and other-class samples (metric-learn's
    SCML_Supervised); with triplets, the bases come from their differences.

    Read more in the :ref:`User Guide <convex>`.

    Parameters
    ----------
    beta : float, default=1e-5
        Weight of the L1 penalty (sparsity of ``w``).

    basis : {"auto", "lda", "triplet_diffs"} or array of shape (n_basis, n_features), \
            default="auto"
        ``"lda"``: discriminant directions of neighbourhoods of k-means centres
        (needs labels); ``"triplet_diffs"``: eigenvectors of the difference scatters
        of random groups of triplets; ``"auto"``: ``"lda"`` with labels,
        ``"triplet_diffs"`` with constraints; an array: the bases as rows.

    n_basis : int, default=None
        Number of bases; ``None``: ``min(20 d, 2 n (c − 1) − 1)`` for ``"lda"``,
        ``80 d`` for ``"triplet_diffs"``.

    gamma : float, default=1e-2
        Learning rate of the dual averaging (metric-learn's default is 5e-3).

    n_components : int, "auto" or None, default="auto"
        Learn on the ``n_components`` leading principal axes of ``X``; ``None``: on
        every feature; ``"auto"``: every feature up to 100, the 100 leading axes above
        (leave-one-data-set-out, ``docs/benchmarks/wide.md``); an array ``basis`` keeps
        every feature. ``components_`` has ``n_features`` columns either way.

    max_iter : int, default=40000
        Number of stochastic updates at most (metric-learn runs all of its 10000).

    output_iter : int, default=500
        Updates per round; the objective is evaluated (and the best ``w`` kept)
        after each round.

    batch_size : int, default=10
        Triplets per update.

    tol : float, default=1e-3
        A round improves when its objective is below the best so far by more than
        ``tol`` times the best.

    n_iter_no_change : int, default=5
        Stop after this many rounds in a row that do not improve (the updates are
        stochastic: a single round's change is noise).

    k_genuine : int, default=3
        Same-class neighbours per sample in the triplets from labels.

    k_impostor : int, default=10
        Other-class neighbours per sample in the triplets from labels.

    verbose : int, default=0
        Print a table row per round.

    random_state : int, RandomState instance or None, default=None
        Seed of the k-means, the basis groups and the mini-batches.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``L`` with ``LᵀL = M``.

    basis_ : ndarray of shape (n_basis, n_features)
        The rank-one bases, as rows.

    weights_ : ndarray of shape (n_basis,)
        The learned non-negative weights (mostly zero).

    objective_ : float
        The objective at ``weights_``.

    n_iter_ : int
        Rounds of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    TripletsClassifier : Triplets of points as samples.

    Notes
    -----
    ``gamma``, ``tol``, ``n_iter_no_change`` and ``batch_size`` were chosen by
    leave-one-data-set-out on the development suite (``docs/benchmarks/defaults.md``):
    mini-batches of 30 or 100 triplets scored worse there, and 100 fits a 2,000 × 100
    set with 30 classes in more than 2 s CPU. metric-learn's SCML runs all
    its 10000 updates with ``gamma=5e-3``; ``SCML(gamma=5e-3, max_iter=10000,
    n_iter_no_change=20)`` does the same, with a ``ConvergenceWarning``.

    References
    ----------
    Y. Shi, A. Bellet and F. Sha, "Sparse compositional metric learning", AAAI 2014.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import SCML
    >>> X, y = load_wine(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), SCML(random_state=0), KNeighborsClassifier(5))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.955
    """

    _constraint_kind = "triplets"

    _parameter_constraints: dict = {
        "beta": [Interval(Real, 0, None, closed="left")],
        "basis": [StrOptions({"auto", "lda", "triplet_diffs"}), "array-like"],
        "n_basis": [Interval(Integral, 1, None, closed="left"), None],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "output_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "k_genuine": [Interval(Integral, 1, None, closed="left")],
        "k_impostor": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, beta=1e-5, *, basis="auto", n_basis=None, gamma=1e-2,
                 n_components="auto", max_iter=40000, output_iter=500, batch_size=10,
                 tol=1e-3, n_iter_no_change=5, k_genuine=3, k_impostor=10, verbose=0,
                 random_state=None):
        self.beta = beta
        self.basis = basis
        self.n_basis = n_basis
        self.gamma = gamma
        self.n_components = n_components
        self.max_iter = max_iter
        self.output_iter = output_iter
        self.batch_size = batch_size
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.k_genuine = k_genuine
        self.k_impostor = k_impostor
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Learn the metric from class labels or from triplets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels; ignored when ``constraints`` is given.
        constraints : TripletConstraints, default=None
            Triplets ``(i, j, k)`` of rows of ``X``: ``i`` closer to ``j`` than to ``k``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        if self.output_iter > self.max_iter:
            raise ValueError(f"output_iter={self.output_iter} must be at most "
                             f"max_iter={self.max_iter}.")
        # One neighbour search per class: threads started on every call only spin.
        with one_thread():
            X, checked = self._validate_fit(X, y, constraints, rng)
            X, axes = on_leading_axes(X, self.n_components, not isinstance(self.basis, str))
            codes = None if constraints is not None else checked[1]
            triplets = (constraints if constraints is not None else checked[0]).triplets
            basis = self._basis(X, codes, triplets, rng)
        # The same objective solved on X / s with the penalty beta / s² (weights w s²), s the
        # root mean variance of the non-constant columns: AdaGrad's steps and offset are
        # then free of X's units.
        s = _scale(X)
        solver = _DualAveraging(X @ basis.T / s, triplets, self.beta / s**2, self.gamma,
                                self.batch_size, (self.tol, self.n_iter_no_change))
        n_rounds = -(-self.max_iter // self.output_iter)
        checkpoint = ArrayCheckpoint(solver.state, solver.scalars)
        with one_blas_thread():
            n_iter = iterate(lambda: solver.round(self.output_iter, rng), checkpoint,
                             max_iter=n_rounds, verbose=self.verbose, name="SCML",
                             unit="round", columns=(("objective", ".6e"), ("best", ".6e"),
                                                    ("nonzero", "d")))
        weights = solver.best_weights / s**2
        if not np.any(weights):
            warnings.warn(_zero_metric_reason(solver, self.beta, s), UserWarning)
        with one_blas_thread():  # a threaded eigh only spins at these sizes
            components = components_from_metric((basis.T * weights) @ basis)
        if axes is not None:
            components, basis = components @ axes.T, basis @ axes.T
        self.components_ = components
        self.basis_, self.weights_ = basis, weights
        self.objective_, self.n_iter_ = solver.best_value, n_iter
        return self

    def _constraints_from_labels(self, X, y, random_state):
        codes = np.unique(y, return_inverse=True)[1].ravel()
        triplets = knn_triplets(X, codes, self.k_genuine, self.k_impostor)
        return TripletConstraints(triplets), codes

    def _basis(self, X, codes, triplets, rng):
        """The bases as unit rows (an array ``basis`` is used as given)."""
        kind = self.basis
        if not isinstance(kind, str):
            basis = check_array(kind, input_name="basis")
            if basis.shape[1] != X.shape[1]:
                raise ValueError(f"basis must have {X.shape[1]} columns (n_features); got "
                                 f"shape {basis.shape}.")
            return basis
        if kind == "auto":
            kind = "triplet_diffs" if codes is None else "lda"
        if kind == "lda":
            if codes is None:
                raise ValueError("basis='lda' needs class labels y; with constraints= use "
                                 "basis='triplet_diffs' or an array.")
            n_basis = self.n_basis or default_lda_bases(*X.shape, codes.max() + 1)
            return lda_basis(X, codes, n_basis, rng)
        return triplet_difference_basis(X, triplets, self.n_basis or 80 * X.shape[1], rng)


def _scale(X):
    """Root mean variance of the non-constant columns of ``X`` (1 when X is constant),
    free of overflow; constant columns carry no scale (standardised X: s = 1)."""
    largest = np.abs(X).max() if X.size else 0.0
    if largest == 0:
        return 1.0
    variances = np.var(X / largest, axis=0)
    variances = variances[variances > 0]
    spread = largest * np.sqrt(np.mean(variances)) if variances.size else 0.0
    return float(spread) if spread > 0 else 1.0


def _zero_metric_reason(solver, beta, s):
    """Why SCML's weights are all zero, from the dual average of the gradients: a basis
    whose mean gradient is negative but above ``-beta`` is held at zero by the penalty."""
    lowest = solver.mean_gradient.min()
    if lowest < 0.0 <= lowest + solver.beta:
        return (f"SCML learned all-zero weights (a zero metric): the L1 penalty "
                f"beta={beta:g} outweighs what any weights gain on the triplets' unit "
                f"margin, which at the scale of X (root of the mean variance of its "
                f"non-constant columns, s={s:.3g}) takes weights of about 1/s²={s**-2:.3g}. "
                f"Lower beta, rescale X (e.g. with StandardScaler) or check that the "
                f"triplets or labels can be satisfied.")
    if lowest < 0.0:
        return ("SCML learned all-zero weights (a zero metric): all the nonzero weights it "
                "reached scored worse on the triplets than the zero metric (mean hinge loss "
                "1): the stochastic updates did not settle. Try a smaller gamma, a larger "
                "batch_size or a larger max_iter.")
    return ("SCML learned all-zero weights (a zero metric): averaged over the triplets, no "
            "basis brings x⁺ closer to x than x⁻ (the smallest mean gradient over the "
            f"{solver.mean_gradient.size} bases is {lowest:.3g} ≥ 0, in units of X / s with "
            f"s={s:.3g}), so no weights lower the mean hinge loss below 1, its value at the "
            "zero metric: the bases do not separate the classes, or the triplets contradict "
            "each other. Try other bases (basis='triplet_diffs' or an array), other "
            "k_genuine or k_impostor, or check the labels or triplets.")


class _DualAveraging:
    """Regularised dual averaging with AdaGrad steps on the SCML objective (§3.2)."""

    def __init__(self, projections, triplets, beta, gamma, batch_size, stop):
        self.projections = np.ascontiguousarray(projections)
        self.triplets = np.ascontiguousarray(triplets, dtype=np.intp)
        self.beta, self.gamma, self.batch_size = beta, gamma, batch_size
        self.tol, self.n_iter_no_change = stop
        # Triplets from labels share their pairs (a sample and its k_genuine
        # neighbours): the objective computes each distinct pair's distance once.
        n_samples = len(self.projections)
        codes = np.concatenate([self.triplets[:, 0] * n_samples + self.triplets[:, 1],
                                self.triplets[:, 0] * n_samples + self.triplets[:, 2]])
        codes, index = np.unique(codes, return_inverse=True)
        self.pairs = np.column_stack(np.divmod(codes, n_samples))
        self.near, self.far = np.split(index.ravel(), 2)
        # Rows: the weights, the mean gradient, the sum of squared gradients, the best
        # weights; scalars: the update count, the best objective and the rounds since
        # one improved on it (for Ctrl-C).
        # The best is over the rounds' weights (as metric-learn), never the zero start.
        self.state = np.zeros((4, projections.shape[1]))
        self.weights, self.mean_gradient, self.squared_sum, self.best_weights = self.state
        self.scalars = np.array([0.0, np.inf, 0.0])

    @property
    def best_value(self):
        return self.scalars[1]

    def value(self, weights):
        """Mean hinge over all triplets plus ``beta Σ w``."""
        active = np.flatnonzero(weights)
        distances = weighted_distances(np.ascontiguousarray(self.projections[:, active]),
                                       self.pairs, weights[active])
        slack = 1.0 + distances[self.near] - distances[self.far]
        return np.maximum(slack, 0.0).mean() + self.beta * weights.sum()

    def round(self, n_updates, rng):
        draws = rng.randint(len(self.triplets), size=(n_updates, self.batch_size))
        self.scalars[0] = triplet_updates(
            self.projections, self.triplets, draws.astype(np.intp), self.weights,
            self.mean_gradient, self.squared_sum, self.scalars[0], beta=self.beta,
            gamma=self.gamma, delta=_DELTA)
        value, best = self.value(self.weights), self.best_value
        improved = not np.isfinite(best) or value < best - self.tol * abs(best)
        if value < best:
            self.scalars[1] = value
            self.best_weights[...] = self.weights
        self.scalars[2] = 0.0 if improved else self.scalars[2] + 1.0
        return Round((value, self.best_value, int(np.count_nonzero(self.best_weights))),
                     converged=self.scalars[2] >= self.n_iter_no_change)
