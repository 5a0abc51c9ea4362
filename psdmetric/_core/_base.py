"""The Mahalanobis API every learner shares: everything derives from ``components_``.

A fitted learner holds ``components_ = L`` of shape (n_components, n_features); the
learned metric is ``d²(x, x') = ‖L (x − x')‖² = (x − x')ᵀ M (x − x')`` with ``M = LᵀL``.
"""

import warnings
from functools import partial

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_array
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._constraints import (
    DistanceTargets,
    PairConstraints,
    QuadrupletConstraints,
    TripletConstraints,
    check_indices,
)
from ._guards import (
    SCALE_LIMITS,
    AtomicFit,
    check_informative,
    check_scale,
    warn_if_out_of_core,
)

_CONSTRAINT_TYPES = {
    "pairs": PairConstraints,
    "quadruplets": QuadrupletConstraints,
    "targets": DistanceTargets,
    "triplets": TripletConstraints,
}


def oriented_columns(vectors):
    """``vectors`` with each column's largest-magnitude entry made positive.

    Eigenvector signs are the LAPACK build's choice; fixing them keeps ``transform``
    the same on every machine.
    """
    return vectors * column_signs(vectors)


def column_signs(vectors):
    """±1 per column of ``vectors``: the sign of its largest-magnitude entry (the first
    one of them), which ``oriented_columns`` makes positive."""
    if vectors.size == 0:
        return np.ones(vectors.shape[1])
    # argmax(|v|) without an |v| temporary: the first of v's first maximum and first
    # minimum whose magnitude is the largest. From max and min, which reduce any layout
    # in place (argmax copies what is not contiguous along the axis), and positions
    # only where the two magnitudes tie.
    high, low = vectors.max(axis=0), -vectors.min(axis=0)
    negative = low > high
    ties = np.flatnonzero(low == high)
    if len(ties):
        tied = vectors[:, ties]
        negative[ties] = np.argmin(tied, axis=0) < np.argmax(tied, axis=0)
    return np.where(negative, -1.0, 1.0)


def _learned_distance(u, v, components):
    difference = components @ (np.asarray(u) - np.asarray(v))
    return np.sqrt(difference @ difference)


