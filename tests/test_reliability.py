"""Reliability over every exported estimator: bad input, numerical extremes, process.

Each estimator is exercised through the constraint kind it learns from, so a learner
added to ``psdmetric.__all__`` is enrolled here without editing this file.
"""

import inspect
import pickle
import re
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_info, threadpool_limits

import psdmetric
from psdmetric import (
    MEG,
    POLA,
    BurgRegressor,
    DistanceTargets,
    KernelPOLA,
    PairConstraints,
    QuadrupletConstraints,
    TripletConstraints,
)
from test_common import ESTIMATORS

METRIC_LEARNERS = [
    estimator for estimator in ESTIMATORS if hasattr(estimator, "get_mahalanobis_matrix")
]


# SCML's default 10,000 stochastic updates cost seconds a fit; these contracts need few.
FAST = {"SCML": {"max_iter": 1000, "output_iter": 100}}


def seeded(Estimator, **params):
    """``Estimator(**params)`` seeded with random_state=0 where it takes one."""
    params = {**FAST.get(Estimator.__name__, {}), **params}
    if "random_state" in Estimator().get_params():
        params.setdefault("random_state", 0)
    else:
        params.pop("random_state", None)  # the closed forms draw nothing
    return Estimator(**params)


# Clear refusals of a problem without a metric: no similar pair (of distinct points: MMC's
# bound; at all: RCA's chunklets), a singular within-chunklet covariance (RCA's inverse),
# one feature or an ill-conditioned C (SDML's graphical lasso), fewer triplets than
# SCML's difference bases need.
ILL_POSED = ("similar pair of distinct points|so its inverse does not exist|"
             "needs at least 2 features|is singular|hold no similar pair|"
             "graphical lasso failed on C|pass more triplets")


def fit_or_refuse(estimator, X, y=None, **fit_params):
    """The fitted estimator, or None after a clear refusal of an ill-posed problem."""
    try:
        return quiet(estimator, X, y, **fit_params)
    except ValueError as exc:
        assert re.search(ILL_POSED, str(exc)), exc
        return None


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
    return triplets_of(kind, rows)


def triplets_of(kind, rows):
    """Triplets ``(i, j, k)``, or as quadruplets ``(i, j, i, k)``: d(i, j) < d(i, k)."""
    rows = np.asarray(rows)
    if kind == "quadruplets":
        return QuadrupletConstraints(rows[:, [0, 1, 0, 2]])
    return TripletConstraints(rows)


def assert_valid_metric(estimator, X):
    M = estimator.get_mahalanobis_matrix()
    assert np.all(np.isfinite(M)), "learned matrix has non-finite entries"
    assert np.allclose(M, M.T, rtol=0, atol=1e-10 * max(np.abs(M).max(), 1e-300))
    eigenvalues = np.linalg.eigvalsh((M + M.T) / 2)
    assert eigenvalues.min() >= -1e-10 * max(np.abs(eigenvalues).max(), 1e-300)
    assert np.all(np.isfinite(estimator.transform(X)))


ids = [estimator.__name__ for estimator in METRIC_LEARNERS]
# Learners of class labels (MLKR's targets are continuous: no label contract applies).
CLASS_LEARNERS = [E for E in METRIC_LEARNERS if E._constraint_kind != "regression"]
class_ids = [estimator.__name__ for estimator in CLASS_LEARNERS]
# Learners that take explicit constraints of a kind explicit_constraints builds (the
# searches and LFDA take class labels only, MLKR targets).
CONSTRAINT_LEARNERS = [
    E for E in METRIC_LEARNERS if "constraints" in inspect.signature(E.fit).parameters
    and E._constraint_kind in ("pairs", "targets", "triplets", "quadruplets")]
