"""The one place where class labels become constraints: pairs, targets or triplets.

Each constraint type's ``from_labels`` calls the sampler of its kind here, so every
learner reads labels the same way. Nothing here builds an n×n distance matrix: bounds
come from a sample of pairs, neighbours from per-class nearest-neighbour queries.
"""

from numbers import Integral

import numpy as np
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from ._constraints import DistanceTargets, PairConstraints, TripletConstraints
from ._threads import threadpool_controller

# Pairs used to estimate distance percentiles: enough for ±0.5 percentile accuracy.
_MAX_BOUND_PAIRS = 20_000
_BOUND_CHUNK = 2_048


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
    # Distinct pairs the labels hold: once all are drawn, more draws add none.
    within = int(np.sum(counts * (counts - 1) // 2))
    similar = _draw(rng, n_similar, n_samples, lambda size: _similar_draw(
        rng, size, codes, counts, order, starts), within)
    dissimilar = _draw(rng, n_dissimilar, n_samples, lambda size: _dissimilar_draw(
        rng, size, codes, counts), n_samples * (n_samples - 1) // 2 - within)
    pairs = np.concatenate([np.column_stack(similar), np.column_stack(dissimilar)])
    labels = np.concatenate([np.ones(len(similar[0])), -np.ones(len(dissimilar[0]))])
    if len(pairs) == 0:
        raise ValueError("No pair of distinct samples can be formed from these labels.")
    shuffle = rng.permutation(len(pairs))
    return PairConstraints(pairs[shuffle], labels[shuffle])


def _draw(rng, wanted, n_samples, sampler, available):
    """Oversample, deduplicate and keep ``wanted`` unique pairs (fewer if they run out:
    the draws stop once all ``available`` distinct pairs are found)."""
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
        if len(first) >= min(wanted, available):
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

    Distances at the rounding level of the largest one (squared distance below machine
    epsilon times the largest) count as zero: they are duplicates up to noise, and a
    bound among them would ask for a metric beyond float64's precision.

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
    squared = squared[squared > np.finfo(np.float64).eps * squared.max(initial=0.0)]
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


# Queries × points up to which neighbours are found by a direct NumPy computation (its
# q×p×d differences capped at 32 MiB): on the small chunks of a stream, scikit-learn's
# search costs its validation and thread start-up (ms per call) for microseconds of work.
_DIRECT_SEARCH_SIZE = 256
_DIRECT_SEARCH_ENTRIES = 2**22


def _k_nearest(points, queries, k):
    """Distances to and indices of the ``k`` nearest rows of ``points``, per query row.

    A direct computation for small blocks, scikit-learn's search otherwise; both order
    neighbours by distance.
    """
    size = len(queries) * len(points)
    if size <= _DIRECT_SEARCH_SIZE and size * points.shape[1] <= _DIRECT_SEARCH_ENTRIES:
        difference = queries[:, None, :] - points[None, :, :]
        distances = np.sqrt(np.einsum("qpd,qpd->qp", difference, difference))
        index = np.argsort(distances, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(distances, index, axis=1), index
    with _one_openmp_thread():
        return NearestNeighbors(n_neighbors=k).fit(points).kneighbors(queries)


def _one_openmp_thread():
    """A context for the per-class neighbour queries: one OpenMP thread.

    scikit-learn's brute-force search starts its OpenMP threads on every call; with one
    call per class, on a loaded machine they spin for more CPU than the search itself
    (26 classes of 1,600 × 16: 2.9–6.2 s CPU against 0.13 s on one thread).
    """
    return threadpool_controller().limit(limits=1, user_api="openmp")


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
        found, index = _k_nearest(X[rest], X[members], n_found)
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
            # A member's nearest same-class neighbour is itself: ask for one more.
            index = _k_nearest(X[members], X[members], n_same + 1)[1]
            is_self = index == np.arange(len(members))[:, None]
            keep = np.argsort(is_self, axis=1, kind="stable")[:, :n_same]
            same[members, :n_same] = members[np.take_along_axis(index, keep, axis=1)]
        if n_other > 0:
            found = _k_nearest(X[rest], X[members], n_other)[1]
            other[members, :n_other] = rest[found]
    return same, other