class MahalanobisMixin(AtomicFit, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                       BaseEstimator):
    """Base class of the metric learners: transform, distances and fit plumbing.

    Everything a fitted learner offers derives from ``components_`` (``L``): the
    transform ``X Lᵀ``, the Mahalanobis matrix ``M = LᵀL``, pair distances and a
    metric callable for :class:`~sklearn.neighbors.KNeighborsClassifier`. It has no
    parameters of its own; subclasses set ``_constraint_kind`` to ``"pairs"``,
    ``"targets"``, ``"triplets"`` or ``"quadruplets"`` (the constraint type they
    take), have the parameters that type's ``from_labels`` reads (its
    ``label_parameters``), and fit
    ``components_``, ``n_iter_`` and ``n_features_in_``.

    Fitting is all-or-nothing (``AtomicFit``): after a failed or interrupted ``fit``
    the learner keeps its previous model. Learners compute in float64; ``transform``
    returns float32 for float32 input.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned linear map ``L``; set by the subclass's ``fit``.

    n_iter_ : int
        Iterations (cycles, passes or bases) of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from psdmetric import LogDet, MahalanobisMixin
    >>> X, y = load_iris(return_X_y=True)
    >>> learner = LogDet(random_state=0).fit(X, y)
    >>> isinstance(learner, MahalanobisMixin)
    True
    >>> L, M = learner.components_, learner.get_mahalanobis_matrix()
    >>> bool(np.allclose(M, L.T @ L))
    True
    >>> bool(np.allclose(learner.transform(X[:2]), X[:2] @ L.T))
    True
    """

    _constraint_kind = "pairs"
    # The spread and magnitude of X the learner fits exactly (see check_scale).
    _scale_limits = SCALE_LIMITS

    def transform(self, X):
        """Map ``X`` into the learned space, ``X Lᵀ``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to transform.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            Euclidean distances between rows of ``X_new`` are the learned distances;
            float32 for float32 ``X`` (computed in float64), float64 otherwise.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        return (X.astype(np.float64, copy=False) @ self.components_.T).astype(X.dtype,
                                                                              copy=False)

    def get_mahalanobis_matrix(self):
        """Return the learned PSD matrix ``M = LᵀL`` of shape (n_features, n_features).

        Returns
        -------
        M : ndarray of shape (n_features, n_features)
        """
        check_is_fitted(self)
        return self.components_.T @ self.components_

    def pair_distance(self, pairs, *, squared=False):
        """Learned distance between the two points of each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features)
            The pairs, given by their points.
        squared : bool, default=False
            Return squared distances ``(x − x')ᵀ M (x − x')``.

        Returns
        -------
        distances : ndarray of shape (n_pairs,)
        """
        pairs = self._check_pairs(pairs)
        embedded = (pairs[:, 0] - pairs[:, 1]) @ self.components_.T
        squared_distances = np.einsum("ij,ij->i", embedded, embedded)
        return squared_distances if squared else np.sqrt(squared_distances)

    def get_metric(self):
        """Return the learned distance as a picklable callable ``metric(u, v)``.

        Usable as ``KNeighborsClassifier(metric=learner.get_metric())``; for speed,
        prefer a pipeline with :meth:`transform` and the Euclidean metric.

        Returns
        -------
        metric : callable
        """
        check_is_fitted(self)
        return partial(_learned_distance, components=self.components_.copy())

    def _check_pairs(self, pairs):
        check_is_fitted(self)
        pairs = check_array(pairs, allow_nd=True, ensure_2d=False, input_name="pairs")
        if pairs.ndim != 3 or pairs.shape[1] != 2 or pairs.shape[2] != self.n_features_in_:
            raise ValueError(
                f"pairs must have shape (n_pairs, 2, {self.n_features_in_}); "
                f"got {pairs.shape}."
            )
        return pairs

    def _validate_fit(self, X, y, constraints, random_state, reset=True, chunk=False):
        """Validate ``fit`` input; return ``X`` and constraints of the learner's kind.

        Class labels ``y`` are turned into constraints here, through the generators
        of :mod:`psdmetric._core._sampling`, so every learner reads labels the same way.
        ``reset=False`` (later ``partial_fit`` calls) checks X against the features
        seen first. ``chunk=True`` (``partial_fit``) accepts labels of a single class,
        which a chunk of a stream may hold; a whole training set may not.
        """
        # None: a learner of class labels only (kind "classes", e.g. LFDA).
        expected = _CONSTRAINT_TYPES.get(self._constraint_kind)
        name = type(self).__name__
        # Pairs or triplets of points given as samples, or index pairs with pair labels
        # (metric-learn's layouts) would otherwise fail obscurely or fit the wrong data.
        warn_if_out_of_core(X, name)
        given = np.asarray(X) if isinstance(X, (list, tuple)) else X
        shape, dtype = getattr(given, "shape", ()), getattr(given, "dtype", None)
        kind = {2: "pairs", 3: "triplets", 4: "quadruplets"}.get(
            shape[1] if len(shape) == 3 else 0)
        if kind is not None:
            fits_kind = kind == self._constraint_kind.replace("targets", "pairs")
            raise ValueError(
                f"{name}.fit takes samples X of shape (n_samples, n_features); got shape "
                f"{shape}, which looks like {kind} of points. Learn from them with "
                f"{kind.capitalize()}Classifier({name + '()' if fits_kind else 'learner'})."
            )
        if constraints is None:
            if y is None:
                raise ValueError(
                    f"{name} requires y to be passed, but the target y is None. "
                    "Pass class labels y" + ("." if expected is None else
                                             f", or constraints={expected.__name__}(...).")
                )
            X, y = validate_data(self, X, y, ensure_min_samples=2, reset=reset,
                                 dtype=np.float64)
            check_scale(X, name, self._scale_limits)
            if not chunk:
                check_informative(X, name)
            check_classification_targets(y)
            if not chunk and len(np.unique(y)) < 2:
                raise ValueError(
                    f"{name} needs at least two classes in y to learn a metric from labels; "
                    f"got the single class {y[0]!r}. Pass constraints= for other side "
                    "information."
                )
            pair_labels = set(np.unique(y).tolist()) == {-1, 1}
            if getattr(dtype, "kind", "f") in "iu" and X.shape[1] == 2 and pair_labels:
                warnings.warn(
                    f"{name} is fitted on X as 2-feature samples with class labels y, but "
                    "integer X with two columns and labels ±1 look like index pairs with "
                    "pair labels. If they are, call fit(points, constraints="
                    "PairConstraints(X, y)) or PairsClassifier(learner, "
                    "preprocessor=points).fit(X, y).",
                    UserWarning,
                )
            return X, self._constraints_from_labels(X, y, random_state)
        # Explicit constraints win over y, which a Pipeline passes to every step.
        if not isinstance(constraints, expected):
            raise TypeError(
                f"{name} takes constraints={expected.__name__}(...); "
                f"got {type(constraints).__name__}."
            )
        X = validate_data(self, X, ensure_min_samples=2, reset=reset, dtype=np.float64)
        check_scale(X, name, self._scale_limits)
        check_indices(constraints, X.shape[0])
        if not chunk:
            check_informative(X, name, constraints)
        return X, constraints

    def _constraints_from_labels(self, X, y, random_state):
        kind = _CONSTRAINT_TYPES[self._constraint_kind]
        options = {name: getattr(self, name) for name in kind.label_parameters}
        return kind.from_labels(X, y, random_state=random_state, **options)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class PairClassifierMixin:
    """Similar / dissimilar predictions for pairs, from a learned metric and threshold.

    For learners that fit a threshold ``threshold_`` on squared distances (POLA): a
    pair is predicted similar (+1) when its squared learned distance is at most the
    threshold, dissimilar (-1) otherwise. ``pairs`` has shape (n_pairs, 2, n_features), as in
    ``pair_distance``.

    The methods carry a ``pair_`` prefix on purpose: scikit-learn's estimator checks
    call ``predict(X)``, ``decision_function(X)`` and ``score(X, y)`` with per-sample
    2-D ``X`` on any estimator that has them, so pair methods under those names would break
    scikit-learn compatibility (and pipelines that score per sample).
    """

    def pair_decision_function(self, pairs):
        """Signed margin of each pair, ``threshold_ − d²(x, x')``: positive if similar.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features)
            The pairs, given by their points.

        Returns
        -------
        scores : ndarray of shape (n_pairs,)
        """
        check_is_fitted(self)
        return self.threshold_ - self.pair_distance(pairs, squared=True)

    def pair_predict(self, pairs):
        """Predict +1 (similar) or -1 (dissimilar) for each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features)
            The pairs, given by their points.

        Returns
        -------
        labels : ndarray of shape (n_pairs,)
        """
        return np.where(self.pair_decision_function(pairs) >= 0, 1, -1)

    def pair_score(self, pairs, y=None):
        """Accuracy of :meth:`pair_predict` against pair labels ``y`` in {+1, -1}.

        As scikit-learn's ``score(X, y)``; metric-learn's ``pair_score(pairs)`` (a
        similarity) is ``-pair_distance(pairs)`` here, and a call without ``y`` says so.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features)
            The pairs, given by their points.
        y : array-like of shape (n_pairs,)
            True labels: +1 similar, -1 dissimilar.

        Returns
        -------
        score : float
        """
        if y is None:
            raise TypeError(
                "pair_score(pairs, y) is the accuracy of pair_predict against the pair "
                "labels y, which are missing. For metric-learn's pair_score(pairs), a "
                "similarity, use -pair_distance(pairs)."
            )
        y = np.asarray(y)
        predictions = self.pair_predict(pairs)
        if y.shape != predictions.shape:
            raise ValueError(
                f"y must have one label per pair, shape {predictions.shape}; "
                f"got {y.shape}."
            )
        if not np.all((y == 1) | (y == -1)):
            raise ValueError("y must hold pair labels +1 (similar) or -1 (dissimilar).")
        return float(np.mean(predictions == y))
