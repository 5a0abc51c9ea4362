"""TripletsClassifier: triplets of points as samples (a point, a closer one, a farther one)."""


from sklearn.base import _fit_context

from .._core import TripletConstraints

from ._base import _BaseOrderClassifier


class TripletsClassifier(_BaseOrderClassifier):
    """Tell, for triplets ``(a, b, c)``, whether ``a`` is closer to ``b`` than to ``c``.

    Each sample is a triplet of points, ordered so that the answer is yes for the
    training triplets. ``fit`` trains a clone of ``learner`` (PSDBoost) on the distinct
    points of the triplets with them as its constraints. :meth:`predict` answers +1 when
    ``d(a, b) < d(a, c)`` in the learned metric and -1 otherwise; :meth:`score` is the
    fraction of triplets answered +1 (the accuracy, all triplets being ordered).

    Read more in the :ref:`User Guide <weakly_supervised>`.

    Parameters
    ----------
    learner : estimator
        A psdmetric learner that fits triplet constraints (``PSDBoost``, ``LMNN``), or
        a learner of class labels with ``components_`` after fit (``LFDA``,
        scikit-learn's ``NeighborhoodComponentsAnalysis``), fitted with the groups of
        points that each triplet's first two points join as classes.

    preprocessor : array-like of shape (n_points, n_features), default=None
        Points that triplets refer to by row index: ``X`` then has shape
        (n_triplets, 3) and holds integer rows of ``preprocessor``.

    Attributes
    ----------
    learner_ : estimator
        The fitted clone of ``learner``.

    n_features_in_ : int
        Number of columns of ``X`` seen during fit: ``3 * n_features`` for triplets
        of points, 3 for index triplets.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns of ``X`` seen during fit, when X is a DataFrame.

    See Also
    --------
    PairsClassifier : The same for labelled pairs.

    Notes
    -----
    ``X`` holds triplets as an array of shape (n_triplets, 3, n_features), or flattened
    to (n_triplets, 3 * n_features), rows padded with zeros to a multiple of 3; with
    a ``preprocessor``, as index triplets of shape
    (n_triplets, 3). Distances are learned distances, not squared.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from psdmetric import PSDBoost, TripletsClassifier, triplets_from_labels
    >>> X, y = load_iris(return_X_y=True)
    >>> triplets = X[triplets_from_labels(X, y).triplets]     # shape (161, 3, 4)
    >>> model = TripletsClassifier(PSDBoost(random_state=0)).fit(triplets[::2])
    >>> round(model.score(triplets[1::2]), 3)
    0.95
    """

    _tuple_size = 3
    _tuple_name = "triplets"

    _parameter_constraints: dict = dict(_BaseOrderClassifier._parameter_constraints)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the learner on the triplets.

        Parameters
        ----------
        X : array-like of shape (n_triplets, 3, n_features) or \
                (n_triplets, 3 * n_features)
            Triplets ``(a, b, c)`` with ``a`` closer to ``b`` than to ``c``; with a
            ``preprocessor``, shape (n_triplets, 3) of row indices.

        y : None
            Ignored: the order within each triplet is its label.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        points, index, _ = self._validate_tuples(X, reset=True)
        return self._fit_learner(points, index,
                                 lambda X_unique, local: TripletConstraints(local))
