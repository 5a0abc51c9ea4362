"""MLKR: metric learning for kernel regression (Weinberger & Tesauro, 2007).

The leave-one-out kernel-regression loss (``_objective.py``) is minimised over ``L``
by L-BFGS (``_core.LBFGS``, whose curvature memory carries over from one round to the
next), a bounded number of iterations per round of the iteration driver, so the
verbose table, the ``ConvergenceWarning`` and Ctrl-C behave as in every other learner.
"""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from .._core import (
    LBFGS,
    ArrayCheckpoint,
    MahalanobisMixin,
    Round,
    check_informative,
    check_scale,
    iterate,
    on_leading_axes,
    one_blas_thread,
    oriented_columns,
)
from ._objective import mlkr_loss

# L-BFGS iterations per round (its curvature memory carries over to the next round).
_STEPS_PER_ROUND = 15


class MLKR(MahalanobisMixin):
    """Metric learning for kernel regression (MLKR).

    Learns a linear map ``L`` for regression: the Gaussian-kernel (Nadaraya–Watson)
    estimate of each training target from all the others, ``ŷ_i = Σ_(j≠i) p_ij y_j``
    with ``p_ij ∝ exp(−‖L(x_i − x_j)‖²)``, should be close to ``y_i``. MLKR minimises
    the leave-one-out squared error ``Σ_i (ŷ_i − y_i)²`` (Weinberger & Tesauro, 2007,
    §3) by L-BFGS; the kernel's width is learned with ``L``, so features should be on
    comparable scales at the start (e.g. ``StandardScaler``).

    ``y`` is a continuous target, not class labels. Each loss evaluation couples every
    pair of samples (O(n² · n_components) time); it runs in row blocks, so memory is
    O(n · n_features) plus a fixed 32 MiB block, never an n × n array.

    Read more in the :ref:`User Guide <mlkr>`.

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rows of ``L``; ``None``: ``n_features``. ``"auto"``: ``n_features`` up to 100
        features; above, ``L`` is learned on the 100 leading principal axes of ``X``
        (``components_`` is ``L Pᵀ``), as LMNN's: an O(n² · 100) fit
        (``docs/benchmarks/wide.md``). An array ``init`` keeps every feature.

    init : {"pca", "identity"} or array of shape (n_components, n_features), \
            default="pca"
        Starting map. ``"pca"``: the leading principal axes of ``X`` (a rotation when
        ``n_components = n_features``: the Euclidean metric); ``"identity"``: the first
        ``n_components`` coordinates.

    max_iter : int, default=50
        Maximum number of rounds, each up to 15 L-BFGS iterations (the curvature
        memory carries over between rounds); reaching it raises a
        ``ConvergenceWarning``.

    tol : float, default=0.3
        Stop when a round lowers the loss by at most ``tol`` times its value, when no
        step along the gradient lowers it, or when the loss is at most machine epsilon
        times ``Σ (y − ȳ)²``: the targets are fitted to double precision (on
        separable classes the loss falls by the same ratio every round as ``L``
        grows, never by a small fraction). The default is the best over
        ``3e-1 … 1e-5`` on three regression sets (diabetes, Boston, Auto), scored by
        leave-one-data-set-out, among the values that fit every training fold of a
        2,000 × 100 set with 30 classes in under 2 s CPU
        (``docs/benchmarks/closed_form.md``): only ``0.3`` does (two rounds);
        ``0.1`` scores better on the regression sets (mean 5-NN MSE 0.922 of the
        Euclidean metric's against 0.942) at up to twice the time with many
        classes, and smaller values fit the training targets more closely, not the
        test targets.

    verbose : int, default=0
        Print a table row per round.

    random_state : int, RandomState instance or None, default=None
        Unused by the solver, which is deterministic; kept for the API of the other
        learners.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``; the metric is ``M = LᵀL``.

    objective_ : float
        The leave-one-out squared error at ``components_``.

    n_iter_ : int
        Rounds of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    BurgRegressor : Online learning of a metric from target distances.

    References
    ----------
    K. Q. Weinberger and G. Tesauro, "Metric learning for kernel regression", AISTATS
    (2007), 612–619.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import MLKR
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), MLKR(), KNeighborsRegressor(10))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.385
    """

    _constraint_kind = "regression"

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "init": [StrOptions({"pca", "identity"}), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components="auto", *, init="pca", max_iter=50, tol=0.3, verbose=0,
                 random_state=None):
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the metric from continuous targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Continuous targets (class labels are read as numbers).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        check_random_state(self.random_state)
        X, y = validate_data(self, X, y, y_numeric=True, ensure_min_samples=2,
                             dtype=np.float64)
        check_scale(X, type(self).__name__, self._scale_limits)
        check_informative(X, type(self).__name__)
        y = y.astype(np.float64)
        # The chunks are small matrix products: threads would only spin. The start is
        # computed on one thread too, so the fit does not depend on the thread count.
        with one_blas_thread():
            # "auto" above 100 features: L on the leading principal axes (an integer: L's
            # rows).
            X_fit, axes = on_leading_axes(X, "auto" if self.n_components == "auto" else None,
                                          not isinstance(self.init, str))
            L = self._initial_map(X_fit)
            state = _Rounds(X_fit, y, L)
            n_iter = iterate(lambda: state.round(L, self.tol), ArrayCheckpoint(L),
                             max_iter=self.max_iter, verbose=self.verbose, name="MLKR",
                             unit="round", columns=(("loss", ".6e"), ("evaluations", "d"),
                                                    ("change", ".2e")))
        self.objective_ = state.value
        self.components_ = L if axes is None else L @ axes.T
        self.n_iter_ = n_iter
        return self

    def _initial_map(self, X):
        n_features = X.shape[1]
        given = None if self.n_components == "auto" else self.n_components
        if not isinstance(self.init, str):
            L = np.array(self.init, dtype=np.float64, copy=True)
            rows = given or L.shape[0]
            if L.ndim != 2 or L.shape != (rows, n_features) or not np.all(np.isfinite(L)):
                raise ValueError(
                    f"init must be a finite array of shape ({rows}, {n_features}) "
                    f"(n_components, n_features); got shape {L.shape}.")
            return L
        rows = given or n_features
        if rows > n_features:
            raise ValueError(f"n_components={rows} must be at most n_features={n_features}.")
        if self.init == "identity":
            return np.eye(rows, n_features)
        centred = X - X.mean(axis=0)
        axes = oriented_columns(linalg.eigh(centred.T @ centred)[1][:, ::-1])
        return np.ascontiguousarray(axes.T[:rows])


