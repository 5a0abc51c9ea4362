"""Constraint generation and validation: labels to pairs, bounds and triplets."""

import tracemalloc

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import cdist, pdist

from psdmetric import (
    DistanceTargets,
    PairConstraints,
    TripletConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    squared_distance_bounds,
    triplets_from_labels,
)


def test_pairs_follow_labels_without_repeats():
    rng = np.random.RandomState(0)
    y = rng.choice(["a", "b", "c"], size=200)
    constraints = pairs_from_labels(y, random_state=0)
    i, j = constraints.pairs.T
    assert len(constraints.pairs) == 40 * 3**2
    assert_array_equal(constraints.labels, np.where(y[i] == y[j], 1, -1))
    assert np.all(i != j)
    unordered = {tuple(sorted(pair)) for pair in constraints.pairs.tolist()}
    assert len(unordered) == len(constraints.pairs)
    assert np.sum(constraints.labels == 1) == np.sum(constraints.labels == -1)


class _CountingState(np.random.RandomState):
    """Counts the draws of ``choice``: one per round of oversampling and deduplication."""

    rounds = 0

    def choice(self, *args, **kwargs):
        self.rounds += 1
        return super().choice(*args, **kwargs)


def test_more_pairs_than_the_labels_hold_gives_each_once_and_stops_drawing():
    y = np.repeat([0, 1, 2], 10)
    rng = _CountingState(0)
    constraints = pairs_from_labels(y, 5000, random_state=rng)
    unordered = {tuple(sorted(pair)) for pair in constraints.pairs.tolist()}
    assert len(unordered) == len(constraints.pairs) == 30 * 29 // 2
    assert np.sum(constraints.labels == 1) == 3 * (10 * 9 // 2)
    # One round per side finds every distinct pair; no further rounds are drawn.
    assert rng.rounds == 2


def test_pairs_are_reproducible_and_depend_on_the_seed():
    y = np.arange(100) % 4
    first = pairs_from_labels(y, 50, random_state=3)
    assert_array_equal(first.pairs, pairs_from_labels(y, 50, random_state=3).pairs)
    assert not np.array_equal(first.pairs, pairs_from_labels(y, 50, random_state=4).pairs)


def test_pairs_stop_at_the_number_of_distinct_pairs():
    y = [0, 0, 1]  # one similar pair, two dissimilar pairs exist
    constraints = pairs_from_labels(y, 100, random_state=0)
    assert sorted(constraints.labels.tolist()) == [-1, -1, 1]


def test_single_class_gives_only_similar_pairs():
    constraints = pairs_from_labels(np.zeros(10), 20, random_state=0)
    assert np.all(constraints.labels == 1)


def test_bounds_are_percentiles_of_positive_squared_distances():
    rng = np.random.RandomState(1)
    X = rng.randn(60, 3)
    X[1] = X[0]  # a zero distance is ignored
    squared = pdist(X, "sqeuclidean")
    expected = np.percentile(squared[squared > 0], [5, 95])
    assert_allclose(squared_distance_bounds(X), expected)


def test_bounds_are_sampled_in_linear_memory_for_large_n():
    rng = np.random.RandomState(2)
    X = rng.randn(20_000, 4)
    tracemalloc.start()
    bounds = squared_distance_bounds(X, random_state=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # An n×n float matrix would take 3.2 GB; the sample takes a few MB.
    assert peak < 50e6
    # Squared distances of standard normals in 4-D are 2·χ²₄: 5th/95th percentiles.
    assert_allclose(bounds, [2 * 0.7107, 2 * 9.4877], rtol=0.05)


def test_distance_targets_from_labels_use_the_bounds():
    rng = np.random.RandomState(3)
    X = rng.randn(50, 2)
    y = np.arange(50) % 2
    targets = distance_targets_from_labels(X, y, 30, random_state=0)
    u, lower = squared_distance_bounds(X, random_state=0)
    same = y[targets.pairs[:, 0]] == y[targets.pairs[:, 1]]
    assert_allclose(targets.distances[same], u)
    assert_allclose(targets.distances[~same], lower)


@pytest.mark.parametrize("n_neighbors", [1, 2])
def test_triplets_are_the_brute_force_targets_and_impostors(n_neighbors):
    rng = np.random.RandomState(4)
    X = rng.randn(40, 3)
    y = rng.randint(0, 3, size=40)
    triplets = triplets_from_labels(X, y, n_neighbors=n_neighbors).triplets
    distances = cdist(X, X)
    expected = []
    n_violators = 0
    for i in range(len(X)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(X)) != i))
        other = np.flatnonzero(y != y[i])
        targets = same[np.argsort(distances[i, same])[:n_neighbors]]
        nearest_other = other[np.argsort(distances[i, other])]
        radius = distances[i, targets].max()
        searched = nearest_other[: 3 * n_neighbors]
        violators = searched[distances[i, searched] <= radius]
        impostors = set(nearest_other[:n_neighbors]) | set(violators)
        n_violators += len(impostors) - n_neighbors
        expected += [(i, j, k) for j in targets for k in impostors]
    assert n_violators > 0, "the data should have impostors beyond the nearest"
    assert sorted(map(tuple, triplets.tolist())) == sorted(expected)


