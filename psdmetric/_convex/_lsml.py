"""LSML: metric learning from relative comparisons of pairs (Liu, Guo, Zhang, Jojic & Wang, 2012).

Minimise ``Σ_q w_q H(√d_ab − √d_cd) + tr(M M₀⁻¹) − log det M`` over quadruplets
``(a, b, c, d)`` asking ``d(a, b) < d(c, d)``, ``H(x) = x²`` for ``x > 0`` and 0
otherwise, by L-BFGS on ``M`` (Wolfe line search, Armijo backtracking as fallback). The
log-determinant is a barrier: every accepted step keeps ``M`` positive definite (its
Cholesky factor exists), so no projection is needed.
"""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    LBFGS,
    ArrayCheckpoint,
    MahalanobisMixin,
    Round,
    iterate,
    on_leading_axes,
    one_blas_thread,
)
from ._common import components_from_metric, prior_and_inverse


class LSML(MahalanobisMixin):
    """Least-squares metric learning (LSML) from relative comparisons of pairs.

    Each quadruplet ``(a, b, c, d)`` says the pair ``(a, b)`` is more alike than
    ``(c, d)``; LSML finds the metric closest to a prior ``M₀`` in log-determinant
    divergence that violates the comparisons least, in squared difference of
    distances (Liu, Guo, Zhang, Jojic & Wang, 2012)::

        minimise  (1/Q) Σ_q [√d²_M(a, b) − √d²_M(c, d)]²₊ + tr(M M₀⁻¹) − log det M.

    Solved by L-BFGS on ``M`` with a line search, the gradient as two weighted Gram
    products (no loop over quadruplets).

    Read more in the :ref:`User Guide <convex>`.

    Parameters
    ----------
    prior : {"identity", "covariance"} or array of shape (n_features, n_features), \
            default="identity"
        ``M₀``, also the starting metric: the Euclidean metric, the inverse
        covariance of ``X`` (ridged when singular, with a warning), or a symmetric
        positive-definite matrix.

    n_constraints : int or None, default=5000
        Quadruplets drawn from labels (a same-class pair, a different-class pair);
        ``None``: ``20 * n_classes**2`` (metric-learn's ``LSML_Supervised``). 5000 was
        chosen by leave-one-data-set-out among ``None``, 1000 and 5000 with either
        prior (``docs/benchmarks/defaults.md``): ``20 * n_classes**2`` is 80 for two
        classes, too few to move the metric.

    n_components : int, "auto" or None, default="auto"
        Learn on the ``n_components`` leading principal axes of ``X``; ``None``: on
        every feature; ``"auto"``: every feature up to 100, the 100 leading axes above
        (leave-one-data-set-out, ``docs/benchmarks/wide.md``); an array ``prior`` keeps
        every feature. ``components_`` has ``n_features`` columns either way.

    max_iter : int, default=1000
        Maximum number of L-BFGS steps.

    tol : float, default=1e-6
        Stop when a step lowers the objective by at most ``tol`` times its value.

    verbose : int, default=0
        Print a table row per step.

    random_state : int, RandomState instance or None, default=None
        Seed of the quadruplets drawn from labels.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        ``L`` with ``LᵀL = M``.

    objective_ : float
        The objective at the learned metric.

    n_iter_ : int
        L-BFGS steps of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    QuadrupletsClassifier : Quadruplets of points as samples.

    References
    ----------
    E. Y. Liu, Z. Guo, X. Zhang, V. Jojic and W. Wang, "Metric learning from relative
    comparisons by minimizing squared residual", ICDM 2012.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import LSML
    >>> X, y = load_wine(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), LSML(random_state=0), KNeighborsClassifier(5))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.944
    """

    _constraint_kind = "quadruplets"

    _parameter_constraints: dict = {
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, prior="identity", n_constraints=5000, n_components="auto",
                 max_iter=1000, tol=1e-6, verbose=0, random_state=None):
        self.prior = prior
        self.n_constraints = n_constraints
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Learn the metric from class labels or from quadruplets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels; ignored when ``constraints`` is given.
        constraints : QuadrupletConstraints, default=None
            Quadruplets ``(a, b, c, d)`` of rows of ``X`` with ``d(a, b) < d(c, d)``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        X, axes = on_leading_axes(X, self.n_components, not isinstance(self.prior, str))
        M, prior_inverse = prior_and_inverse(X, self.prior, "LSML")
        q = constraints.quadruplets
        problem = LSMLObjective(X[q[:, 0]] - X[q[:, 1]], X[q[:, 2]] - X[q[:, 3]],
                                prior_inverse)
        descent = _QuasiNewton(problem, M)
        with one_blas_thread():
            n_iter = iterate(lambda: descent.round(self.tol), ArrayCheckpoint(descent.state),
                             max_iter=self.max_iter, verbose=self.verbose, name="LSML",
                             unit="step", columns=(("objective", ".8e"), ("step", ".2e")))
        metric = descent.state.copy()
        with one_blas_thread():  # a threaded eigh only spins at these sizes
            objective, components = problem.value(metric), components_from_metric(metric)
        self.components_ = components if axes is None else components @ axes.T
        self.objective_, self.n_iter_ = objective, n_iter
        return self


