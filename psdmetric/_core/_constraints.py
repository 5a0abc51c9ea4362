"""The constraint types: pairs, distance targets, triplets and quadruplets on rows of ``X``.

Users who already have side information pass one of them to ``fit(X, constraints=...)``;
learners that start from labels get them from each type's ``from_labels``, which draws
them with the samplers of :mod:`psdmetric._core._sampling`. Every index refers to a row
of the ``X`` given to ``fit``.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["DistanceTargets", "PairConstraints", "QuadrupletConstraints", "TripletConstraints"]


@dataclass(frozen=True)
class PairConstraints:
    """Pairs of samples labelled similar (+1) or dissimilar (-1).

    A similar pair asks ``d²(i, j) <= u``, a dissimilar pair ``d²(i, j) >= l``, with
    ``d²`` the squared learned distance.

    Parameters
    ----------
    pairs : array-like of shape (n_pairs, 2)
        Row indices into ``X``.
    labels : array-like of shape (n_pairs,)
        +1 for similar, -1 for dissimilar.
    bounds : array-like of shape (n_pairs,), default=None
        One squared-distance bound per pair (upper for similar, lower for dissimilar
        pairs). ``None`` lets the learner apply its ``bounds=(u, l)`` to all pairs (by
        default the 5th and 95th percentiles of the squared distances).

    Attributes
    ----------
    pairs : ndarray of shape (n_pairs, 2)
        The validated row indices, as integers.
    labels : ndarray of shape (n_pairs,)
        The labels as integers, +1 or -1.
    bounds : ndarray of shape (n_pairs,) or None
        The validated per-pair bounds, as floats, or ``None``.

    Notes
    -----
    A pair listed twice with the same label is two (redundant) constraints; a pair
    labelled both similar and dissimilar raises ``ValueError``. Pairs of identical
    points carry no information and are skipped by the learners.

    Examples
    --------
    >>> from psdmetric import PairConstraints
    >>> c = PairConstraints([[0, 1], [0, 2]], [1, -1])
    >>> c.labels
    array([ 1, -1])
    """

    pairs: np.ndarray
    labels: np.ndarray
    bounds: object = None

    def __post_init__(self):
        object.__setattr__(self, "pairs", _as_index_array(self.pairs, 2, "pairs"))
        labels = _as_float_vector(self.labels, len(self.pairs), "labels")
        if not np.all((labels == 1) | (labels == -1)):
            raise ValueError("PairConstraints labels must be +1 (similar) or -1 (dissimilar).")
        object.__setattr__(self, "labels", labels.astype(np.intp))
        _reject_contradictions(self.pairs, self.labels)
        if self.bounds is not None:
            bounds = _as_float_vector(self.bounds, len(self.pairs), "bounds")
            if not np.all(np.isfinite(bounds) & (bounds > 0)):
                raise ValueError("PairConstraints bounds must be finite and positive.")
            object.__setattr__(self, "bounds", bounds)

    # The learner parameters ``from_labels`` reads (a learner fitted on labels has them).
    label_parameters = ("n_constraints", "n_neighbors")

    @classmethod
    def from_labels(cls, X, y, *, n_constraints=None, n_neighbors=None, random_state=None):
        """Pairs drawn from class labels, as :func:`pairs_from_labels` draws them.

        Returns
        -------
        constraints : PairConstraints
        """
        # Imported here: the samplers build constraint types, so they import this module.
        from ._sampling import pairs_from_labels

        return pairs_from_labels(y, n_constraints, random_state, X=X, n_neighbors=n_neighbors)


@dataclass(frozen=True)
class DistanceTargets:
    """Pairs of samples with a target squared distance each (online regression).

    Parameters
    ----------
    pairs : array-like of shape (n_pairs, 2)
        Row indices into ``X``.
    distances : array-like of shape (n_pairs,)
        Target squared distances, finite and non-negative.
    labels : array-like of shape (n_pairs,), default=None
        Makes each target a bound: +1 (similar pair) asks ``d² <= target``, -1
        (dissimilar pair) ``d² >= target``, and a pair within its bound has no loss.
        ``None`` asks every squared distance to equal its target.

    Attributes
    ----------
    pairs : ndarray of shape (n_pairs, 2)
        The validated row indices, as integers.
    distances : ndarray of shape (n_pairs,)
        The targets, as floats.
    labels : ndarray of shape (n_pairs,) or None
        The labels as integers, +1 or -1, or ``None``.

    Examples
    --------
    >>> from psdmetric import DistanceTargets
    >>> DistanceTargets([[0, 1]], [0.5]).distances
    array([0.5])
    """

    pairs: np.ndarray
    distances: np.ndarray
    labels: object = None

    def __post_init__(self):
        object.__setattr__(self, "pairs", _as_index_array(self.pairs, 2, "pairs"))
        distances = _as_float_vector(self.distances, len(self.pairs), "distances")
        if not np.all(np.isfinite(distances) & (distances >= 0)):
            raise ValueError("DistanceTargets distances must be finite and non-negative.")
        object.__setattr__(self, "distances", distances)
        if self.labels is not None:
            labels = _as_float_vector(self.labels, len(self.pairs), "labels")
            if not np.all((labels == 1) | (labels == -1)):
                raise ValueError("DistanceTargets labels must be +1 (at most the target) "
                                 "or -1 (at least the target).")
            object.__setattr__(self, "labels", labels.astype(np.intp))

    # The learner parameters ``from_labels`` reads (a learner fitted on labels has them).
    label_parameters = ("n_constraints", "n_neighbors")

    @classmethod
    def from_labels(cls, X, y, *, n_constraints=None, n_neighbors=None, random_state=None):
        """Pairs with targets drawn from class labels, see :func:`distance_targets_from_labels`.

        Returns
        -------
        constraints : DistanceTargets
        """
        # Imported here: the samplers build constraint types, so they import this module.
        from ._sampling import distance_targets_from_labels

        return distance_targets_from_labels(X, y, n_constraints, random_state,
                                            n_neighbors=n_neighbors)


@dataclass(frozen=True)
class TripletConstraints:
    """Triplets ``(i, j, k)`` asking that ``i`` be closer to ``j`` than to ``k``.

    Parameters
    ----------
    triplets : array-like of shape (n_triplets, 3)
        Row indices into ``X``: a sample, one similar to it, one dissimilar to it.

    Attributes
    ----------
    triplets : ndarray of shape (n_triplets, 3)
        The validated row indices, as integers.

    Examples
    --------
    >>> from psdmetric import TripletConstraints
    >>> TripletConstraints([[0, 1, 2]]).triplets.shape
    (1, 3)
    """

    triplets: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "triplets", _as_index_array(self.triplets, 3, "triplets"))

    # The learner parameters ``from_labels`` reads (a learner fitted on labels has them).
    label_parameters = ("n_neighbors", "max_triplets")

    @classmethod
    def from_labels(cls, X, y, *, n_neighbors=1, max_triplets=None, random_state=None):
        """Triplets drawn from class labels, as :func:`triplets_from_labels` draws them.

        Returns
        -------
        constraints : TripletConstraints
        """
        # Imported here: the samplers build constraint types, so they import this module.
        from ._sampling import triplets_from_labels

        return triplets_from_labels(X, y, n_neighbors, max_triplets, random_state)


@dataclass(frozen=True)
class QuadrupletConstraints:
    """Quadruplets ``(a, b, c, d)`` asking that ``d(a, b) < d(c, d)``.

    Relative comparisons of two pairs (Liu, Gao, Mu, Li & Yan (2012)): the pair
    ``(a, b)`` is more alike than the pair ``(c, d)``.

    Parameters
    ----------
    quadruplets : array-like of shape (n_quadruplets, 4)
        Row indices into ``X``: the closer pair ``(a, b)``, then the farther ``(c, d)``.

    Attributes
    ----------
    quadruplets : ndarray of shape (n_quadruplets, 4)
        The validated row indices, as integers.

    Notes
    -----
    A quadruplet whose two pairs are the same unordered pair asks ``d < d``, which no
    metric meets: it raises ``ValueError``.

    Examples
    --------
    >>> from psdmetric import QuadrupletConstraints
    >>> QuadrupletConstraints([[0, 1, 0, 2]]).quadruplets.shape
    (1, 4)
    """

    quadruplets: np.ndarray

    def __post_init__(self):
        quadruplets = _as_index_array(self.quadruplets, 4, "quadruplets")
        first, second = np.sort(quadruplets[:, :2], axis=1), np.sort(quadruplets[:, 2:], axis=1)
        same = np.all(first == second, axis=1)
        if same.any():
            row = int(np.flatnonzero(same)[0])
            raise ValueError(
                f"QuadrupletConstraints: row {row}, {quadruplets[row].tolist()}, compares "
                "a pair with itself (d(a, b) < d(a, b) cannot hold); remove it."
            )
        object.__setattr__(self, "quadruplets", quadruplets)

    # The learner parameters ``from_labels`` reads (a learner fitted on labels has them).
    label_parameters = ("n_constraints",)

    @classmethod
    def from_labels(cls, X, y, *, n_constraints=None, random_state=None):
        """Quadruplets (same-class pair, different-class pair) drawn from class labels.

        The pairs are drawn as :func:`pairs_from_labels` draws random pairs; the i-th
        similar pair is compared with the i-th dissimilar pair.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (unused: the draw reads only the labels).
        y : array-like of shape (n_samples,)
            Class labels.
        n_constraints : int, default=None
            Number of quadruplets; ``None`` means ``20 * n_classes**2`` (metric-learn's
            LSML_Supervised). Fewer come back when the data hold fewer distinct pairs.
        random_state : int, RandomState instance or None
            Seed for the draw.

        Returns
        -------
        constraints : QuadrupletConstraints
        """
        # Imported here: the samplers build constraint types, so they import this module.
        from ._sampling import pairs_from_labels

        if n_constraints is None:
            n_constraints = 20 * len(np.unique(y)) ** 2
        pairs = pairs_from_labels(y, 2 * n_constraints, random_state)
        similar = pairs.pairs[pairs.labels == 1]
        dissimilar = pairs.pairs[pairs.labels == -1]
        count = min(len(similar), len(dissimilar), n_constraints)
        if count == 0:
            raise ValueError("Quadruplets need a same-class pair and a different-class "
                             "pair; y has no class with two samples.")
        return cls(np.hstack([similar[:count], dissimilar[:count]]))


def _reject_contradictions(pairs, labels):
    """Raise if one unordered pair is labelled both similar and dissimilar."""
    low, high = np.sort(pairs, axis=1).T
    key = low.astype(np.int64) * (int(high.max()) + 1) + high
    order = np.argsort(key, kind="stable")
    same_pair = key[order][1:] == key[order][:-1]
    clash = same_pair & (labels[order][1:] != labels[order][:-1])
    if clash.any():
        i, j = pairs[order][1:][clash][0]
        raise ValueError(
            f"PairConstraints: pair ({i}, {j}) is labelled both similar and dissimilar; "
            "remove one of the two labels."
        )


def _as_index_array(values, width, name):
    try:
        array = np.asarray(values)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{name} must be an array of shape (n, {width}): {exc}") from exc
    if array.ndim != 2 or array.shape[1] != width or array.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty array of shape (n, {width}) of row indices; "
            f"got shape {array.shape}."
        )
    if array.dtype.kind not in "iu":
        # Floats are accepted when they are exact integers (below 2**53).
        if array.dtype.kind == "f" and np.all(np.abs(array) < 2.0**53) and np.all(
            array == np.round(array)
        ):
            array = array.astype(np.intp)
        else:
            raise TypeError(f"{name} must hold integer row indices; got dtype {array.dtype}.")
    if np.any(array < 0):
        raise ValueError(f"{name} must hold non-negative row indices.")
    return np.ascontiguousarray(array, dtype=np.intp)


def _as_float_vector(values, length, name):
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from exc
    array = np.atleast_1d(array)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {array.shape}.")
    if length is not None and len(array) != length:
        raise ValueError(f"{name} has {len(array)} entries but there are {length} pairs.")
    if np.any(np.isnan(array)):
        raise ValueError(f"{name} contains NaN.")
    return array


def check_bounds(bounds):
    """Validate user bounds ``(u, l)``: finite, positive and ``u < l``."""
    bounds = _as_float_vector(bounds, 2, "bounds")
    u, lower = bounds
    if not (np.isfinite(u) and np.isfinite(lower) and 0 < u < lower):
        raise ValueError(
            f"bounds=(u, l) must satisfy 0 < u < l (squared distances); got ({u}, {lower})."
        )
    return bounds


def check_indices(constraints, n_samples):
    """Raise if any index of ``constraints`` is not a row of an ``n_samples``-row X."""
    indices = next(getattr(constraints, name) for name in ("triplets", "quadruplets", "pairs")
                   if hasattr(constraints, name))
    if indices.max() >= n_samples:
        raise ValueError(
            f"constraints refer to row {indices.max()}, but X has only {n_samples} rows."
        )
