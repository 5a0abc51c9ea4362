"""What the tuple meta-estimators share: validating tuples of points, fitting the learner.

A tuple (a pair, a triplet) is one sample, so cross-validation splits tuples, not the
points they join. The wrapped learner is fitted on the distinct points of the training
tuples with explicit constraints over them.
"""

import warnings

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_array
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core import AtomicFit


def _unique_points(points, index):
    """The distinct points the tuples refer to, and the tuples as indices into them.

    Points are numbered in order of first appearance in the tuples, so the learner sees
    the same data whether the tuples came as points or as indices into a preprocessor.
    """
    rows, inverse = np.unique(index.ravel(), return_inverse=True)
    values, value_inverse = np.unique(points[rows], axis=0, return_inverse=True)
    entry = value_inverse.ravel()[inverse.ravel()]
    _, first_seen = np.unique(entry, return_index=True)
    order = np.argsort(first_seen)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], rank[entry].reshape(index.shape)


def _fit_on_classes(learner, X, links, tuple_name):
    """A clone of ``learner`` fitted with the connected components of ``links`` as classes.

    Points joined by a chain of similar links share a class; any other point is a class
    of its own.
    """
    graph = coo_matrix((np.ones(len(links)), (links[:, 0], links[:, 1])), shape=(len(X),) * 2)
    fitted = clone(learner).fit(X, connected_components(graph, directed=False)[1])
    if not hasattr(fitted, "components_"):
        raise TypeError(
            f"learner must be a psdmetric metric learner or a linear transformer with "
            f"components_ after fit(X, y) (e.g. NeighborhoodComponentsAnalysis), to learn "
            f"from {tuple_name}; {type(learner).__name__} has no components_."
        )
    return fitted


