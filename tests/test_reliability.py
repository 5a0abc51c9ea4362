"""Reliability over every exported estimator: bad input, numerical extremes, process.

Each estimator is exercised through the constraint kind it learns from, so a learner
added to ``psdmetric.__all__`` is enrolled here without editing this file.
"""

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from psdmetric import DistanceTargets, PairConstraints, TripletConstraints
from test_common import ESTIMATORS

METRIC_LEARNERS = [
    estimator for estimator in ESTIMATORS if hasattr(estimator, "get_mahalanobis_matrix")
]


def quiet(estimator, X, y=None, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **fit_params)


def blobs(n_samples=40, n_features=3, n_classes=2, scale=1.0, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n_samples) % n_classes
    centers = 3 * rng.randn(n_classes, n_features)
    return scale * (centers[y] + rng.randn(n_samples, n_features)), y


def explicit_constraints(kind, n_samples, rows=None):
    """A small valid constraint set of ``kind`` over ``n_samples`` rows."""
    rows = np.array(rows if rows is not None else [[0, 1, 2], [1, 3, 2], [2, 4, 0], [3, 0, 4]])
    alternating = np.where(np.arange(len(rows)) % 2 == 0, 1, -1)
    if kind == "pairs":
        return PairConstraints(rows[:, :2], alternating)
    if kind == "targets":
        return DistanceTargets(rows[:, :2], np.where(alternating == 1, 0.5, 2.0))
    return TripletConstraints(rows)


def assert_valid_metric(estimator, X):
    M = estimator.get_mahalanobis_matrix()
    assert np.all(np.isfinite(M)), "learned matrix has non-finite entries"
    assert np.allclose(M, M.T, rtol=0, atol=1e-10 * max(np.abs(M).max(), 1e-300))
    eigenvalues = np.linalg.eigvalsh((M + M.T) / 2)
    assert eigenvalues.min() >= -1e-10 * max(np.abs(eigenvalues).max(), 1e-300)
    assert np.all(np.isfinite(estimator.transform(X)))


ids = [estimator.__name__ for estimator in METRIC_LEARNERS]


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
@pytest.mark.parametrize(
    "X, message",
    [
        (np.array([[np.nan, 1.0]] * 6), "NaN"),
        (np.array([[np.inf, 1.0]] * 6), "infinity"),
        (np.empty((0, 3)), "0 sample"),
        (np.ones((1, 3)), "1 sample"),
        (np.empty((6, 0)), "0 feature"),
        (np.array([["a", "b"]] * 6), "could not convert|dtype"),
        (np.ones((6, 2)) + 1j, "Complex data not supported"),
    ],
    ids=["nan", "inf", "no-rows", "one-row", "no-columns", "strings", "complex"],
)
def test_bad_X_is_rejected_naming_the_problem(Estimator, X, message):
    y = np.arange(len(X)) % 2
    with pytest.raises(ValueError, match=message):
        Estimator().fit(X, y)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_sparse_X_gets_a_type_error_naming_the_alternative(Estimator):
    X, y = blobs()
    with pytest.raises(TypeError, match="toarray"):
        Estimator().fit(sparse.csr_matrix(X), y)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_mismatched_lengths_and_continuous_labels(Estimator):
    X, y = blobs()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Estimator().fit(X, y[:-1])
    with pytest.raises(ValueError, match="Unknown label type"):
        Estimator().fit(X, np.linspace(0, 1, len(X)))


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
@pytest.mark.parametrize(
    "labels",
    [
        lambda y: np.array(["cat", "dog"])[y],
        lambda y: y.astype(float),
        lambda y: -3 - y,
        lambda y: __import__("pandas").Series(y).astype("category"),
    ],
    ids=["strings", "floats", "negative", "categorical"],
)
def test_label_encodings_give_the_same_metric(Estimator, labels):
    X, y = blobs(seed=1)
    reference = quiet(Estimator(random_state=0), X, y).get_mahalanobis_matrix()
    learned = quiet(Estimator(random_state=0), X, labels(y)).get_mahalanobis_matrix()
    np.testing.assert_allclose(learned, reference, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_explicit_constraints_are_validated(Estimator):
    X, _ = blobs(n_samples=5)
    kind = Estimator._constraint_kind
    estimator = Estimator()
    with pytest.raises(ValueError, match="X has only 5 rows"):
        estimator.fit(X, constraints=explicit_constraints(kind, 5, [[0, 1, 2], [5, 1, 2]]))
    wrong_type = TripletConstraints([[0, 1, 2]]) if kind != "triplets" else (
        PairConstraints([[0, 1]], [1]))
    with pytest.raises(TypeError, match="constraints="):
        estimator.fit(X, constraints=wrong_type)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_transform_with_other_feature_count_fails(Estimator):
    X, y = blobs()
    estimator = quiet(Estimator(random_state=0), X, y)
    with pytest.raises(ValueError, match="features"):
        estimator.transform(X[:, :2])


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_identical_points_and_duplicate_pairs_give_a_valid_metric(Estimator):
    X, _ = blobs(n_samples=6)
    X[1] = X[0]
    rows = [[0, 1, 2], [2, 3, 4], [0, 1, 2], [3, 4, 5], [0, 1, 3]]
    estimator = quiet(Estimator(random_state=0), X,
                      constraints=explicit_constraints(Estimator._constraint_kind, 6, rows))
    assert_valid_metric(estimator, X)


def test_contradictory_pair_labels_are_rejected():
    with pytest.raises(ValueError, match="both similar and dissimilar"):
        PairConstraints([[0, 1], [1, 0]], [1, -1])


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_extreme_feature_scales(Estimator, scale):
    X, y = blobs(scale=scale, seed=2)
    assert_valid_metric(quiet(Estimator(random_state=0), X, y), X)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_mixed_scales_collinear_features_and_more_features_than_samples(Estimator):
    X, y = blobs(n_samples=12, n_features=4, seed=3)
    X = np.column_stack([X * [1e-8, 1.0, 1e8, 1.0], X[:, 0], 2 * X[:, 1],
                         np.random.RandomState(0).randn(12, 10)])
    assert_valid_metric(quiet(Estimator(random_state=0), X, y), X)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_same_seed_bit_identical_across_thread_counts_and_pickle_clone(Estimator):
    X, y = blobs(n_samples=60, n_features=5, n_classes=3, seed=4)
    with threadpool_limits(1):
        one = quiet(Estimator(random_state=0), X, y)
    with threadpool_limits(2):
        two = quiet(Estimator(random_state=0), X, y)
    assert np.array_equal(one.components_, two.components_)
    restored = pickle.loads(pickle.dumps(one))
    assert np.array_equal(restored.transform(X), one.transform(X))
    refit = quiet(clone(one), X, y)
    assert np.array_equal(refit.components_, one.components_)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_samples=st.integers(4, 20),
    n_features=st.integers(1, 6),
    n_classes=st.integers(2, 3),
    log_scale=st.floats(-100, 100),
    seed=st.integers(0, 2**31 - 1),
)
def test_property_fitted_metric_is_finite_symmetric_psd(
    Estimator, n_samples, n_features, n_classes, log_scale, seed
):
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features) * 10.0**log_scale
    y = rng.randint(0, n_classes, size=n_samples)
    y[:2] = [0, 1]
    y[2] = y[0]
    try:
        estimator = quiet(Estimator(random_state=seed), X, y)
    except ValueError as exc:
        # The only accepted refusal: too few samples per class for triplets.
        assert "n_neighbors" in str(exc), exc
        return
    assert_valid_metric(estimator, X)


