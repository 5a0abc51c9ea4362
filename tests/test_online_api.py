"""The online API shared by Burg, POLA (and MEG): chunks, resets, dask-ml's Incremental."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from psdmetric import (
    MEG,
    POLA,
    BurgRegressor,
    DistanceTargets,
    KernelPOLA,
    OnlineLogDet,
    PairConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
)

ONLINE_METRIC_LEARNERS = [POLA, KernelPOLA, OnlineLogDet]
ids = [learner.__name__ for learner in ONLINE_METRIC_LEARNERS]


def labelled_data(n_samples=300, n_features=4, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n_samples)
    X = (rng.randn(3, n_features)[y] + rng.randn(n_samples, n_features)) / 3
    return X, y


def chunk_constraints(Learner, n_rows, seed):
    """Random explicit constraints of the learner's kind over the rows of one chunk."""
    rng = np.random.RandomState(seed)
    pairs = rng.randint(0, n_rows, (60, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    if Learner._constraint_kind == "targets":
        return DistanceTargets(pairs, rng.uniform(0.1, 2.0, len(pairs)))
    labels = np.where(rng.rand(len(pairs)) < 0.5, 1, -1)
    low, high = np.sort(pairs, axis=1).T
    # One label per unordered pair, as PairConstraints requires.
    _, first = np.unique(low * n_rows + high, return_index=True)
    return PairConstraints(pairs[np.sort(first)], labels[np.sort(first)])


def concatenate(constraints, offsets):
    pairs = np.concatenate([c.pairs + offset for c, offset in zip(constraints, offsets)])
    if isinstance(constraints[0], DistanceTargets):
        return DistanceTargets(pairs, np.concatenate([c.distances for c in constraints]))
    return PairConstraints(pairs, np.concatenate([c.labels for c in constraints]))


def learned(model):
    if isinstance(model, BurgRegressor):
        return model.coef_
    return model.get_mahalanobis_matrix()


@pytest.mark.parametrize("Learner", ONLINE_METRIC_LEARNERS, ids=ids)
def test_explicit_constraint_chunks_equal_one_pass(Learner):
    X, _ = labelled_data(seed=1)
    # A fixed scale keeps OnlineLogDet from reading it off the first chunk.
    params = {"scale": 4.0} if Learner is OnlineLogDet else {"gamma": 0.5}
    if Learner in (POLA, KernelPOLA):  # A₁ = 0: the identity reads its scale off chunk 1
        params["init"] = "zero"
    chunks = [chunk_constraints(Learner, 100, seed) for seed in range(3)]
    online = Learner(**params)
    for start, constraints in zip(range(0, 300, 100), chunks):
        online.partial_fit(X[start:start + 100], constraints=constraints)
    # One partial_fit on all of them: fit's one pass would return, for OnlineLogDet,
    # the mean of the pass's iterates rather than its last one.
    one_pass = Learner(**params).partial_fit(X, constraints=concatenate(chunks, [0, 100, 200]))
    expected = learned(one_pass)
    assert_allclose(learned(online), expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    assert online.n_iter_ == 3


@pytest.mark.parametrize("Learner", ONLINE_METRIC_LEARNERS, ids=ids)
def test_labelled_chunks_form_their_pairs_within_the_chunk(Learner):
    """partial_fit(X, y) = partial_fit(X, constraints=<generator>(y)) on the same seed."""
    X, y = labelled_data(seed=2)
    from_labels = Learner(random_state=0)
    explicit = Learner(random_state=0)
    rng = np.random.RandomState(0)
    for start in range(0, 300, 100):
        rows = slice(start, start + 100)
        from_labels.partial_fit(X[rows], y[rows])
        n_neighbors = from_labels.n_neighbors
        if Learner._constraint_kind == "targets":
            constraints = distance_targets_from_labels(X[rows], y[rows], None, rng,
                                                       n_neighbors=n_neighbors)
            if Learner is OnlineLogDet:  # it visits its pairs from labels in random order
                order = rng.permutation(len(constraints.pairs))
                constraints = DistanceTargets(constraints.pairs[order],
                                              constraints.distances[order],
                                              constraints.labels[order])
        else:
            constraints = pairs_from_labels(y[rows], None, rng, X=X[rows],
                                            n_neighbors=n_neighbors)
        explicit.partial_fit(X[rows], constraints=constraints)
    assert_allclose(learned(from_labels), learned(explicit), rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("Learner", [MEG, OnlineLogDet], ids=["MEG", "OnlineLogDet"])
@pytest.mark.parametrize("tol", [0.1, 0.01])
def test_fit_stops_when_a_pass_lowers_the_loss_by_at_most_tol(Learner, tol):
    """fit's passes are partial_fit's; it stops after pass k once
    loss[k-1] − loss[k] ≤ tol·loss[k-1]."""
    X, y = labelled_data(seed=4)
    constraints = distance_targets_from_labels(X, y, None, np.random.RandomState(0))
    by_passes, losses = Learner(), []
    for _ in range(40):
        before = getattr(by_passes, "cumulative_loss_", 0.0)
        by_passes.partial_fit(X, constraints=constraints)
        losses.append(by_passes.cumulative_loss_ - before)
    expected = 1 + next(k for k in range(1, 40) if losses[k - 1] - losses[k] <= tol * losses[k - 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = Learner(max_iter=40, tol=tol).fit(X, constraints=constraints)
    assert model.n_iter_ == expected > 1
    assert model.cumulative_loss_ == pytest.approx(sum(losses[:expected]), rel=1e-12)


@pytest.mark.parametrize("Learner", ONLINE_METRIC_LEARNERS, ids=ids)
def test_fit_resets_and_partial_fit_continues(Learner):
    X, y = labelled_data(seed=3)
    model = Learner(random_state=0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = learned(model.fit(X, y)).copy()
        model.partial_fit(X, y)
        assert model.n_iter_ == 3
        assert not np.allclose(learned(model), first)
        assert_allclose(learned(model.fit(X, y)), first, rtol=1e-12, atol=1e-300)
    assert model.n_iter_ == 2


@pytest.mark.parametrize("Learner", [*ONLINE_METRIC_LEARNERS, BurgRegressor],
                         ids=[*ids, "BurgRegressor"])
def test_partial_fit_rejects_a_chunk_with_other_features(Learner):
    X, y = labelled_data()
    model = Learner().partial_fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[100:200, :3], y[100:200])


@pytest.mark.parametrize("Learner", ONLINE_METRIC_LEARNERS, ids=ids)
def test_chunk_constraints_must_index_the_chunk(Learner):
    X, _ = labelled_data()
    constraints = chunk_constraints(Learner, 100, seed=4)
    with pytest.raises(ValueError, match="X has only 50 rows"):
        Learner().partial_fit(X[:50], constraints=constraints)


def knn_accuracy(estimator, X, y):
    """Leave-one-out 1-NN accuracy in the learned space.

    Incremental insists on a scorer, and the metric learners have no ``score(X, y)``.
    """
    from sklearn.neighbors import KNeighborsClassifier

    embedded = estimator.transform(np.asarray(X))
    neighbours = KNeighborsClassifier(2).fit(embedded, y).kneighbors(return_distance=False)
    return float(np.mean(np.asarray(y)[neighbours[:, 0]] == np.asarray(y)))


@pytest.mark.parametrize("Learner", [POLA, OnlineLogDet], ids=["POLA", "OnlineLogDet"])
def test_dask_ml_incremental_equals_partial_fit_chunk_by_chunk(Learner):
    da = pytest.importorskip("dask.array")
    wrappers = pytest.importorskip("dask_ml.wrappers")
    X, y = labelled_data(seed=5)
    X_dask = da.from_array(X, chunks=(100, 4))
    y_dask = da.from_array(y, chunks=100)
    incremental = wrappers.Incremental(Learner(random_state=0), scoring=knn_accuracy,
                                       shuffle_blocks=False)
    incremental.fit(X_dask, y_dask)
    by_hand = Learner(random_state=0)
    for start in range(0, 300, 100):
        by_hand.partial_fit(X[start:start + 100], y[start:start + 100])
    assert np.array_equal(learned(incremental.estimator_), learned(by_hand))
    assert incremental.estimator_.n_iter_ == 3


def test_dask_ml_incremental_on_a_distributed_cluster():
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    wrappers = pytest.importorskip("dask_ml.wrappers")
    rng = np.random.RandomState(6)
    X = np.abs(rng.randn(400, 5))
    y = X @ rng.uniform(0, 1, 5)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                            dashboard_address=None):
        incremental = wrappers.Incremental(BurgRegressor(eta=2.0), shuffle_blocks=False)
        incremental.fit(da.from_array(X, chunks=(100, 5)), da.from_array(y, chunks=100))
    by_hand = BurgRegressor(eta=2.0)
    for start in range(0, 400, 100):
        by_hand.partial_fit(X[start:start + 100], y[start:start + 100])
    assert np.array_equal(incremental.estimator_.coef_, by_hand.coef_)
    assert incremental.estimator_.n_iter_ == 4


# Per learner: the data's scale and the tolerance of M across the axes' span.
@pytest.mark.parametrize("Estimator, scale, across", [(MEG, 1.0, 1e-12),
                                                      (OnlineLogDet, 1.0, 1e-10),
                                                      (POLA, 0.25, 1e-12)],
                         ids=["MEG", "OnlineLogDet", "POLA"])
def test_principal_axes_path_is_the_learner_on_the_projected_data(Estimator, scale, across):
    # 30 features, 6 axes: the same fit as on all features of X @ axes (the leading
    # eigenvectors of the centred scatter, dense LAPACK), and M is 0 across their span.
    rng = np.random.RandomState(7)
    X = rng.randn(80, 30) * np.linspace(3, 0.1, 30) * scale
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    model = Estimator(n_components=6, random_state=0).fit(X, y)
    centred = X - X.mean(axis=0)
    vectors = np.linalg.eigh(centred.T @ centred)[1]
    axes = vectors[:, ::-1][:, :6]
    # Each axis up to its sign: compare through the projector, then fit on X @ axes.
    assert_allclose(model._axes @ model._axes.T, axes @ axes.T, atol=1e-10)
    reference = Estimator(n_components=None, random_state=0).fit(X @ model._axes, y)
    assert model.n_iter_ == reference.n_iter_
    assert model.components_.shape == (6, 30)
    assert_allclose(model.components_, reference.components_ @ model._axes.T,
                    rtol=0, atol=1e-13 * np.abs(reference.components_).max())
    if hasattr(reference, "threshold_"):
        assert model.threshold_ == reference.threshold_
    M = model.get_mahalanobis_matrix()
    assert np.linalg.norm(M @ vectors[:, :24]) < across * np.linalg.norm(M)
    # "auto" learns on every feature of these 30 (its cap is 100 or 300 of them).
    auto = Estimator(random_state=0).fit(X, y)
    every = Estimator(n_components=None, random_state=0).fit(X, y)
    assert np.array_equal(auto.components_, every.components_)
