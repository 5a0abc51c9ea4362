"""Constraints: the one place where class labels become pairs, targets or triplets.

Users who already have side information pass one of the three constraint types to
``fit(X, constraints=...)``; learners that start from labels call the generators below.
Every index refers to a row of the ``X`` given to ``fit``.
"""

from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

__all__ = [
    "DistanceTargets",
    "PairConstraints",
    "TripletConstraints",
    "distance_targets_from_labels",
    "pairs_from_labels",
    "squared_distance_bounds",
    "triplets_from_labels",
]

# Pairs used to estimate distance percentiles: enough for ±0.5 percentile accuracy.
_MAX_BOUND_PAIRS = 20_000
_BOUND_CHUNK = 2_048


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
        return triplets_from_labels(X, y, n_neighbors, max_triplets, random_state)


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
    indices = constraints.triplets if isinstance(constraints, TripletConstraints) else (
        constraints.pairs
    )
    if indices.max() >= n_samples:
        raise ValueError(
            f"constraints refer to row {indices.max()}, but X has only {n_samples} rows."
        )


def _encode_labels(y):
    classes, codes = np.unique(y, return_inverse=True)
    return codes.ravel(), len(classes)


def _found_pairs(neighbours, n_samples):
    """Unique pairs of each sample (row) with its neighbours, -1 entries left out."""
    origins = np.repeat(np.arange(len(neighbours)), neighbours.shape[1])
    found = neighbours.ravel() >= 0
    return _unique_pairs(origins[found], neighbours.ravel()[found], n_samples)


def _unique_pairs(first, second, n_samples):
    """Drop self-pairs and repeated unordered pairs, keeping the first draw of each."""
    keep = first != second
    first, second = first[keep], second[keep]
    low, high = np.minimum(first, second), np.maximum(first, second)
    _, index = np.unique(low * n_samples + high, return_index=True)
    index.sort()
    return first[index], second[index]


def pairs_from_labels(y, n_constraints=None, random_state=None, *, X=None, n_neighbors=None):
    """Similar and dissimilar pairs from class labels: random, or each sample's neighbours.

    Random (the default, as in ITML): half the pairs join two samples of one class
    (label +1), half join samples of different classes (label -1). Self-pairs and
    repeated pairs are dropped, so fewer pairs come back when the data hold fewer
    distinct pairs.

    Neighbours (``n_neighbors=k``, as LMNN's target neighbours and impostors): every
    sample is paired with its ``k`` nearest samples of its own class (+1) and its ``k``
    nearest samples of other classes (-1), Euclidean in ``X``; repeated pairs are
    dropped. A sample whose class has ``k`` samples or fewer is paired with all the
    others of its class (with none when it is alone in it), so that a small class
    neither fails the draw nor lowers ``k`` for the other classes. These local
    constraints ask the metric to fix the neighbourhoods a k-NN classifier uses rather
    than all distances. No n×n array is formed either way.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels.
    n_constraints : int, default=None
        Number of random pairs; ``None`` means ``40 * n_classes**2`` as in ITML. Must be
        ``None`` with ``n_neighbors``.
    random_state : int, RandomState instance or None
        Seed for the random draw.
    X : array-like of shape (n_samples, n_features), default=None
        The samples; required with ``n_neighbors``.
    n_neighbors : int, default=None
        Neighbours per sample and side (fewer in small classes, see above);
        ``None`` draws random pairs.

    Returns
    -------
    PairConstraints

    Examples
    --------
    >>> from psdmetric import pairs_from_labels
    >>> c = pairs_from_labels([0, 0, 1, 1, 1], n_constraints=4, random_state=0)
    >>> sorted(c.labels.tolist())
    [-1, -1, 1, 1]
    >>> X = [[0.0], [1.0], [5.0], [7.0]]
    >>> pairs_from_labels([0, 0, 1, 1], X=X, n_neighbors=1).pairs
    array([[0, 1],
           [2, 3],
           [0, 2],
           [1, 2],
           [3, 1]])
    """
    codes, n_classes = _encode_labels(np.asarray(y))
    if n_neighbors is not None:
        if n_constraints is not None:
            raise ValueError(
                "Pass n_constraints (random pairs) or n_neighbors (neighbour pairs), "
                "not both; set n_neighbors=None to draw n_constraints random pairs."
            )
        if X is None:
            raise ValueError("Neighbour pairs (n_neighbors) need the samples X.")
        if n_classes < 2:
            raise ValueError("Neighbour pairs need at least two classes in y.")
        X = np.asarray(X, dtype=np.float64)
        same, other = _nearest_neighbours(X, codes, n_classes, int(n_neighbors))
        similar = _found_pairs(same, len(codes))
        dissimilar = _found_pairs(other, len(codes))
        pairs = np.concatenate([np.column_stack(similar), np.column_stack(dissimilar)])
        labels = np.concatenate([np.ones(len(similar[0])), -np.ones(len(dissimilar[0]))])
        return PairConstraints(pairs, labels)
    n_samples = len(codes)
    if n_constraints is None:
        n_constraints = 40 * n_classes**2
    if not isinstance(n_constraints, Integral) or n_constraints < 1:
        raise ValueError(f"n_constraints must be a positive integer; got {n_constraints!r}.")
    rng = check_random_state(random_state)
    counts = np.bincount(codes, minlength=n_classes)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])

    n_similar = n_constraints - n_constraints // 2
    n_dissimilar = n_constraints // 2
    similar = _draw(rng, n_similar, n_samples, lambda size: _similar_draw(
        rng, size, codes, counts, order, starts))
    dissimilar = _draw(rng, n_dissimilar, n_samples, lambda size: _dissimilar_draw(
        rng, size, codes, counts))
    pairs = np.concatenate([np.column_stack(similar), np.column_stack(dissimilar)])
    labels = np.concatenate([np.ones(len(similar[0])), -np.ones(len(dissimilar[0]))])
    if len(pairs) == 0:
        raise ValueError("No pair of distinct samples can be formed from these labels.")
    shuffle = rng.permutation(len(pairs))
    return PairConstraints(pairs[shuffle], labels[shuffle])


