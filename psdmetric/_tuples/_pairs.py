"""PairsClassifier: pairs of points as samples, labelled similar or dissimilar.

``GridSearchCV``, ``cross_val_score`` and ``CalibratedClassifierCV`` work on pair data
unchanged.
"""

from numbers import Real

import numpy as np
from sklearn.base import ClassifierMixin, _fit_context
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._core import DistanceTargets, PairConstraints

from ._base import _TupleEstimator

# Percentiles of the training pairs' squared distances that become the target squared
# distances of similar and dissimilar pairs for the regression learners (ITML's bounds).
_TARGET_PERCENTILES = (5, 95)


class PairsClassifier(ClassifierMixin, _TupleEstimator):
    """Classify pairs as similar or dissimilar with any psdmetric learner.

    Each sample is a pair of points. ``fit`` trains a clone of ``learner`` on the
    distinct points of the training pairs with those pairs as its constraints, then
    sets a distance threshold: a pair is predicted similar when its learned distance is
    below ``threshold_``. Because a pair is one sample, ``cross_val_score``,
    ``GridSearchCV`` (over ``learner__gamma`` and the like), ``CalibratedClassifierCV``
    and ``scoring="roc_auc"`` work on pair data.

    Distances, ``threshold_`` and :meth:`decision_function` are learned distances
    ``d(x, x') = ‖L(x − x')‖``, not squared, as in metric-learn.

    Read more in the :ref:`User Guide <weakly_supervised>`.

    Parameters
    ----------
    learner : estimator
        A psdmetric learner that fits pair constraints (``LogDet``, ``VonNeumann``,
        ``DefiniteBoost``, ``POLA``, ``KernelPOLA``) or distance targets (``MEG``,
        ``OnlineLogDet``; similar pairs get the 5th, dissimilar pairs the 95th
        percentile of the training pairs' squared distances as target), or a learner
        of class labels with ``components_`` after fit (``LFDA``,
        scikit-learn's ``NeighborhoodComponentsAnalysis``), fitted with the groups of
        points that similar pairs join as classes.

    preprocessor : array-like of shape (n_points, n_features), default=None
        Points that pairs refer to by row index: ``X`` then has shape (n_pairs, 2) and
        holds integer rows of ``preprocessor``, and no pair copies its points.

    Attributes
    ----------
    learner_ : estimator
        The fitted clone of ``learner``.

    threshold_ : float
        Pairs at a learned distance below it are predicted similar. ``fit`` takes the
        learner's own threshold when it learns one (POLA's ``b``, as ``√b``) and
        otherwise the accuracy-maximising one on the training pairs; see
        :meth:`calibrate_threshold` and :meth:`set_threshold`.

    classes_ : ndarray of shape (2,)
        The two pair labels; ``classes_[1]`` (e.g. +1, or 1 of {0, 1}) marks similar
        pairs.

    n_features_in_ : int
        Number of columns of ``X`` seen during fit: ``2 * n_features`` for pairs of
        points (a 3-D array counts as flattened), 2 for index pairs.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns of ``X`` seen during fit, when X is a DataFrame.

    See Also
    --------
    TripletsClassifier : The same for triplets.

    Notes
    -----
    ``X`` holds pairs as an array of shape (n_pairs, 2, n_features), or flattened to
    (n_pairs, 2 * n_features) — the first point's features, then the second's — which
    is how scikit-learn's tools that expect 2-D data see them (a row of odd length
    is read with a 0 appended, with a warning, so that any 2-D array is valid input); or,
    with a ``preprocessor``, as index pairs of shape (n_pairs, 2). The learner is fitted
    with explicit constraints, so its own ``n_constraints`` and ``n_neighbors`` are unused.

    The learned metric is ``learner_``'s: ``model.learner_.transform(points)``,
    ``model.learner_.get_metric()``, ``model.learner_.components_`` (metric-learn's pair
    learners offer these on the classifier itself). To use an already fitted learner,
    wrap it in :class:`sklearn.frozen.FrozenEstimator`: ``fit`` then only sets the
    threshold.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.metrics import roc_auc_score
    >>> from psdmetric import LogDet, PairsClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> rng = np.random.RandomState(0)
    >>> index = rng.randint(0, len(X), (400, 2))
    >>> similar = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)
    >>> pairs = X[index]                      # shape (400, 2, 4)
    >>> model = PairsClassifier(LogDet(random_state=0)).fit(pairs[:300], similar[:300])
    >>> model.score(pairs[300:], similar[300:])
    0.89
    >>> auc = roc_auc_score(similar[300:], model.decision_function(pairs[300:]))
    >>> round(auc, 3)
    0.966
    """

    _parameter_constraints: dict = dict(_TupleEstimator._parameter_constraints)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the learner on the pairs and set the threshold.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2 * n_features)
            The pairs; with a ``preprocessor``, shape (n_pairs, 2) of row indices.

        y : array-like of shape (n_pairs,)
            Two labels, the larger for similar pairs: {-1, +1} or {0, 1}.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        points, index, y = self._validate_tuples(X, y, reset=True)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(
                f"Only binary classification is supported. PairsClassifier needs two "
                f"classes, similar and dissimilar pairs; got {len(self.classes_)} "
                f"class(es): {self.classes_}."
            )
        labels = np.where(codes == 1, 1, -1)

        def make_constraints(X_unique, local):
            _reject_contradictions(local, labels)
            if self.learner._constraint_kind == "pairs":
                return PairConstraints(local, labels)
            difference = X_unique[local[:, 0]] - X_unique[local[:, 1]]
            lower, upper = np.percentile(np.einsum("ij,ij->i", difference, difference),
                                         _TARGET_PERCENTILES)
            return DistanceTargets(local, np.where(labels == 1, lower, upper))

        self._fit_learner(points, index, make_constraints, similar=labels == 1)
        if hasattr(self.learner_, "threshold_"):
            self.threshold_ = float(np.sqrt(self.learner_.threshold_))
        else:
            self.threshold_ = _best_threshold(self._distances(points, index), labels,
                                              "accuracy", None, None)
        return self

    def pair_distance(self, X):
        """Learned distance ``‖L(x − x')‖`` between the two points of each pair.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2 * n_features)
            The pairs; with a ``preprocessor``, shape (n_pairs, 2) of row indices.

        Returns
        -------
        distances : ndarray of shape (n_pairs,)
        """
        check_is_fitted(self)
        points, index, _ = self._validate_tuples(X, reset=False)
        return self._distances(points, index)

    def decision_function(self, X):
        """``threshold_ − d(x, x')``: positive for pairs predicted similar.

        It ranks pairs as the negative distance does (metric-learn's
        ``decision_function``), shifted so that its sign is the prediction.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2 * n_features)
            The pairs; with a ``preprocessor``, shape (n_pairs, 2) of row indices.

        Returns
        -------
        scores : ndarray of shape (n_pairs,)
        """
        distances = self.pair_distance(X)
        return self.threshold_ - distances

    def predict(self, X):
        """Predict ``classes_[1]`` (similar) or ``classes_[0]`` for each pair.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2 * n_features)
            The pairs; with a ``preprocessor``, shape (n_pairs, 2) of row indices.

        Returns
        -------
        labels : ndarray of shape (n_pairs,)
        """
        similar = self.decision_function(X) > 0
        return self.classes_[similar.astype(int)]

    def set_threshold(self, threshold):
        """Set the distance below which pairs are predicted similar.

        Parameters
        ----------
        threshold : float
            A learned distance (not squared).

        Returns
        -------
        self : object
            The estimator, with ``threshold_ = threshold``.
        """
        check_is_fitted(self)
        if not isinstance(threshold, Real) or not np.isfinite(threshold):
            raise ValueError(f"threshold must be a finite number; got {threshold!r}.")
        self.threshold_ = float(threshold)
        return self

    def calibrate_threshold(self, X, y, strategy="accuracy", min_rate=None, beta=1.0):
        """Choose ``threshold_`` on labelled pairs for a criterion.

        The threshold is chosen among the midpoints between consecutive distinct
        distances of ``X`` (and points beyond the smallest and largest), which reaches
        every way of splitting these pairs by distance.

        Parameters
        ----------
        X : array-like of shape (n_pairs, 2, n_features) or (n_pairs, 2 * n_features)
            Labelled pairs, preferably not the training pairs; with a
            ``preprocessor``, shape (n_pairs, 2) of row indices.

        y : array-like of shape (n_pairs,)
            Labels from ``classes_``.

        strategy : {"accuracy", "f_beta", "max_tpr", "max_tnr"}, default="accuracy"
            Maximise the accuracy; the F-beta score of the similar class; the true
            positive rate (similar pairs found) subject to a true negative rate of at
            least ``min_rate``; or the true negative rate subject to a true positive
            rate of at least ``min_rate``. Ties go to the smallest threshold.

        min_rate : float, default=None
            The minimum rate in [0, 1] for "max_tpr" and "max_tnr".

        beta : float, default=1.0
            Weight of recall in the F-beta score.

        Returns
        -------
        self : object
            The estimator, with the new ``threshold_``.
        """
        check_is_fitted(self)
        strategies = {"accuracy", "f_beta", "max_tpr", "max_tnr"}
        if strategy not in strategies:
            raise ValueError(f"strategy must be one of {sorted(strategies)}; got {strategy!r}.")
        if strategy == "f_beta" and not (isinstance(beta, Real) and beta > 0):
            raise ValueError(f"beta must be a positive number; got {beta!r}.")
        if strategy in ("max_tpr", "max_tnr") and not (
                isinstance(min_rate, Real) and 0 <= min_rate <= 1):
            raise ValueError(
                f"strategy={strategy!r} needs min_rate, a number in [0, 1]; got {min_rate!r}."
            )
        points, index, y = self._validate_tuples(X, y, reset=False)
        unknown = np.setdiff1d(y, self.classes_)
        if len(unknown):
            raise ValueError(f"y holds labels {unknown} not in classes_ {self.classes_}.")
        labels = np.where(y == self.classes_[1], 1, -1)
        if strategy in ("max_tpr", "max_tnr") and len(np.unique(labels)) < 2:
            raise ValueError(f"strategy={strategy!r} needs similar and dissimilar pairs in y.")
        self.threshold_ = _best_threshold(self._distances(points, index), labels, strategy,
                                          beta, min_rate)
        return self

    def _distances(self, points, index):
        embedded = self._embedded(points, index)
        return np.linalg.norm(embedded[:, 0] - embedded[:, 1], axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        # Generic 2-D data read as pairs of points need not be separable by a distance.
        tags.classifier_tags.poor_score = True
        return tags


def _reject_contradictions(local, labels):
    """Raise, naming the rows of X, when two pairs join the same points with both labels."""
    low, high = np.sort(local, axis=1).T
    key = low.astype(np.int64) * (int(high.max()) + 1) + high
    order = np.argsort(key, kind="stable")
    clash = (key[order][1:] == key[order][:-1]) & (labels[order][1:] != labels[order][:-1])
    if clash.any():
        first, second = sorted(order[np.flatnonzero(clash)[0]:][:2])
        raise ValueError(
            f"Rows {first} and {second} of X are the same pair of points (in either order, "
            "or with equal points) labelled both similar and dissimilar; a metric cannot "
            "satisfy both. Remove or relabel one of them."
        )


def _best_threshold(distances, labels, strategy, beta, min_rate):
    """The threshold maximising ``strategy`` when pairs below it are called similar."""
    order = np.argsort(distances, kind="stable")
    d, similar = distances[order], labels[order] == 1
    n, n_similar = len(d), int(similar.sum())
    # Splits after k pairs (k = 0..n) that fall between distinct distances.
    true_positives = np.concatenate([[0], np.cumsum(similar)])
    k = np.arange(n + 1)
    valid = np.ones(n + 1, bool)
    valid[1:n] = d[1:] > d[:-1]
    false_positives = k - true_positives
    true_negatives = (n - n_similar) - false_positives
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = true_positives / n_similar
        tnr = true_negatives / (n - n_similar)
        if strategy == "accuracy":
            objective = (true_positives + true_negatives) / n
        elif strategy == "f_beta":
            weight = beta**2
            objective = np.nan_to_num((1 + weight) * true_positives / (
                (1 + weight) * true_positives + weight * (n_similar - true_positives)
                + false_positives))
        elif strategy == "max_tpr":
            valid &= tnr >= min_rate
            objective = tpr
        else:
            valid &= tpr >= min_rate
            objective = tnr
    best = int(np.flatnonzero(valid)[np.argmax(objective[valid])])
    # Beyond the extremes, step by half the mean gap between distances.
    margin = (d[-1] - d[0]) / (2 * max(n - 1, 1)) or 0.5 * max(abs(d[-1]), 1.0)
    if best == 0:
        return float(d[0] - margin)
    if best == n:
        return float(d[-1] + margin)
    return float((d[best - 1] + d[best]) / 2)
