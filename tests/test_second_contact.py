"""Issue 35, "second contact": silent wrong answers, half-fitted estimators, conventions.

One test (or a parametrised family) per numbered item of the issue; each failed on the
code before the fix. Data: ``X = randn(60, 5)`` in three classes unless said.
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError

import psdmetric
from psdmetric import (
    MEG,
    POLA,
    DefiniteBoost,
    LogDet,
    LogDetCV,
    PairConstraints,
    PairsClassifier,
    PSDBoost,
    VonNeumann,
)
from test_common import ESTIMATORS

METRIC_LEARNERS = [E for E in ESTIMATORS if hasattr(E, "get_mahalanobis_matrix")]
SMALL = {"LogDetCV": {"gammas": (0.1, 1.0), "cv": 2},
         "VonNeumannCV": {"gammas": (0.1, 1.0), "cv": 2}}


def make(Estimator, **params):
    options = {**SMALL.get(Estimator.__name__, {}), **params}
    if "random_state" in Estimator().get_params():
        options.setdefault("random_state", 0)
    return Estimator(**options)


def data(n_features=5, seed=0):
    return np.random.RandomState(seed).randn(60, n_features), np.repeat([0, 1, 2], 20)


def quiet_fit(estimator, X, y=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y, **params)


# 1. Near-duplicate points: no NaN in the metric, and LogDetCV fits them too.
@pytest.mark.parametrize("noise", [1e-12, 1e-10, 1e-8])
def test_near_duplicate_points_give_a_finite_metric(noise):
    rng = np.random.RandomState(82)
    X = np.repeat(rng.randn(10, 5), 3, 0) + noise * rng.randn(30, 5)
    y = np.tile([0, 1, 2], 10)
    for learner in (LogDet(random_state=0), make(LogDetCV)):
        components = quiet_fit(learner, X, y).components_
        assert np.all(np.isfinite(components))
        assert np.linalg.eigvalsh(components.T @ components).max() > 0


def test_rounding_level_distances_do_not_set_the_default_bounds():
    rng = np.random.RandomState(82)
    base = rng.randn(10, 5)
    X = np.repeat(base, 3, 0) + 1e-10 * rng.randn(30, 5)
    # The duplicates' distances (~1e-19) are below float64's resolution of the largest.
    np.testing.assert_allclose(psdmetric.squared_distance_bounds(X),
                               psdmetric.squared_distance_bounds(np.repeat(base, 3, 0)),
                               rtol=1e-6)


# 2. Flattened pairs of odd width are not zero-padded silently.
def test_flattened_pairs_of_odd_width_warn():
    X, y = data()
    index = np.arange(40).reshape(20, 2)
    flat = X[index].reshape(20, -1)[:, :9]
    labels = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)
    labels[:3] = -labels[:3]
    with pytest.warns(UserWarning, match="X has 9 columns, not a multiple of 2"):
        PairsClassifier(LogDet(random_state=0)).fit(flat, labels)


# 3. Extreme scales get a ValueError that says why, not the prior with NaN bounds.
@pytest.mark.parametrize("Estimator", [LogDet, VonNeumann, DefiniteBoost, MEG, PSDBoost, POLA])
@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_extreme_scales_are_refused_naming_the_values(Estimator, scale):
    X, y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="Rescale X so that"):
            make(Estimator).fit(X * scale, y)


def test_pairs_classifier_at_extreme_scale_is_refused_not_nan_threshold():
    X, y = data()
    pairs = X[np.arange(40).reshape(20, 2)] * 1e250
    labels = np.where(np.arange(20) % 2, 1, -1)
    with pytest.raises(ValueError, match="Rescale"):
        PairsClassifier(LogDet(random_state=0)).fit(pairs, labels)


def test_meg_refuses_the_scales_its_exponentials_overflow_at():
    X, y = data()
    with pytest.raises(ValueError, match="values up to 2.77e\\+100 \\(row 54, column 1\\)"):
        MEG(random_state=0).fit(X * 1e100, y)


@pytest.mark.parametrize("scale", [1e-140, 1e-40, 1e40, 1e140])
def test_large_but_representable_scales_still_fit_the_scaled_problem(scale):
    X, y = data()
    reference = LogDet(random_state=0).fit(X, y).transform(X)
    scaled = LogDet(random_state=0).fit(X * scale, y).transform(X * scale)
    # Bounds are percentiles of the data's distances: cX has the constraints of X on M.
    np.testing.assert_allclose(scaled / scale, reference, rtol=1e-6, atol=1e-9)


# 4. Nothing to learn from (equal rows, self-pairs): a warning, never a silent zero metric.
@pytest.mark.parametrize("Estimator", [POLA, psdmetric.KernelPOLA, LogDet])
def test_data_without_information_warn(Estimator):
    X, y = data()
    with pytest.warns(UserWarning, match="rows of X are all equal"):
        quiet_fit(make(Estimator), np.ones((60, 5)), y)
    with pytest.warns(UserWarning, match=r"every row of constraints joins .* rows \[0, 0\]"):
        quiet_fit(make(Estimator), X, constraints=PairConstraints([[0, 0], [1, 1]], [1, -1]))


# 5. gamma=inf on infeasible constraints warns, naming the pair that misses its bound.
@pytest.mark.parametrize("Estimator", [LogDet, VonNeumann, DefiniteBoost])
def test_exact_constraints_that_cannot_hold_warn(Estimator):
    X = np.random.RandomState(0).randn(8, 3)
    X[3] = X[2] + X[1] - X[0]  # pair (2, 3) has the difference of pair (0, 1)
    constraints = PairConstraints([[0, 1], [2, 3], [4, 5], [6, 7]], [1, -1, 1, -1])
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        Estimator(gamma=np.inf, bounds=(1.0, 2.0), random_state=0).fit(
            X, constraints=constraints)


def test_exact_constraints_that_hold_do_not_warn():
    X, y = data()
    constraints = PairConstraints([[0, 1], [2, 40]], [1, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        LogDet(gamma=np.inf, bounds=(1.0, 4.0), random_state=0).fit(X, constraints=constraints)


# 7. Half precision is computed in float64, not float16.
def test_float16_input_is_fitted_in_float64():
    X, y = data()
    X16 = X.astype(np.float16)
    learned = PSDBoost(random_state=0).fit(X16, y).components_
    reference = PSDBoost(random_state=0).fit(X16.astype(np.float64), y).components_
    np.testing.assert_array_equal(learned, reference)


# 8. A dask array given to a batch fit is loaded whole: say so.
def test_dask_array_in_batch_fit_warns_it_is_loaded_whole():
    da = pytest.importorskip("dask.array")
    X, y = data()
    with pytest.warns(UserWarning, match="loads the dask array X .* into memory"):
        LogDet(random_state=0).fit(da.from_array(X, chunks=20), y)


# 9. fit is all-or-nothing: a failed refit keeps the previous model.
@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=lambda E: E.__name__)
def test_failed_refit_keeps_the_previous_model(Estimator):
    X8, y = data(n_features=8, seed=1)
    X, _ = data()
    learner = quiet_fit(make(Estimator), X8, y)
    before = {name: value for name, value in vars(learner).items()}
    components, embedded = learner.components_.copy(), learner.transform(X8)
    with pytest.raises((ValueError, TypeError)):
        if Estimator._constraint_kind not in psdmetric._core._base._CONSTRAINT_TYPES:
            learner.fit(X, y[:-1])  # learners of labels or targets only
        else:
            kind = psdmetric._core._base._CONSTRAINT_TYPES[Estimator._constraint_kind]
            rows = [[0, 1, 2], [2, 99, 3]] if kind.__name__ == "TripletConstraints" else (
                [[0, 1], [2, 99]])
            args = (rows, [1, -1]) if kind is PairConstraints else (
                (rows, [0.5, 2.0]) if kind.__name__ == "DistanceTargets" else (rows,))
            learner.fit(X, constraints=kind(*args))
    assert learner.n_features_in_ == 8
    np.testing.assert_array_equal(learner.components_, components)
    assert set(vars(learner)) == set(before)
    np.testing.assert_array_equal(learner.transform(X8), embedded)


@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=lambda E: E.__name__)
def test_error_inside_a_round_keeps_the_previous_model(Estimator, monkeypatch):
    X8, y = data(n_features=8, seed=1)
    X, _ = data()
    learner = quiet_fit(make(Estimator), X8, y)
    state = {name: (value.copy() if isinstance(value, np.ndarray) else value)
             for name, value in vars(learner).items()}

    def failing(self, *args, **kwargs):
        raise FloatingPointError("injected into a round")

    # Every iterative learner reports each round through Round: fail after its updates.
    monkeypatch.setattr(psdmetric._core._driver.Round, "__init__", failing)
    try:
        quiet_fit(learner, X, y)
    except FloatingPointError:
        pass
    else:
        pytest.skip(f"{Estimator.__name__} is fitted in closed form, without rounds")
    assert set(vars(learner)) == set(state)
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(vars(learner)[name], value, err_msg=name)
    assert learner.n_features_in_ == 8


@pytest.mark.parametrize("Estimator", [LogDet, DefiniteBoost, PSDBoost, MEG])
def test_ctrl_c_before_the_first_round_leaves_an_unfitted_learner(Estimator, monkeypatch):
    X, y = data()
    learner = make(Estimator)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(type(learner), "_constraints_from_labels", interrupted)
    with pytest.raises(KeyboardInterrupt):
        learner.fit(X, y)
    assert not hasattr(learner, "n_features_in_")
    with pytest.raises(NotFittedError):
        learner.transform(X)


def test_ctrl_c_in_a_cv_learners_inner_fit_keeps_the_previous_model(monkeypatch):
    X, y = data()
    learner = make(LogDetCV).fit(X, y)
    components = learner.components_.copy()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(psdmetric._bregman._cv, "_score_path", interrupted)
    with pytest.raises(KeyboardInterrupt):
        learner.fit(X[:, :3], y)
    assert learner.n_features_in_ == 5
    np.testing.assert_array_equal(learner.components_, components)


def test_failed_pairs_classifier_refit_keeps_the_previous_model():
    X, _ = data()
    pairs = X[np.arange(40).reshape(20, 2)]
    labels = np.where(np.arange(20) % 2, 1, -1)
    model = PairsClassifier(LogDet(random_state=0)).fit(pairs, labels)
    threshold, learner = model.threshold_, model.learner_
    with pytest.raises(ValueError):
        model.fit(pairs[:, :, :3], np.zeros(20))
    assert model.threshold_ == threshold and model.learner_ is learner
    assert model.n_features_in_ == 10


# 10. Errors name what the user passed.
def test_pair_predict_before_fit_is_not_fitted_error():
    X, _ = data()
    with pytest.raises(NotFittedError):
        POLA().pair_predict(X[np.arange(4).reshape(2, 2)])


def test_cv_learner_on_equal_rows_names_the_data_not_pair_constraints():
    _, y = data()
    with pytest.raises(ValueError, match="LogDetCV cannot learn a metric: the 60 rows of X"):
        make(LogDetCV).fit(np.ones((60, 5)), y)


def test_pairs_classifier_names_the_users_rows_for_contradicting_labels():
    X, _ = data()
    pairs = X[[[0, 1], [2, 3], [1, 0], [4, 5]]]
    with pytest.raises(ValueError, match="Rows 0 and 2 of X are the same pair"):
        PairsClassifier(LogDet(random_state=0)).fit(pairs, [1, -1, -1, 1])


def test_tiny_scales_are_refused_before_online_logdet_reaches_lapack():
    X, y = data()
    with pytest.raises(ValueError, match="Rescale X so that"):
        psdmetric.OnlineLogDet(random_state=0).fit(X * 1e-300, y)


# 11. A search on labels cannot classify pairs (say what to do); a fitted learner can.
def test_pairs_classifier_explains_why_a_cv_learner_does_not_fit_pairs():
    X, y = data()
    index = np.random.RandomState(0).randint(0, 60, (50, 2))
    labels = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)
    with pytest.raises(TypeError, match=r"GridSearchCV\(PairsClassifier\(LogDet\(\)\)"):
        PairsClassifier(make(LogDetCV)).fit(X[index], labels)


def test_pairs_classifier_uses_a_frozen_fitted_learner_as_is():
    frozen = pytest.importorskip("sklearn.frozen")
    X, y = data()
    learner = LogDet(random_state=0).fit(X, y)
    index = np.random.RandomState(0).randint(0, 60, (50, 2))
    labels = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)
    model = PairsClassifier(frozen.FrozenEstimator(learner)).fit(X[index], labels)
    assert model.learner_.estimator is learner
    np.testing.assert_allclose(model.pair_distance(X[index]),
                               learner.pair_distance(X[index]), rtol=1e-12)


# 12. float32 in, float32 out, computed in float64.
@pytest.mark.parametrize("Estimator", METRIC_LEARNERS, ids=lambda E: E.__name__)
def test_float32_in_float32_out_of_transform(Estimator):
    X, y = data()
    learner = quiet_fit(make(Estimator), X.astype(np.float32), y)
    reference = quiet_fit(make(Estimator), X.astype(np.float32).astype(np.float64), y)
    assert Estimator().__sklearn_tags__().transformer_tags.preserves_dtype == [
        "float64", "float32"]
    out = learner.transform(X.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(
        out, reference.transform(X.astype(np.float32).astype(np.float64)).astype(np.float32))


# 13. The command line answers --version.
def test_command_line_version():
    result = subprocess.run([sys.executable, "-m", "psdmetric", "--version"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == f"psdmetric {psdmetric.__version__}"


# 14. Long iterative fits print the elapsed time; the searches print per candidate.
def test_verbose_table_has_an_elapsed_time_column(capsys):
    X, y = data()
    quiet_fit(LogDet(random_state=0, verbose=1, max_iter=3), X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-2:] == ["elapsed", "(s)"]
    elapsed = [float(line.split()[-1]) for line in lines[3:]]
    rounds = [float(line.split()[-2]) for line in lines[3:]]
    assert elapsed == sorted(elapsed) and elapsed[-1] >= sum(rounds) - 1e-3


# 6. KernelPOLA refuses kernel parameters the kernel does not take, and invalid ones.
@pytest.mark.parametrize("kernel, params, message", [
    ("rbf", {"gama": 5.0}, r"\['gama'\], which kernel='rbf' does not take"),
    ("rbf", {"gamma": -1.0}, "must be a positive number"),
    ("linear", {"gamma": 1.0}, "it takes no parameters"),
])
def test_kernel_pola_refuses_kernel_params_it_would_ignore(kernel, params, message):
    X, y = data()
    with pytest.raises(ValueError, match=message):
        psdmetric.KernelPOLA(kernel=kernel, kernel_params=params, random_state=0).fit(X, y)


# 15. Small chunks find their neighbours without scikit-learn's search.
def test_small_chunks_do_not_start_a_neighbour_search(monkeypatch):
    X, y = data()
    rows = np.r_[0:10, 20:30, 40:50]
    with monkeypatch.context() as patched:
        patched.setattr(psdmetric._core._sampling, "_DIRECT_SEARCH_SIZE", -1)
        reference = psdmetric.pairs_from_labels(y[rows], X=X[rows], n_neighbors=3)

    class Refused:
        def __init__(self, *args, **kwargs):
            raise AssertionError("NearestNeighbors started on a small chunk")

    monkeypatch.setattr(psdmetric._core._sampling, "NearestNeighbors", Refused)
    direct = psdmetric.pairs_from_labels(y[rows], X=X[rows], n_neighbors=3)
    np.testing.assert_array_equal(direct.pairs, reference.pairs)
    np.testing.assert_array_equal(direct.labels, reference.labels)
    learner = psdmetric.OnlineLogDet(n_neighbors=3, random_state=0)
    for start in range(0, 60, 4):
        learner.partial_fit(X[start:start + 4], np.tile([0, 1], 2))


# 16. Porting traps: a metric-learn call gets an answer that says what to call.
def test_pair_score_without_labels_names_the_metric_learn_equivalent():
    X, y = data()
    learner = POLA(random_state=0).fit(X, y)
    with pytest.raises(TypeError, match=r"-pair_distance\(pairs\)"):
        learner.pair_score(X[np.arange(4).reshape(2, 2)])


def test_failed_burg_regressor_refit_keeps_the_previous_weights(monkeypatch):
    X = np.abs(np.random.RandomState(0).randn(60, 5))
    model = psdmetric.BurgRegressor().fit(X, X @ np.arange(1.0, 6.0))
    weights = model.coef_.copy()

    def failing(*args, **kwargs):
        raise FloatingPointError("injected")

    monkeypatch.setattr(psdmetric.BurgRegressor, "_one_pass", failing)
    with pytest.raises(FloatingPointError):
        model.fit(X[:, :3], np.ones(60))
    assert model.n_features_in_ == 5
    np.testing.assert_array_equal(model.coef_, weights)


def test_cv_learner_prints_each_candidate_as_it_is_scored(capsys):
    X, y = data()
    make(LogDetCV, verbose=1, n_neighbors_grid=(3,)).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    table = lines.index("[LogDetCV]")
    candidates = [line for line in lines[:table] if line.startswith("[LogDetCV split")]
    # Two γ on each of the two splits, each printed before the summary table.
    assert len(candidates) == 4
    assert all("n_neighbors=3, gamma=" in line and ": score " in line for line in candidates)


def test_cv_learner_refuses_n_jobs_zero_by_name():
    X, y = data()
    with pytest.raises(ValueError, match="The 'n_jobs' parameter of LogDetCV"):
        make(LogDetCV, n_jobs=0).fit(X, y)


# 3 (SCML). The metric is scale-covariant: the same objective on c X with beta c² gives
# M / c² (the solver ran out of float64 at X × 1e100 and returned zero weights).
def _separable(seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(60) % 3
    return rng.randn(60, 4) + np.column_stack([2.0 * y, np.zeros((60, 3))]), y


@pytest.mark.parametrize("factor", [1e-3, 1e100])
def test_scml_metric_is_scale_covariant(factor):
    X, y = _separable()
    params = dict(max_iter=1000, output_iter=250, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        base = psdmetric.SCML(1e-3, **params).fit(X, y).get_mahalanobis_matrix()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        scaled = psdmetric.SCML(1e-3 * factor**2, **params).fit(X * factor, y)
    assert np.any(base)
    assert np.allclose(scaled.get_mahalanobis_matrix() * factor**2, base, rtol=1e-6,
                       atol=1e-9 * np.abs(base).max())


# 3 (SCML). Where zero weights are the optimum (a penalty that outweighs any margin, at
# beta = 1e300 or on X × 1e-10), the zero metric comes with a warning that says why.
@pytest.mark.parametrize("beta, factor", [(1e300, 1.0), (1e-5, 1e-10)])
def test_scml_warns_on_an_all_zero_metric(beta, factor):
    X, y = _separable()
    model = psdmetric.SCML(beta, max_iter=200, output_iter=100, random_state=0)
    with pytest.warns(UserWarning, match=r"all-zero weights .* Lower beta, rescale X"):
        model.fit(X * factor, y)
    assert not np.any(model.weights_)


# Random labels: no basis separates the classes, the zero metric is the optimum whatever
# beta is, and the warning says so rather than blaming the penalty.
@pytest.mark.parametrize("beta", [0.0, 1e-5])
def test_scml_zero_metric_on_random_labels_names_the_bases_not_beta(beta):
    rng = np.random.RandomState(0)
    X, y = rng.randn(120, 4), rng.randint(0, 5, 120)
    model = psdmetric.SCML(beta, random_state=0)
    reason = r"all-zero weights .* no basis brings x⁺ closer"
    with pytest.warns(UserWarning, match=reason) as record:
        model.fit(X, y)
    assert not any("Lower beta" in str(w.message) for w in record)
    assert not np.any(model.weights_)
    assert model.objective_ == 1.0