def _draw(rng, wanted, n_samples, sampler):
    """Oversample, deduplicate and keep ``wanted`` unique pairs (fewer if they run out)."""
    empty = (np.empty(0, np.intp), np.empty(0, np.intp))
    if wanted == 0:
        return empty
    first, second = empty
    size = 2 * wanted + 16
    for _ in range(8):
        new_first, new_second = sampler(size)
        first, second = _unique_pairs(
            np.concatenate([first, new_first]), np.concatenate([second, new_second]), n_samples
        )
        if len(first) >= wanted:
            break
        size *= 2
    return first[:wanted], second[:wanted]


def _similar_draw(rng, size, codes, counts, order, starts):
    eligible = counts[codes] >= 2
    if not eligible.any():
        return np.empty(0, np.intp), np.empty(0, np.intp)
    first = rng.choice(np.flatnonzero(eligible), size=size)
    cls = codes[first]
    # Pick a random member of the same class other than `first` by position.
    offsets = rng.randint(0, counts[cls] - 1)
    second = order[starts[cls] + offsets]
    second = np.where(second == first, order[starts[cls] + counts[cls] - 1], second)
    return first, second


def _dissimilar_draw(rng, size, codes, counts):
    n_samples = len(codes)
    eligible = counts[codes] < n_samples
    if not eligible.any():
        return np.empty(0, np.intp), np.empty(0, np.intp)
    first = rng.choice(np.flatnonzero(eligible), size=size)
    second = rng.randint(0, n_samples, size=size)
    keep = codes[first] != codes[second]
    return first[keep], second[keep]


def squared_distance_bounds(X, percentiles=(5, 95), random_state=None):
    """Percentiles of the positive squared Euclidean distances between rows of ``X``.

    Uses all pairs when there are at most 20,000 of them and a random sample of
    20,000 pairs otherwise (the standard error of an estimated 5th percentile is then
    0.15 percentile points), so the cost is linear in the number of samples.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    percentiles : tuple of two floats, default=(5, 95)
    random_state : int, RandomState instance or None

    Returns
    -------
    bounds : ndarray of shape (2,)
        ``(u, l)``; ``(0, 0)`` when all rows coincide.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import squared_distance_bounds
    >>> squared_distance_bounds(np.array([[0.0], [1.0], [3.0]]), (0, 100))
    array([1., 9.])
    """
    X = np.asarray(X, dtype=np.float64)
    n_samples = X.shape[0]
    n_pairs = n_samples * (n_samples - 1) // 2
    if n_pairs <= _MAX_BOUND_PAIRS:
        first, second = np.triu_indices(n_samples, k=1)
    else:
        rng = check_random_state(random_state)
        first = rng.randint(0, n_samples, size=_MAX_BOUND_PAIRS)
        second = rng.randint(0, n_samples, size=_MAX_BOUND_PAIRS)
    squared = np.empty(len(first))
    # Reused chunk buffers bound the memory at any d and keep the gathers in cache.
    difference = np.empty((min(_BOUND_CHUNK, len(first)), X.shape[1]))
    other = np.empty_like(difference)
    for start in range(0, len(first), _BOUND_CHUNK):
        stop = min(start + _BOUND_CHUNK, len(first))
        rows = slice(0, stop - start)
        np.take(X, first[start:stop], axis=0, out=difference[rows], mode="clip")
        np.take(X, second[start:stop], axis=0, out=other[rows], mode="clip")
        np.subtract(difference[rows], other[rows], out=difference[rows])
        squared[start:stop] = np.einsum("ij,ij->i", difference[rows], difference[rows])
    squared = squared[squared > 0]
    if len(squared) == 0:
        return np.zeros(2)
    return np.percentile(squared, percentiles)