constraint_ids = [estimator.__name__ for estimator in CONSTRAINT_LEARNERS]
# Iterative learners whose rounds run through psdmetric's driver: not the closed forms
# (no max_iter), nor SDML, whose max_iter is that of scikit-learn's graphical lasso.
DRIVEN_LEARNERS = [E for E in METRIC_LEARNERS
                   if "max_iter" in E().get_params() and E.__name__ != "SDML"]


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
    if Estimator not in CLASS_LEARNERS:
        return  # continuous targets are what it learns from
    with pytest.raises(ValueError, match="Unknown label type"):
        Estimator().fit(X, np.linspace(0, 1, len(X)))


@pytest.mark.parametrize("Estimator", CLASS_LEARNERS, ids=class_ids)
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
    reference = quiet(seeded(Estimator), X, y).get_mahalanobis_matrix()
    learned = quiet(seeded(Estimator), X, labels(y)).get_mahalanobis_matrix()
    np.testing.assert_allclose(learned, reference, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("Estimator", CONSTRAINT_LEARNERS, ids=constraint_ids)
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
    estimator = quiet(seeded(Estimator), X, y)
    with pytest.raises(ValueError, match="features"):
        estimator.transform(X[:, :2])


@pytest.mark.parametrize("Estimator", CONSTRAINT_LEARNERS, ids=constraint_ids)
def test_identical_points_and_duplicate_pairs_give_a_valid_metric(Estimator):
    X, _ = blobs(n_samples=6)
    X[1] = X[0]
    rows = [[0, 1, 2], [2, 3, 4], [0, 1, 2], [3, 4, 5], [0, 1, 3]]
    estimator = fit_or_refuse(seeded(Estimator), X,
                              constraints=explicit_constraints(Estimator._constraint_kind, 6,
                                                               rows))
    if estimator is not None:
        assert_valid_metric(estimator, X)


def test_contradictory_pair_labels_are_rejected():
    with pytest.raises(ValueError, match="both similar and dissimilar"):
        PairConstraints([[0, 1], [1, 0]], [1, -1])


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_extreme_feature_scales(Estimator, scale):
    X, y = blobs(scale=scale, seed=2)
    if np.abs(X).max() > Estimator._scale_limits[1]:
        # Beyond what its arithmetic fits exactly (MEG's exponentials): a clear refusal.
        with pytest.raises(ValueError, match="Rescale X so that"):
            seeded(Estimator).fit(X, y)
        return
    assert_valid_metric(quiet(seeded(Estimator), X, y), X)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_mixed_scales_collinear_features_and_more_features_than_samples(Estimator):
    X, y = blobs(n_samples=12, n_features=4, seed=3)
    X = np.column_stack([X * [1e-8, 1.0, 1e8, 1.0], X[:, 0], 2 * X[:, 1],
                         np.random.RandomState(0).randn(12, 10)])
    estimator = fit_or_refuse(seeded(Estimator), X, y)
    if estimator is not None:
        assert_valid_metric(estimator, X)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=ids)
def test_same_seed_bit_identical_across_thread_counts_and_pickle_clone(Estimator):
    X, y = blobs(n_samples=60, n_features=5, n_classes=3, seed=4)
    with threadpool_limits(1):
        one = quiet(seeded(Estimator), X, y)
    with threadpool_limits(2):
        two = quiet(seeded(Estimator), X, y)
    assert np.array_equal(one.components_, two.components_)
    restored = pickle.loads(pickle.dumps(one))
    assert np.array_equal(restored.transform(X), one.transform(X))
    refit = quiet(clone(one), X, y)
    assert np.array_equal(refit.components_, one.components_)


@pytest.mark.parametrize("Estimator", DRIVEN_LEARNERS,
                         ids=[E.__name__ for E in DRIVEN_LEARNERS])
