"""SDML: sparse distance metric learning (Qi, Tang, Zha, Chua & Zhang, 2009).

The metric is the graphical-lasso precision of ``C = M₀⁻¹ + η Σ y_ij (x_i − x_j)(x_i −
x_j)ᵀ``: ``min_M tr(M C) − log det M + α Σ_(k≠l) √(C_kk C_ll) |M_kl|``, solved by
scikit-learn's :func:`~sklearn.covariance.graphical_lasso` on the correlation matrix of
``C`` (the penalty on the correlation scale makes it independent of the features'
units). The problem is bounded only for a positive-definite ``C``; dissimilar pairs
(``y = −1``) can make it indefinite, and then ``C`` is shifted to positive definite,
with a warning saying by how much.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.covariance import graphical_lasso
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import MahalanobisMixin
from ._common import components_from_metric, prior_and_inverse

# C counts as positive definite when its smallest eigenvalue is above this fraction of
# its largest; a shifted C has smallest eigenvalue _SHIFT times its mean |eigenvalue|.
_DEFINITE, _SHIFT = 1e-10, 1e-2


class SDML(MahalanobisMixin):
    """Sparse distance metric learning (SDML) from labelled pairs.

    Learns a sparse Mahalanobis matrix close to a prior ``M₀`` that shrinks the
    distances of similar pairs and stretches those of dissimilar ones (Qi, Tang, Zha,
    Chua & Zhang, 2009)::

        minimise  tr(M C) − log det M + alpha Σ_(k≠l) √(C_kk C_ll) |M_kl|,
        C = M₀⁻¹ + balance_param Σ_(i,j) y_ij (x_i − x_j)(x_i − x_j)ᵀ,

    a graphical lasso on ``C`` (``y = +1`` similar, ``−1`` dissimilar), solved by
    scikit-learn's :func:`~sklearn.covariance.graphical_lasso` on the correlation
    matrix of ``C``. The penalty weights ``√(C_kk C_ll)`` make it independent of the
    features' units (metric-learn's SDML penalises ``|M_kl|`` alone).

    Read more in the :ref:`User Guide <convex>`.

    Parameters
    ----------
    balance_param : float or "auto", default="auto"
        Weight ``η`` of the pairs against the prior. ``"auto"``: the ``η`` at which the
        pairs' term, relative to the prior, has largest absolute eigenvalue
        ``pair_weight``: the eigenvalues of ``M₀^(1/2) C M₀^(1/2)`` then lie in
        ``[1 − pair_weight, 1 + pair_weight]``, so ``C`` is positive definite whatever
        the pairs and the data's scale. A float is metric-learn's ``η`` (its default is
        0.5).

    pair_weight : float in (0, 1), default=0.9
        The pairs' weight relative to the prior with ``balance_param="auto"``; unused
        otherwise.

    alpha : float, default=0.01
        Weight of the L1 penalty on the off-diagonal entries of ``M`` (sparsity).

    prior : {"identity", "covariance"} or array of shape (n_features, n_features), \
            default="identity"
        ``M₀``: the Euclidean metric, the inverse covariance of ``X`` (ridged when
        singular, with a warning), or a symmetric positive-definite matrix.

    n_constraints : int, default=None
        Random pairs drawn from labels when ``n_neighbors=None`` (see
        :func:`pairs_from_labels`); ``None``: ``40 * n_classes**2``.

    n_neighbors : int or None, default=3
        Pairs drawn from labels: each sample with its ``n_neighbors`` nearest
        same-class and other-class neighbours; ``None``: random pairs (metric-learn's).

    max_iter : int, default=100
        Maximum iterations of the graphical lasso.

    tol : float, default=1e-4
        The graphical lasso's stopping tolerance (its dual gap, and that of its inner
        lasso problems).

    verbose : int, default=0
        Print the graphical lasso's progress.

    random_state : int, RandomState instance or None, default=None
        Seed of the pairs drawn from labels.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``L`` with ``LᵀL = M``.

    shift_ : float
        What was added to the diagonal of ``C`` to make it positive definite (0 when
        it was).

    n_iter_ : int
        Graphical-lasso iterations of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    MMC : Pairs, spread dissimilar pairs apart.

    Notes
    -----
    The defaults (``balance_param="auto"``, ``pair_weight=0.9``, ``n_neighbors=3``)
    were chosen by leave-one-data-set-out on the development suite (bench_defaults.py).
    metric-learn's defaults are ``SDML(0.5, n_neighbors=None)``: with a float
    ``balance_param``, ``C`` is often indefinite (always with more features than
    samples) and metric-learn's SDML then fails ("matrix is not positive definite");
    here ``C`` is shifted by ``shift_`` times the identity (warning), which solves the
    problem for the prior ``(M₀⁻¹ + shift_ I)⁻¹``.

    References
    ----------
    G.-J. Qi, J. Tang, Z.-J. Zha, T.-S. Chua and H.-J. Zhang, "An efficient sparse
    metric learning in high-dimensional space via l1-penalized log-determinant
    regularization", ICML 2009.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import SDML
    >>> X, y = load_wine(return_X_y=True)
    >>> sdml = SDML(random_state=0)
    >>> model = make_pipeline(StandardScaler(), sdml, KNeighborsClassifier(5))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.955
    """

    _parameter_constraints: dict = {
        "balance_param": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "pair_weight": [Interval(Real, 0, 1, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, balance_param="auto", *, pair_weight=0.9, alpha=0.01, prior="identity",
                 n_constraints=None, n_neighbors=3, max_iter=100, tol=1e-4, verbose=0,
                 random_state=None):
        self.balance_param = balance_param
        self.pair_weight = pair_weight
        self.alpha = alpha
        self.prior = prior
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Learn the metric from class labels or from labelled pairs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels; ignored when ``constraints`` is given.
        constraints : PairConstraints, default=None
            Similar (+1) and dissimilar (-1) pairs of rows of ``X``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        if X.shape[1] < 2:
            raise ValueError("SDML needs at least 2 features (the graphical lasso "
                             f"estimates off-diagonal entries); X has {X.shape[1]} "
                             "feature(s).")
        prior_inverse = prior_and_inverse(X, self.prior, "SDML")[1]
        pairs = pair_matrix(X, constraints)
        if self.balance_param == "auto":
            # Definite by construction: no shift, and the prior keeps its say.
            C, shift = prior_inverse + auto_balance(pairs, prior_inverse,
                                                    self.pair_weight) * pairs, 0.0
        else:
            C, shift = positive_definite(prior_inverse + self.balance_param * pairs)
        # On the correlation scale the lasso is unit-free and numerically stable.
        scale = 1.0 / np.sqrt(np.diag(C))
        correlation = C * np.outer(scale, scale)
        try:
            _, precision, n_iter = graphical_lasso(
                correlation, self.alpha, max_iter=self.max_iter, tol=self.tol,
                enet_tol=self.tol, verbose=bool(self.verbose), return_n_iter=True)
        except FloatingPointError as exc:
            raise ValueError(
                f"SDML: the graphical lasso failed on C ({exc}); its condition number is "
                f"{np.linalg.cond(correlation):.3g}. Raise alpha or lower balance_param."
            ) from exc
        self.components_ = components_from_metric(precision * np.outer(scale, scale))
        self.shift_, self.n_iter_ = shift, int(n_iter)
        return self


def pair_matrix(X, constraints):
    """``Σ y (x_i − x_j)(x_i − x_j)ᵀ``, one weighted Gram product."""
    differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    return (differences.T * constraints.labels) @ differences


def auto_balance(pairs, prior_inverse, pair_weight):
    """``η`` giving ``η · pairs`` largest absolute eigenvalue ``pair_weight`` against
    ``prior_inverse`` (generalised eigenvalues); 0 for pairs of equal rows, which
    ``_validate_fit`` has warned of."""
    largest = np.abs(linalg.eigvalsh(pairs, prior_inverse)).max()
    return pair_weight / largest if largest > 0 else 0.0


def positive_definite(C):
    """``C`` shifted to positive definite if it is not, and the shift (warns)."""
    values = linalg.eigvalsh(C)
    if values.min() > _DEFINITE * np.abs(values).max():
        return C, 0.0
    shift = _SHIFT * np.abs(values).mean() - values.min()
    warnings.warn(
        f"SDML: C = prior⁻¹ + balance_param · Σ y (x_i − x_j)(x_i − x_j)ᵀ is not positive "
        f"definite (smallest eigenvalue {values.min():.3g}), so the graphical lasso has no "
        f"solution; C is shifted by {shift:.3g} times the identity. Lower balance_param "
        "to avoid the shift.",
        UserWarning,
    )
    return C + shift * np.eye(len(C)), float(shift)