class _TupleEstimator(AtomicFit, BaseEstimator):
    """Input handling shared by the pair and triplet meta-estimators; fits are all-or-nothing."""

    _tuple_size = 2
    _tuple_name = "pairs"

    _parameter_constraints: dict = {
        "learner": [HasMethods(["fit", "transform"])],
        "preprocessor": ["array-like", None],
    }

    def __init__(self, learner, *, preprocessor=None):
        self.learner = learner
        self.preprocessor = preprocessor

    def _validate_tuples(self, X, y=None, *, reset):
        """Return ``(points, index, y)``: tuple ``i`` joins ``points[index[i]]``."""
        width, name = self._tuple_size, self._tuple_name
        if self.preprocessor is not None:
            points = check_array(self.preprocessor, input_name="preprocessor")
            kwargs = {"dtype": None}
        else:
            points, kwargs = None, {}
            if (np.ndim(X) if isinstance(X, (list, tuple)) else getattr(X, "ndim", 2)) == 3:
                X = check_array(X, allow_nd=True, input_name="X")
                if X.shape[1] != width:
                    hint = {2: " For pairs use PairsClassifier.",
                            3: " For triplets use TripletsClassifier.",
                            4: " For quadruplets use QuadrupletsClassifier."}
                    hint = hint.get(X.shape[1], "")
                    raise ValueError(
                        f"{name} must have shape (n_{name}, {width}, n_features); got "
                        f"{X.shape}.{hint}"
                    )
                X = X.reshape(len(X), -1)
        if y is None:
            X = validate_data(self, X, reset=reset, **kwargs)
        else:
            X, y = validate_data(self, X, y, reset=reset, **kwargs)
        if points is not None:
            if X.shape[1] != width or X.dtype.kind not in "iuf" or np.any(X != np.round(X)):
                raise ValueError(
                    f"With a preprocessor, X holds {name} as integer row indices into "
                    f"it, shape (n_{name}, {width}); got shape {X.shape}, dtype {X.dtype}."
                )
            index = X.astype(np.intp)
            if index.min() < 0 or index.max() >= len(points):
                raise ValueError(
                    f"X refers to row {index.max() if index.min() >= 0 else index.min()} "
                    f"of the preprocessor, which has {len(points)} rows."
                )
            return points, index, y
        if X.shape[1] % width:
            # scikit-learn's checks pass any 2-D array, so pad, but never silently.
            warnings.warn(
                f"X has {X.shape[1]} columns, not a multiple of {width}: flattened {name} "
                f"have {width} * n_features columns. Each row is read with "
                f"{width - X.shape[1] % width} zero(s) appended; pass {name} of shape "
                f"(n_{name}, {width}, n_features) to have their shape checked.",
                UserWarning,
            )
            X = np.pad(X, ((0, 0), (0, width - X.shape[1] % width)))
        points = X.reshape(-1, X.shape[1] // width)
        return points, np.arange(len(points)).reshape(-1, width), y

    def _fit_learner(self, points, index, make_constraints, similar=None):
        """Fit a clone of the learner on the distinct points of the training tuples.

        A learner wrapped in :class:`sklearn.frozen.FrozenEstimator` is used as fitted.
        A learner of class labels (``fit(X, y)`` and ``components_``: scikit-learn's
        ``NeighborhoodComponentsAnalysis``, LFDA) is fitted on classes made of the
        similar links: the pairs where ``similar`` holds, or each triplet's first two
        points.
        """
        kind = getattr(self.learner, "_constraint_kind", "classes")
        if kind == "classes" and self._tuple_size < 4:
            X, local = _unique_points(points, index)
            links = local[:, :2] if similar is None else local[similar]
            self.learner_ = _fit_on_classes(self.learner, X, links, self._tuple_name)
            return self
        if kind == "regression":
            raise TypeError(f"{type(self.learner).__name__} learns from continuous targets, "
                            f"which {self._tuple_name} do not have.")
        self._check_learner_kind()
        X, local = _unique_points(points, index)
        self.learner_ = clone(self.learner).fit(X, None, constraints=make_constraints(X, local))
        return self

    def _embedded(self, points, index):
        """The learned embedding of every point of every tuple, shape (n, width, r)."""
        if self.preprocessor is None:
            embedding = self.learner_.transform(points)
            return embedding.reshape(*index.shape, -1)
        rows, inverse = np.unique(index.ravel(), return_inverse=True)
        return self.learner_.transform(points[rows])[inverse.ravel()].reshape(*index.shape, -1)

    def _check_learner_kind(self):
        kind = getattr(self.learner, "_constraint_kind", None)
        if kind in {2: ("pairs", "targets"), 3: ("triplets",),
                    4: ("quadruplets",)}[self._tuple_size]:
            return
        other = {"pairs": "PairsClassifier", "targets": "PairsClassifier",
                 "triplets": "TripletsClassifier",
                 "quadruplets": "QuadrupletsClassifier"}.get(kind)
        if kind == "labels":
            raise TypeError(
                f"{type(self.learner).__name__} chooses its parameters by k-NN accuracy on "
                f"class labels, which {self._tuple_name} do not have. Search the learner's "
                f"parameters on the {self._tuple_name} instead: GridSearchCV("
                f"{type(self).__name__}(LogDet()), {{'learner__gamma': [0.01, 0.1, 1.0]}})."
            )
        if other is None:
            raise TypeError(
                f"learner must be a psdmetric metric learner (LogDet, VonNeumann, ...); "
                f"got {type(self.learner).__name__}."
            )
        raise TypeError(
            f"{type(self.learner).__name__} learns from {kind}; wrap it in {other}, not "
            f"{type(self).__name__}."
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True
        return tags


class _BaseOrderClassifier(_TupleEstimator):
    """Tuples that order two pairs of their points: the first pair is the closer one.

    Subclasses name the two pairs by their positions in a tuple, ``_closer`` and
    ``_farther`` (a triplet ``(a, b, c)``: ``(0, 1)`` and ``(0, 2)``), and supply ``fit``.
    """

    _closer = (0, 1)
    _farther = (0, 2)

    def decision_function(self, X):
        """Learned distance of the farther pair minus that of the closer pair.

        Positive when the learned metric keeps the tuple's order.

        Parameters
        ----------
        X : array-like of shape (n_tuples, tuple_size, n_features) or \
                (n_tuples, tuple_size * n_features)
            The tuples (triplets ``(a, b, c)``: ``a`` closer to ``b`` than to ``c``;
            quadruplets ``(a, b, c, d)``: ``(a, b)`` closer than ``(c, d)``); with a
            ``preprocessor``, shape (n_tuples, tuple_size) of row indices.

        Returns
        -------
        scores : ndarray of shape (n_tuples,)
        """
        check_is_fitted(self)
        points, index, _ = self._validate_tuples(X, reset=False)
        embedded = self._embedded(points, index)
        closer = np.linalg.norm(embedded[:, self._closer[0]] - embedded[:, self._closer[1]],
                                axis=1)
        farther = np.linalg.norm(
            embedded[:, self._farther[0]] - embedded[:, self._farther[1]], axis=1)
        return farther - closer

    def predict(self, X):
        """+1 when the first pair is the closer one in the learned metric, else -1.

        Parameters
        ----------
        X : array-like of shape (n_tuples, tuple_size, n_features) or \
                (n_tuples, tuple_size * n_features)
            The tuples; with a ``preprocessor``, shape (n_tuples, tuple_size) of row
            indices.

        Returns
        -------
        labels : ndarray of shape (n_tuples,)
        """
        return np.where(self.decision_function(X) > 0, 1, -1)

    def score(self, X, y=None):
        """Fraction of tuples whose order the learned metric keeps.

        Parameters
        ----------
        X : array-like of shape (n_tuples, tuple_size, n_features) or \
                (n_tuples, tuple_size * n_features)
            Tuples whose first pair is truly the closer one; with a ``preprocessor``,
            shape (n_tuples, tuple_size) of row indices.

        y : None
            Ignored.

        Returns
        -------
        score : float
        """
        return float(np.mean(self.predict(X) == 1))
