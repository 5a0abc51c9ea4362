"""QuadrupletsClassifier: quadruplets of points as samples (a closer pair, a farther pair)."""

import warnings

import numpy as np
from sklearn.base import _fit_context

from .._core import QuadrupletConstraints

from ._base import _BaseOrderClassifier


class QuadrupletsClassifier(_BaseOrderClassifier):
    """Tell, for quadruplets ``(a, b, c, d)``, whether ``d(a, b) < d(c, d)``.

    Each sample is a quadruplet of points, ordered so that the answer is yes for the
    training quadruplets: the pair ``(a, b)`` is more alike than ``(c, d)``. ``fit``
    trains a clone of ``learner`` (LSML) on the distinct points of the quadruplets with
    them as its constraints. :meth:`predict` answers +1 when ``d(a, b) < d(c, d)`` in
    the learned metric and -1 otherwise; :meth:`score` is the fraction answered +1
    (the accuracy, all quadruplets being ordered).

    Read more in the :ref:`User Guide <convex>`.

    Parameters
    ----------
    learner : estimator
        A psdmetric learner that fits quadruplet constraints (``LSML``).

    preprocessor : array-like of shape (n_points, n_features), default=None
        Points that quadruplets refer to by row index: ``X`` then has shape
        (n_quadruplets, 4) and holds integer rows of ``preprocessor``.

    Attributes
    ----------
    learner_ : estimator
        The fitted clone of ``learner``.

    n_features_in_ : int
        Number of columns of ``X`` seen during fit: ``4 * n_features`` for
        quadruplets of points, 4 for index quadruplets.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns of ``X`` seen during fit, when X is a DataFrame.

    See Also
    --------
    TripletsClassifier : The same for triplets.

    Notes
    -----
    ``X`` holds quadruplets as an array of shape (n_quadruplets, 4, n_features), or
    flattened to (n_quadruplets, 4 * n_features), rows padded with zeros to a multiple
    of 4; with a ``preprocessor``, as index quadruplets of shape (n_quadruplets, 4).
    Distances are learned distances, not squared.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from psdmetric import LSML, QuadrupletConstraints, QuadrupletsClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> quadruplets = X[QuadrupletConstraints.from_labels(X, y, random_state=0).quadruplets]
    >>> model = QuadrupletsClassifier(LSML()).fit(quadruplets[::2])
    >>> round(model.score(quadruplets[1::2]), 3)
    0.933
    """

    _tuple_size = 4
    _tuple_name = "quadruplets"
    _farther = (2, 3)

    _parameter_constraints: dict = dict(_BaseOrderClassifier._parameter_constraints)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the learner on the quadruplets.

        Parameters
        ----------
        X : array-like of shape (n_quadruplets, 4, n_features) or \
                (n_quadruplets, 4 * n_features)
            Quadruplets ``(a, b, c, d)`` with ``d(a, b) < d(c, d)``; with a
            ``preprocessor``, shape (n_quadruplets, 4) of row indices.

        y : None
            Ignored: the order within each quadruplet is its label.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        points, index, _ = self._validate_tuples(X, reset=True)
        return self._fit_learner(points, index, _informative_quadruplets)


def _informative_quadruplets(points, local):
    """The quadruplets whose two pairs differ; a pair compared with itself warns."""
    same = np.all(np.sort(local[:, :2], axis=1) == np.sort(local[:, 2:], axis=1), axis=1)
    if same.any():
        warnings.warn(
            f"QuadrupletsClassifier: {same.sum()} of {len(local)} quadruplets compare a "
            "pair of points with itself (equal points), which no metric orders; they are "
            "left out of the fit.",
            UserWarning,
        )
    if same.all():
        raise ValueError("QuadrupletsClassifier: every quadruplet compares a pair of "
                         "points with itself; there is nothing to learn.")
    return QuadrupletConstraints(local[~same])