@pytest.mark.parametrize("n_neighbors", [1, 3])
def test_neighbour_pairs_are_the_brute_force_nearest_neighbours(n_neighbors):
    rng = np.random.RandomState(6)
    X = rng.randn(50, 4)
    y = rng.choice(["a", "b", "c"], size=50)
    constraints = pairs_from_labels(y, X=X, n_neighbors=n_neighbors)
    distances = cdist(X, X)
    similar, dissimilar = set(), set()
    for i in range(len(X)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(X)) != i))
        other = np.flatnonzero(y != y[i])
        similar |= {frozenset((i, j)) for j in same[np.argsort(distances[i, same])[:n_neighbors]]}
        dissimilar |= {frozenset((i, k))
                       for k in other[np.argsort(distances[i, other])[:n_neighbors]]}
    got = [frozenset(pair) for pair in constraints.pairs.tolist()]
    assert len(got) == len(set(got))  # each unordered pair once
    assert {p for p, l in zip(got, constraints.labels) if l == 1} == similar
    assert {p for p, l in zip(got, constraints.labels) if l == -1} == dissimilar


def test_neighbour_pairs_reach_every_pair_learner_and_reject_bad_requests():
    from psdmetric import MEG, POLA, DefiniteBoost, KernelPOLA, LogDet, OnlineLogDet, VonNeumann

    rng = np.random.RandomState(7)
    X, y = rng.randn(30, 3), np.arange(30) % 3
    expected = pairs_from_labels(y, X=X, n_neighbors=2)
    for Learner in (LogDet, VonNeumann, DefiniteBoost, POLA, KernelPOLA, MEG, OnlineLogDet):
        learner = Learner(n_neighbors=2, max_iter=1, random_state=0)
        got = learner._constraints_from_labels(X, y, np.random.RandomState(0))
        # OnlineLogDet visits the same pairs in random order.
        assert_array_equal(np.unique(got.pairs, axis=0), np.unique(expected.pairs, axis=0))
    with pytest.raises(ValueError, match="not both"):
        pairs_from_labels(y, n_constraints=10, X=X, n_neighbors=1)
    with pytest.raises(ValueError, match="need the samples X"):
        pairs_from_labels(y, n_neighbors=1)
    with pytest.raises(ValueError, match="need a class with two samples or more"):
        pairs_from_labels(np.arange(4), X=X[:4], n_neighbors=1)
    with pytest.raises(ValueError, match="n_neighbors=0 must be at least 1"):
        pairs_from_labels(y, X=X, n_neighbors=0)


def test_a_small_class_keeps_its_pairs_and_leaves_k_to_the_others():
    rng = np.random.RandomState(8)
    # Classes of 10, 10, 3 and 1 samples, and 5 neighbours asked for.
    X, y = rng.randn(24, 3), np.r_[np.zeros(10), np.ones(10), 2 * np.ones(3), 3]
    constraints = pairs_from_labels(y, X=X, n_neighbors=5)
    distances = cdist(X, X)
    similar, dissimilar = set(), set()
    for i in range(len(X)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(X)) != i))
        other = np.flatnonzero(y != y[i])
        similar |= {frozenset((i, j)) for j in same[np.argsort(distances[i, same])[:5]]}
        dissimilar |= {frozenset((i, k)) for k in other[np.argsort(distances[i, other])[:5]]}
    got = [frozenset(pair) for pair in constraints.pairs.tolist()]
    assert {p for p, l in zip(got, constraints.labels) if l == 1} == similar
    assert {p for p, l in zip(got, constraints.labels) if l == -1} == dissimilar
    # The class of 3 is paired within itself; the sample alone in class 3 only apart.
    assert {frozenset((20, 21)), frozenset((20, 22)), frozenset((21, 22))} <= similar
    assert not any(23 in pair for pair in similar)
    # The large classes keep 5 same-class neighbours per sample, not 2.
    assert all(sum(i in pair for pair in similar) >= 5 for i in range(20))
    from psdmetric import LogDet

    fitted = LogDet(n_neighbors=5, random_state=0).fit(X, y)
    assert_array_equal(fitted.constraints_.pairs, constraints.pairs)
    assert np.all(np.linalg.eigvalsh(fitted.get_mahalanobis_matrix()) > 0)