class LSMLObjective:
    """LSML's objective and gradient on the pair differences of the quadruplets."""

    def __init__(self, closer, farther, prior_inverse):
        self.closer, self.farther, self.prior_inverse = closer, farther, prior_inverse
        self.weight = 1.0 / len(closer)

    def distances(self, M):
        """Squared distances of the closer and the farther pairs."""
        return (np.einsum("ij,ij->i", self.closer @ M, self.closer),
                np.einsum("ij,ij->i", self.farther @ M, self.farther))

    def evaluate(self, M):
        """The objective (``inf`` when ``M`` is not positive definite), and what the
        gradient at ``M`` reuses: the Cholesky factor and the squared distances."""
        try:
            factor = linalg.cho_factor(M, lower=True, check_finite=False)[0]
        except linalg.LinAlgError:
            return np.inf, None
        ab, cd = self.distances(M)
        residual = np.maximum(np.sqrt(np.maximum(ab, 0)) - np.sqrt(np.maximum(cd, 0)), 0)
        log_det = 2.0 * np.log(np.diag(factor)).sum()
        value = self.weight * residual @ residual + np.vdot(M, self.prior_inverse) - log_det
        return value, (factor, ab, cd)

    def value(self, M):
        """The objective; ``inf`` when ``M`` is not positive definite."""
        return self.evaluate(M)[0]

    def value_and_gradient(self, M):
        """The objective and its gradient (zero outside the positive-definite cone)."""
        value, reused = self.evaluate(M)
        return value, (np.zeros_like(M) if reused is None else self.gradient(M, reused))

    def gradient(self, M, reused):
        """``M₀⁻¹ − M⁻¹ + Σ_violated w[(1 − √(cd/ab)) v vᵀ + (1 − √(ab/cd)) u uᵀ]``."""
        factor, ab, cd = reused
        violated = ab > cd
        root_ab = np.sqrt(ab[violated])
        root_cd = np.sqrt(np.maximum(cd[violated], np.finfo(float).tiny))
        closer, farther = self.closer[violated], self.farther[violated]
        inverse = linalg.cho_solve((factor, True), np.eye(len(M)), check_finite=False)
        gradient = self.prior_inverse - (inverse + inverse.T) / 2.0
        gradient += (closer.T * (self.weight * (1.0 - root_cd / root_ab))) @ closer
        gradient += (farther.T * (self.weight * (1.0 - root_ab / root_cd))) @ farther
        return gradient


class _QuasiNewton:
    """L-BFGS steps (``_core.LBFGS``, memory kept across rounds) on ``M``.

    Directions are sums of symmetric gradients, so ``M`` stays symmetric; a trial
    outside the positive-definite cone has an infinite objective and is backtracked.
    """

    def __init__(self, problem, M):
        self.problem, self.state = problem, M.copy()
        self.solver, self.evaluation = LBFGS(), None

    def round(self, tol):
        M = self.state
        # The last accepted step's evaluation is this M's (None before the first round).
        evaluation = self.evaluation or self.problem.value_and_gradient(M)
        trial, new, stalled = self.solver.run(self.problem, M, evaluation, 1)
        if stalled:
            return Round((evaluation[0], 0.0), converged=True)
        step = np.sqrt(np.vdot(trial - M, trial - M))
        M[...], self.evaluation = trial, new
        decrease = evaluation[0] - new[0]
        return Round((new[0], step), converged=decrease <= tol * max(abs(new[0]), 1.0))