class _Loss:
    """The loss as ``LBFGS`` reads it, counting its evaluations."""

    def __init__(self, X, y):
        self.X, self.y, self.evaluations = X, y, 0

    def value_and_gradient(self, L):
        self.evaluations += 1
        return mlkr_loss(L, self.X, self.y)


class _Rounds:
    """Rounds of up to ``_STEPS_PER_ROUND`` L-BFGS iterations from the current ``L``."""

    def __init__(self, X, y, L):
        self.objective, self.solver = _Loss(X, y), LBFGS()
        self.evaluation = self.objective.value_and_gradient(L)
        # A loss this small fits the targets to double precision at their own scale.
        self.exact = np.finfo(float).eps * np.sum((y - y.mean()) ** 2)

    @property
    def value(self):
        return self.evaluation[0]

    def round(self, L, tol):
        value, start = self.evaluation[0], self.objective.evaluations
        L_new, self.evaluation, stalled = self.solver.run(self.objective, L, self.evaluation,
                                                          _STEPS_PER_ROUND)
        L[...] = L_new
        change = (value - self.value) / max(abs(value), np.finfo(float).tiny)
        # Stalled: no step along −gradient lowers the loss (stationary to precision).
        return Round((self.value, self.objective.evaluations - start, change),
                     converged=stalled or change <= tol or self.value <= self.exact)