def test_fit_iterates_with_one_blas_thread(Estimator, monkeypatch):
    # Two threads cost more than they save on a learner's small products.
    threads = []

    def recording(iterate):
        def recorded(*args, **kwargs):
            threads.append(max(library["num_threads"] for library in threadpool_info()
                               if library["user_api"] == "blas"))
            return iterate(*args, **kwargs)
        return recorded

    for module in {psdmetric._core._cyclic, psdmetric._online._base, psdmetric._boost._psdboost,
                   psdmetric._bregman._definite_boost, sys.modules[Estimator.__module__]}:
        if hasattr(module, "iterate"):  # the learner's own module, when it runs the driver
            monkeypatch.setattr(module, "iterate", recording(module.iterate))
    X, y = blobs(n_samples=60, n_features=5, n_classes=3, seed=4)
    with threadpool_limits(2):
        quiet(seeded(Estimator), X, y)
    assert threads and set(threads) == {1}


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
        estimator = quiet(seeded(Estimator, random_state=seed), X, y)
    except ValueError as exc:
        # The only accepted refusals: too few samples per class for triplets, (the
        # searches) for the folds of the inner cross-validation, or a scale beyond the
        # learner's arithmetic, or an ill-posed problem (ILL_POSED).
        assert "n_neighbors" in str(exc) or "Rescale X so that" in str(exc) or (
            Estimator._constraint_kind == "labels" and "n_splits" in str(exc)) or re.search(
            ILL_POSED, str(exc)), exc
        return
    assert_valid_metric(estimator, X)


def learners_with(*parameters):
    chosen = [E for E in METRIC_LEARNERS if set(parameters) <= set(E().get_params())]
    return pytest.mark.parametrize("Estimator", chosen, ids=[E.__name__ for E in chosen])


