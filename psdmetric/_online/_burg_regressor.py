"""BurgRegressor: non-negative online linear regression with the Burg divergence.

The vector form of Jain, Kulis & Dhillon (2007), Algorithm 1; its matrix form is
:class:`~psdmetric.OnlineLogDet` (:mod:`._burg`).
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core import AtomicFit, EstimatorCheckpoint
from ._base import run_passes
from ._burg_kernels import burg_vector_pass

# Pairs sampled to set scale="auto": the median of a ratio settles long before this.


class BurgRegressor(AtomicFit, RegressorMixin, BaseEstimator):
    """Online non-negative linear regression with Burg-entropy regularisation.

    The Burg gradient algorithm (Jain et al., 2007, Alg. 1): predict ``ŷ = w · x``, then
    ``1/wᵢ ← 1/wᵢ + 2η(ŷ − y)xᵢ``, the minimiser of the Burg (Itakura–Saito) divergence
    to the current weights plus ``η`` times the squared loss, linearised. The weights
    stay positive through an adaptive learning rate: it never grows, and shrinks to
    half of the largest step that keeps every ``1 + 2η(ŷ − y)xᵢwᵢ`` positive,
    ``η ≤ ½ / (2 maxᵢ(−(ŷ − y) xᵢ wᵢ))``. The paper states its rule for ``x ≥ 0`` and
    also keeps every ``wᵢ < 1``; this rule works for inputs of any sign and keeps only
    ``w > 0``, so the weights have no ceiling.

    Parameters
    ----------
    eta : float, default=1.0
        Initial learning rate η (in units of 1 / target²: scale the targets or tune
        it, e.g. with ``GridSearchCV``).

    max_iter : int, default=10
        Maximum number of passes ``fit`` makes over the data.

    tol : float, default=1e-3
        ``fit`` stops when the cumulative loss of a pass differs from the previous
        pass's by at most ``tol`` times ``Σ y²`` (the loss of predicting zero).

    verbose : int, default=0
        Print one table row per pass.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The positive weights w.

    eta_ : float
        Current learning rate.

    cumulative_loss_ : float
        ``Σ (ŷ − y)²`` of the predictions made online since the last reset.

    n_iter_ : int
        Passes made by ``fit``, or ``partial_fit`` calls since the last reset.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    OnlineLogDet : The matrix version, for metric learning.
    sklearn.linear_model.SGDRegressor : Online regression with squared-norm penalty.

    Notes
    -----
    Initial values (the paper's OCR is damaged there): ``wᵢ = 1/N`` for N features.
    There is no intercept and weights are positive, so the model fits targets that are
    non-negative combinations of the features.

    References
    ----------
    P. Jain, B. Kulis and I. Dhillon. Online linear regression using Burg entropy.
    Technical Report TR-07-08, University of Texas at Austin, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import BurgRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = np.abs(rng.randn(500, 5))
    >>> y = X @ np.array([0.5, 0.1, 0.2, 0.1, 0.1])
    >>> model = BurgRegressor(eta=1.0, max_iter=50).fit(X, y)
    >>> model.score(X, y) > 0.99
    True
    """

    _parameter_constraints: dict = {
        "eta": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, eta=1.0, *, max_iter=10, tol=1e-3, verbose=0):
        self.eta = eta
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Start from ``w = 1/N`` and make passes over the data until the loss settles.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs, visited in order.

        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        with EstimatorCheckpoint(self) as checkpoint:
            X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64, order="C")
            self._initialize(X.shape[1])
            # Loss changes are measured against Σy², the loss of predicting zero: a
            # relative change would never settle on noiseless data, where loss → 0.
            scale = float(y @ y)

            def one_pass():
                loss = self._one_pass(X, y)
                return loss, (loss, self.eta_)

            self.n_iter_ = run_passes(
                self, one_pass, lambda previous, loss: abs(previous - loss) <= self.tol * scale,
                checkpoint, columns=(("loss", ".6e"), ("eta", ".4e")))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        """Continue from the current weights: one pass over this chunk.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's inputs, visited in order.

        y : array-like of shape (n_samples,)
            The chunk's targets.

        Returns
        -------
        self : object
            Updated estimator.
        """
        with EstimatorCheckpoint(self):
            first_call = not hasattr(self, "coef_")
            X, y = validate_data(
                self, X, y, y_numeric=True, dtype=np.float64, order="C", reset=first_call
            )
            if first_call:
                self._initialize(X.shape[1])
                self.n_iter_ = 0
            self._one_pass(X, y)
            self.n_iter_ += 1
        return self

    def predict(self, X):
        """Predict ``w · x`` for every row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_

    def _initialize(self, n_features):
        self.coef_ = np.full(n_features, 1.0 / n_features)
        self.eta_ = float(self.eta)
        self.cumulative_loss_ = 0.0

    def _one_pass(self, X, y):
        y = np.ascontiguousarray(y, dtype=np.float64)
        predictions, rates = np.empty(len(y)), np.empty(len(y))
        self.eta_ = burg_vector_pass(X, y, self.coef_, self.eta_, predictions, rates)
        loss = float(np.sum((predictions - y) ** 2))
        self.cumulative_loss_ += loss
        return loss

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Positive weights and no intercept: a fit to arbitrary targets can be poor.
        tags.regressor_tags.poor_score = True
        return tags