def test_triplets_of_a_small_class_use_the_targets_it_has():
    rng = np.random.RandomState(9)
    X, y = rng.randn(16, 2), np.r_[np.zeros(7), np.ones(7), 2, 3]
    triplets = triplets_from_labels(X, y, 3).triplets
    distances = cdist(X, X)
    expected = []
    for i in range(len(X)):
        same = np.flatnonzero((y == y[i]) & (np.arange(len(X)) != i))
        targets = same[np.argsort(distances[i, same], kind="stable")[:3]]
        if len(targets) == 0:
            continue
        other = np.flatnonzero(y != y[i])
        nearest_other = other[np.argsort(distances[i, other], kind="stable")]
        radius = distances[i, targets[-1]]
        searched = nearest_other[:9]
        impostors = set(nearest_other[:3]) | set(searched[distances[i, searched] <= radius])
        expected += [(i, j, k) for j in targets for k in impostors]
    # The samples alone in classes 2 and 3 have no target, so no triplet of their own.
    assert not np.isin(triplets[:, 0], [14, 15]).any()
    assert sorted(map(tuple, triplets.tolist())) == sorted(expected)
    from psdmetric import PSDBoost

    fitted = PSDBoost(n_neighbors=3, max_triplets=None, random_state=0).fit(X, y)
    assert sorted(map(tuple, fitted.constraints_.triplets.tolist())) == sorted(expected)
    eigenvalues = np.linalg.eigvalsh(fitted.get_mahalanobis_matrix())
    assert eigenvalues.min() >= -1e-12 and np.isclose(eigenvalues.sum(), 1.0)


def test_triplets_subsample_reproducibly():
    rng = np.random.RandomState(5)
    X, y = rng.randn(60, 2), np.arange(60) % 3
    first = triplets_from_labels(X, y, 2, max_triplets=50, random_state=0).triplets
    assert first.shape == (50, 3)
    assert_array_equal(first, triplets_from_labels(X, y, 2, 50, random_state=0).triplets)


@pytest.mark.parametrize("max_triplets", [60, 150, 200])
def test_subsampled_triplets_spread_over_the_samples_nearest_impostors_first(max_triplets):
    rng = np.random.RandomState(7)
    X, y = rng.randn(60, 2), np.arange(60) % 3
    full = triplets_from_labels(X, y, 2).triplets
    kept = triplets_from_labels(X, y, 2, max_triplets=max_triplets, random_state=1).triplets
    assert len(kept) == max_triplets
    full_counts = np.bincount(full[:, 0], minlength=60)
    kept_counts = np.bincount(kept[:, 0], minlength=60)
    # Round robin: no sample keeps two more than another unless it ran out of triplets.
    assert kept_counts.max() - kept_counts[kept_counts < full_counts].min() <= 1
    for i in range(60):
        # Each sample keeps a prefix of its own triplets (its nearest impostors first).
        assert_array_equal(kept[kept[:, 0] == i], full[full[:, 0] == i][:kept_counts[i]])


def test_triplets_need_two_classes_a_class_of_two_and_a_neighbour():
    X = np.random.RandomState(6).randn(6, 2)
    with pytest.raises(ValueError, match="two classes"):
        triplets_from_labels(X, np.zeros(6))
    with pytest.raises(ValueError, match="need a class with two samples or more"):
        triplets_from_labels(X, np.arange(6))
    with pytest.raises(ValueError, match="n_neighbors=0 must be at least 1"):
        triplets_from_labels(X, [0, 0, 0, 1, 1, 1], n_neighbors=0)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: PairConstraints([[0, 1]], [2]), "must be \\+1"),
        (lambda: PairConstraints([[0, 1, 2]], [1]), "shape \\(n, 2\\)"),
        (lambda: PairConstraints([[0.5, 1]], [1]), "integer row indices"),
        (lambda: PairConstraints([[-1, 1]], [1]), "non-negative"),
        (lambda: PairConstraints([[0, 1]], [1, -1]), "2 entries but there are 1"),
        (lambda: PairConstraints([[0, 1]], [1], bounds=[np.nan]), "NaN"),
        (lambda: PairConstraints([[0, 1]], [1], bounds=[0.0]), "finite and positive"),
        (lambda: DistanceTargets([[0, 1]], [-1.0]), "non-negative"),
        (lambda: TripletConstraints([[0, 1]]), "shape \\(n, 3\\)"),
        (lambda: TripletConstraints(np.empty((0, 3), int)), "non-empty"),
    ],
)
def test_constraint_types_reject_bad_input(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()