@learners_with("prior")
@pytest.mark.parametrize(
    "prior, message",
    [
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "symmetric"),
        (np.diag([1.0, -1.0]), "positive[- ](semi-)?definite"),
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
    estimator = quiet(seeded(Estimator), X, y)
    assert_valid_metric(estimator, X)


# gamma as the slack of bounds (SCML's gamma is a learning rate).
@learners_with("gamma", "bounds")
@pytest.mark.parametrize("gamma", [1e-12, np.inf])
def test_extreme_slack_on_infeasible_constraints(Estimator, gamma):
    X, _ = blobs(n_samples=6)
    # Rows 0 and 2 coincide, so (0, 1) similar and (2, 1) dissimilar cannot both
    # hold: slack must absorb the infeasibility without errors.
    X[2] = X[0]
    constraints = explicit_constraints(Estimator._constraint_kind, 6,
                                       [[0, 1, 3], [2, 1, 3], [3, 4, 5], [4, 5, 0]])
    estimator = quiet(seeded(Estimator, gamma=gamma, max_iter=200), X,
                      constraints=constraints)
    assert_valid_metric(estimator, X)


@pytest.mark.parametrize("Estimator", CLASS_LEARNERS, ids=class_ids)
def test_one_class_in_fit_is_an_error_naming_y(Estimator):
    X, _ = blobs(n_samples=30)
    with pytest.raises(ValueError, match="at least two classes in y"):
        seeded(Estimator).fit(X, np.zeros(30, dtype=int))


@pytest.mark.parametrize("Estimator", [E for E in METRIC_LEARNERS if hasattr(E, "partial_fit")])
def test_one_class_chunk_in_partial_fit_keeps_a_valid_metric(Estimator):
    X, _ = blobs(n_samples=30)
    # Random pairs: neighbour pairs need two classes in every chunk.
    params = {"n_neighbors": None} if "n_neighbors" in Estimator().get_params() else {}
    estimator = seeded(Estimator, **params).partial_fit(X, np.arange(30) % 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.partial_fit(X, np.zeros(30, dtype=int))
    assert_valid_metric(estimator, X)


@pytest.mark.parametrize("Estimator", ESTIMATORS, ids=[E.__name__ for E in ESTIMATORS])
def test_boolean_object_and_read_only_memory_mapped_X_equal_float_X(Estimator, tmp_path):
    X = (np.random.RandomState(5).rand(30, 3) > 0.5).astype(float)
    y = X @ [0.5, 0.3, 0.2] if Estimator is BurgRegressor else np.arange(30) % 2
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")  # how joblib hands arrays over
    assert not mapped.flags.writeable
    params = {"random_state": 0} if "random_state" in Estimator().get_params() else {}
    expected = quiet(Estimator(**params), X, y)
    for variant in (X.astype(bool), X.astype(object), mapped):
        fitted = quiet(Estimator(**params), variant, y)
        if Estimator is BurgRegressor:
            assert np.array_equal(fitted.coef_, expected.coef_)
        else:
            assert np.array_equal(fitted.components_, expected.components_)
            assert np.array_equal(fitted.transform(variant), expected.transform(X))


def infeasible_constraints(kind):
    """Rows 0 and 2 coincide, so the first two constraints ask opposite things of one pair."""
    if kind == "pairs":
        return PairConstraints([[0, 1], [2, 1], [3, 4], [4, 5]], [1, -1, 1, -1])
    if kind == "targets":
        return DistanceTargets([[0, 1], [2, 1], [3, 4], [4, 5]], [0.1, 9.0, 0.5, 2.0])
    return triplets_of(kind, [[0, 1, 3], [2, 3, 1], [3, 4, 5], [4, 5, 0]])


@pytest.mark.parametrize("Estimator", CONSTRAINT_LEARNERS, ids=constraint_ids)
def test_infeasible_constraint_sets_give_a_valid_metric_and_convergence_warnings_only(
        Estimator):
    X, _ = blobs(n_samples=6)
    X[2] = X[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator = seeded(Estimator).fit(
                X, constraints=infeasible_constraints(Estimator._constraint_kind))
        except ValueError as exc:
            assert re.search(ILL_POSED, str(exc)), exc
            return
    # Besides ConvergenceWarnings, only SDML's documented shift of an indefinite C.
    assert all(w.category is ConvergenceWarning or "is not positive definite" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert_valid_metric(estimator, X)


ONLINE_LEARNERS = [E for E in ESTIMATORS if "eta" in E().get_params()]


@pytest.mark.parametrize("Estimator", ONLINE_LEARNERS, ids=[E.__name__ for E in ONLINE_LEARNERS])
@pytest.mark.parametrize("eta", [1e-12, 1e12])
def test_extreme_learning_rates_keep_the_model_valid(Estimator, eta):
    X, y = blobs(n_samples=60, n_features=4, seed=6)
    if Estimator is BurgRegressor:
        X = np.abs(X)
        model = quiet(Estimator(eta=eta), X, X @ [0.4, 0.3, 0.2, 0.1])
        assert np.all(np.isfinite(model.coef_)) and np.all(model.coef_ > 0)
        assert np.all(np.isfinite(model.predict(X)))
        return
    assert_valid_metric(quiet(Estimator(eta=eta, random_state=0), X, y), X)


def test_a_hundred_thousand_pola_updates_keep_psd_and_the_threshold():
    rng = np.random.RandomState(7)
    X = rng.randn(1000, 5) * rng.lognormal(0, 1, (1000, 1))
    linear, kernel, n_updates = POLA(gamma=1.0), KernelPOLA(gamma=1.0), 0
    for _ in range(10):
        pairs = rng.choice(1000 * 999, 10_500, replace=False)
        pairs = np.column_stack([pairs // 999, pairs % 999])
        pairs[:, 1] += pairs[:, 1] >= pairs[:, 0]  # distinct rows
        low, high = np.sort(pairs, axis=1).T
        _, first = np.unique(low * 1000 + high, return_index=True)
        pairs = pairs[np.sort(first)]
        chunk = PairConstraints(pairs, np.where(rng.rand(len(pairs)) < 0.5, 1, -1))
        n_updates += len(pairs)
        for model in (linear, kernel):
            model.partial_fit(X, constraints=chunk)
            assert model.threshold_ >= 1.0
            M = model.get_mahalanobis_matrix()
            assert np.all(np.isfinite(M)) and np.array_equal(M, M.T)
            assert np.linalg.eigvalsh(M).min() >= -1e-12 * np.abs(M).max()
    assert n_updates >= 100_000
    # The kernel learner with the linear kernel learns the same matrix.
    np.testing.assert_allclose(kernel.get_mahalanobis_matrix(),
                               linear.get_mahalanobis_matrix(),
                               atol=1e-8 * np.abs(linear.get_mahalanobis_matrix()).max())


def test_a_hundred_thousand_burg_regression_updates_keep_weights_positive():
    rng = np.random.RandomState(8)
    X = np.abs(rng.randn(100_000, 4)) * rng.lognormal(0, 2, (100_000, 1))
    y = X @ [0.4, 0.3, 0.2, 0.1] * rng.lognormal(0, 0.5, 100_000)
    model = BurgRegressor(eta=1.0)
    for chunk in np.array_split(np.arange(100_000), 10):
        model.partial_fit(X[chunk], y[chunk])
        assert np.all(np.isfinite(model.coef_)) and np.all(model.coef_ > 0)
    assert model.n_iter_ == 10


def test_meg_eigenvalues_spanning_300_orders_of_magnitude():
    # One pair along e₁ with target 0 from W₁ = I/3: ŷ = 1/3, so the exact update is
    # log W = diag(−2η/3, 0, 0) up to normalisation; 2η/3 = 700 spans 304 decades.
    X = np.vstack([np.eye(3), np.zeros(3)])
    eta = 1050.0
    model = MEG(eta=eta).partial_fit(X, constraints=DistanceTargets([[0, 3]], [0.0]))
    weights = np.array([np.exp(-2 * eta / 3), 1.0, 1.0])
    weights /= weights.sum()
    assert weights[0] < 1e-300
    learned = np.sort(np.einsum("ij,ij->i", model.components_, model.components_))
    np.testing.assert_allclose(learned, np.sort(weights), rtol=1e-10)
    assert_valid_metric(model, X)
    assert np.trace(model.get_mahalanobis_matrix()) == pytest.approx(1.0, abs=1e-14)


def random_constraints(kind, n_samples, rng):
    rows = np.array([rng.choice(n_samples, 3, replace=False) for _ in range(rng.randint(1, 9))])
    if kind in ("triplets", "quadruplets"):
        return triplets_of(kind, rows)
    low, high = np.sort(rows[:, :2], axis=1).T
    _, first = np.unique(low * n_samples + high, return_index=True)
    pairs = rows[np.sort(first), :2]
    if kind == "targets":
        return DistanceTargets(pairs, 10.0 ** rng.uniform(-3, 3, len(pairs)))
    return PairConstraints(pairs, rng.choice([-1, 1], len(pairs)))


@pytest.mark.parametrize("Estimator", CONSTRAINT_LEARNERS, ids=constraint_ids)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n_samples=st.integers(3, 15),
    n_features=st.integers(1, 5),
    log_scale=st.floats(-100, 100),
    log_parameter=st.floats(-6, 6),
    max_iter=st.integers(1, 30),
    seed=st.integers(0, 2**31 - 1),
)
def test_property_explicit_constraints_and_parameters_give_a_valid_metric(
    Estimator, n_samples, n_features, log_scale, log_parameter, max_iter, seed
):
    """Random data, constraint sets of the learner's kind, and its parameters."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features) * 10.0**log_scale
    X[rng.rand(n_samples) < 0.2] = X[0]  # some identical points
    constraints = random_constraints(Estimator._constraint_kind, n_samples, rng)
    params = {name: value for name, value in (("max_iter", max_iter), ("random_state", seed))
              if name in Estimator().get_params()}
    if "output_iter" in Estimator().get_params():
        params["output_iter"] = max_iter  # SCML: one evaluation after max_iter updates
    for name in ("gamma", "eta", "C"):
        if name in Estimator().get_params():
            # C = 1/n_triplets is the smallest a soft margin allows.
            floor = 1.0 / len(constraints.triplets) if name == "C" else 0.0
            params[name] = floor + 10.0**log_parameter
    try:
        estimator = quiet(Estimator(**params), X, constraints=constraints)
    except ValueError as exc:
        # Beyond the learner's arithmetic, or an ill-posed problem.
        assert "Rescale X so that" in str(exc) or re.search(ILL_POSED, str(exc)), exc
        return
    assert_valid_metric(estimator, X)