def distance_targets_from_labels(X, y, n_constraints=None, random_state=None, *,
                                 n_neighbors=None):
    """Pairs from labels with target squared distances for the regression learners.

    The pairs are those of :func:`pairs_from_labels` (random, or neighbours with
    ``n_neighbors``). Same-class pairs get the 5th percentile of the squared distances
    as an upper bound, different-class pairs the 95th as a lower bound (the ITML
    bounds): the targets carry the pairs' labels, so a pair already within its bound
    has no loss.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples whose squared distances set the targets (and, with
        ``n_neighbors``, the neighbours).
    y : array-like of shape (n_samples,)
        Class labels.
    n_constraints : int, default=None
        Number of random pairs; ``None`` means ``40 * n_classes**2``. Must be ``None``
        with ``n_neighbors``.
    random_state : int, RandomState instance or None
        Seed for the pairs and for the sample of pairs the percentiles are read from.
    n_neighbors : int, default=None
        Neighbours per sample and side (see :func:`pairs_from_labels`); ``None`` draws
        random pairs.

    Returns
    -------
    DistanceTargets

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import distance_targets_from_labels
    >>> X = np.array([[0.0], [0.1], [3.0], [3.2]])
    >>> t = distance_targets_from_labels(X, [0, 0, 1, 1], n_constraints=2, random_state=0)
    >>> len(t.distances)
    2
    """
    rng = check_random_state(random_state)
    pairs = pairs_from_labels(y, n_constraints, rng, X=X, n_neighbors=n_neighbors)
    u, lower = squared_distance_bounds(X, random_state=rng)
    return DistanceTargets(pairs.pairs, np.where(pairs.labels == 1, u, lower), pairs.labels)