def learners_with(parameter):
    chosen = [E for E in METRIC_LEARNERS if parameter in E().get_params()]
    return pytest.mark.parametrize("Estimator", chosen, ids=[E.__name__ for E in chosen])


@learners_with("prior")
@pytest.mark.parametrize(
    "prior, message",
    [
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
        (np.diag([1.0, -1.0]), "positive semi-definite"),
        (np.eye(3), "shape \\(2, 2\\)"),
        (np.array([[np.nan, 0.0], [0.0, 1.0]]), "NaN"),
    ],
    ids=["asymmetric", "indefinite", "wrong-size", "nan"],
)
def test_bad_prior_is_rejected(Estimator, prior, message):
    X, y = blobs(n_features=2)
    with pytest.raises(ValueError, match=message):
        Estimator(prior=prior).fit(X, y)


@learners_with("bounds")
@pytest.mark.parametrize("bounds", [(5.0, 1.0), (2.0, 2.0), (-1.0, 2.0), (0.0, 2.0),
                                    (np.nan, 2.0), (1.0, np.inf)])
def test_bad_bounds_are_rejected(Estimator, bounds):
    X, y = blobs()
    with pytest.raises(ValueError, match="bounds"):
        Estimator(bounds=bounds).fit(X, y)


@learners_with("n_components")
def test_too_many_components_is_rejected(Estimator):
    X, y = blobs(n_features=3)
    with pytest.raises(ValueError, match="n_components"):
        Estimator(n_components=4).fit(X, y)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_single_sample_class_is_accepted(Estimator):
    X, y = blobs(n_samples=21)
    y[-1] = 2  # a class with one member: it only enters dissimilar constraints
    try:
        estimator = quiet(Estimator(random_state=0), X, y)
    except ValueError as exc:
        assert "n_neighbors" in str(exc)  # triplets need a same-class neighbour
        return
    assert_valid_metric(estimator, X)


@learners_with("gamma")
@pytest.mark.parametrize("gamma", [1e-12, np.inf])
def test_extreme_slack_on_infeasible_constraints(Estimator, gamma):
    X, _ = blobs(n_samples=6)
    # Rows 0 and 2 coincide, so (0, 1) similar and (2, 1) dissimilar cannot both
    # hold: slack must absorb the infeasibility without errors.
    X[2] = X[0]
    constraints = explicit_constraints(Estimator._constraint_kind, 6,
                                       [[0, 1, 3], [2, 1, 3], [3, 4, 5], [4, 5, 0]])
    estimator = quiet(Estimator(gamma=gamma, max_iter=200, random_state=0), X,
                      constraints=constraints)
    assert_valid_metric(estimator, X)