def triplets_from_labels(X, y, n_neighbors=1, max_triplets=None, random_state=None):
    """Triplets from each sample's target neighbours and impostors, in the manner of LMNN.

    For every sample ``i`` its ``n_neighbors`` nearest samples of its own class are its
    targets ``j``; its impostors ``k`` are its ``n_neighbors`` nearest samples of the
    other classes (those that come closest to violating the margin) together with
    every other-class sample among its ``3 · n_neighbors`` nearest that is no farther
    than its farthest target (those that violate it). Every target is paired with
    every impostor, giving triplets ``(i, j, k)`` (Weinberger & Saul's target
    neighbours and impostors, Shen, Welsh & Wang (2008) §6 for ``n_neighbors = 1``
    and no violators). With ``max_triplets``, the samples take turns: each keeps its
    triplets with its nearest impostors first, so none is left without triplets.
    Neighbours are found per class with a tree or brute-force search: no n×n matrix.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples; neighbours are Euclidean in ``X``.
    y : array-like of shape (n_samples,)
        Class labels. A sample whose class has ``n_neighbors`` samples or fewer takes
        the others of its class as targets (and has no triplets when it is alone).
    n_neighbors : int, default=1
        Target neighbours per sample, and nearest other-class samples always taken
        as impostors.
    max_triplets : int, default=None
        Keep this many triplets, taken in turns over the samples (nearest impostors
        first, the order between samples at random); ``None`` keeps all.
    random_state : int, RandomState instance or None
        Seed for the subset.

    Returns
    -------
    TripletConstraints

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import triplets_from_labels
    >>> X = np.array([[0.0], [1.0], [5.0], [7.0]])
    >>> triplets_from_labels(X, [0, 0, 1, 1]).triplets
    array([[0, 1, 2],
           [1, 0, 2],
           [2, 3, 1],
           [3, 2, 1]])

    Sample 2 (class 1) has its target 4 at distance 2; the class-0 samples 3, 1 and 0
    are no farther: all three are its impostors.

    >>> X = np.array([[0.0], [1.0], [2.0], [2.5], [4.0], [5.0]])
    >>> triplets_from_labels(X, [0, 0, 1, 0, 1, 1]).triplets[2:5]
    array([[2, 4, 3],
           [2, 4, 1],
           [2, 4, 0]])
    """
    codes, n_classes = _encode_labels(np.asarray(y))
    if n_classes < 2:
        raise ValueError("Triplets need at least two classes in y.")
    X = np.asarray(X, dtype=np.float64)
    k = int(n_neighbors)
    targets = _nearest_neighbours(X, codes, n_classes, k)[0]
    n_targets = np.count_nonzero(targets >= 0, axis=1)
    farthest = targets[np.arange(len(codes)), np.maximum(n_targets - 1, 0)]
    radius = np.where(n_targets > 0, np.linalg.norm(X - X[farthest], axis=1), 0.0)
    candidates, distances = _nearest_other_class(X, codes, n_classes, 3 * k)
    is_impostor = np.arange(candidates.shape[1]) < k
    is_impostor = (is_impostor | (distances <= radius[:, None])) & np.isfinite(distances)
    origins, columns = np.nonzero(is_impostor)
    triplets = np.column_stack([
        np.repeat(origins, k), targets[origins].ravel(),
        np.repeat(candidates[origins, columns], k),
    ])
    # Samples of small classes have fewer than k targets (-1 columns).
    triplets = triplets[triplets[:, 1] >= 0]
    if max_triplets is not None and max_triplets < len(triplets):
        # Round robin over the samples, each one's nearest impostors first, so that no
        # sample loses all its triplets; ties between samples are drawn at random.
        rng = check_random_state(random_state)
        starts = np.searchsorted(triplets[:, 0], triplets[:, 0])
        turn = np.arange(len(triplets)) - starts
        keep = np.lexsort((rng.permutation(len(triplets)), turn))[:max_triplets]
        triplets = triplets[np.sort(keep)]
    return TripletConstraints(triplets)


def _nearest_other_class(X, codes, n_classes, k):
    """Each sample's ``k`` (at most) nearest other-class samples and their distances.

    Columns beyond the number of other-class samples of a class get distance ``inf``.
    """
    candidates = np.zeros((len(codes), k), dtype=np.intp)
    distances = np.full((len(codes), k), np.inf)
    for c in range(n_classes):
        members = np.flatnonzero(codes == c)
        rest = np.flatnonzero(codes != c)
        n_found = min(k, len(rest))
        nearest = NearestNeighbors(n_neighbors=n_found).fit(X[rest])
        found, index = nearest.kneighbors(X[members])
        candidates[members, :n_found] = rest[index]
        distances[members, :n_found] = found
    return candidates, distances


def _nearest_neighbours(X, codes, n_classes, k):
    """Each sample's ``k`` nearest same-class and ``k`` nearest other-class samples.

    Rows are samples, nearest first; where a class has ``k`` samples or fewer, or fewer
    than ``k`` samples lie outside it, the missing columns hold -1. Neighbours are
    found per class with a tree or brute-force search: no n×n matrix.
    """
    if k < 1:
        raise ValueError(f"n_neighbors={k} must be at least 1.")
    if np.bincount(codes).max() < 2:
        raise ValueError("Neighbours from labels need a class with two samples or more; "
                         "no two samples of y share a label.")
    same = np.full((len(codes), k), -1, dtype=np.intp)
    other = np.full((len(codes), k), -1, dtype=np.intp)
    for c in range(n_classes):
        members = np.flatnonzero(codes == c)
        rest = np.flatnonzero(codes != c)
        n_same, n_other = min(k, len(members) - 1), min(k, len(rest))
        if n_same > 0:
            # The nearest same-class neighbour of a member is itself: ask for one more.
            nearest = NearestNeighbors(n_neighbors=n_same + 1).fit(X[members])
            index = nearest.kneighbors(X[members], return_distance=False)
            is_self = index == np.arange(len(members))[:, None]
            keep = np.argsort(is_self, axis=1, kind="stable")[:, :n_same]
            same[members, :n_same] = members[np.take_along_axis(index, keep, axis=1)]
        if n_other > 0:
            nearest = NearestNeighbors(n_neighbors=n_other).fit(X[rest])
            found = nearest.kneighbors(X[members], return_distance=False)
            other[members, :n_other] = rest[found]
    return same, other
