"""Pairs and triplets as samples: thresholds, equivalences, model selection, routing."""

import copy
import pickle
import runpy
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score, fbeta_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import (
    MEG,
    POLA,
    BurgRegressor,
    KernelPOLA,
    LogDet,
    PairsClassifier,
    PSDBoost,
    TripletsClassifier,
    VonNeumann,
    pairs_from_labels,
    triplets_from_labels,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def iris_pairs():
    """Standardised iris, 600 random index pairs (similar = same species), ±1 labels."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    rng = np.random.RandomState(0)
    index = rng.randint(0, len(X), (600, 2))
    index = index[index[:, 0] != index[:, 1]]
    labels = np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)
    return X, y, index, labels


@pytest.fixture(scope="module")
def fitted(iris_pairs):
    X, _, index, labels = iris_pairs
    return PairsClassifier(LogDet(random_state=0)).fit(X[index[:300]], labels[:300])


# --- threshold strategies against a brute-force search -------------------------------

def _rates(labels, predicted):
    similar = labels == 1
    tpr = np.mean(predicted[similar] == 1) if similar.any() else np.nan
    tnr = np.mean(predicted[~similar] == -1) if (~similar).any() else np.nan
    return tpr, tnr


def _brute_force(distances, labels, objective, feasible=lambda tpr, tnr: True):
    """Best objective over every threshold that splits these distances differently."""
    values = np.unique(distances)
    candidates = np.concatenate([[values[0] - 1], (values[1:] + values[:-1]) / 2,
                                 [values[-1] + 1]])
    best = -np.inf
    for threshold in candidates:
        predicted = np.where(distances < threshold, 1, -1)
        if feasible(*_rates(labels, predicted)):
            best = max(best, objective(predicted))
    return best


@pytest.mark.parametrize("strategy, min_rate, beta", [
    ("accuracy", None, 1.0), ("f_beta", None, 1.0), ("f_beta", None, 0.3),
    ("f_beta", None, 3.0), ("max_tpr", 0.9, 1.0), ("max_tpr", 0.5, 1.0),
    ("max_tnr", 0.9, 1.0), ("max_tnr", 1.0, 1.0), ("max_tpr", 0.0, 1.0),
])
def test_calibrated_threshold_is_optimal(fitted, iris_pairs, strategy, min_rate, beta):
    X, _, index, labels = iris_pairs
    pairs, y = X[index[300:]], labels[300:]
    # Noise makes the validation pairs overlap, so the optimum is not trivial.
    pairs = pairs + np.random.RandomState(1).normal(scale=0.6, size=pairs.shape)
    distances = fitted.pair_distance(pairs)
    model = copy.deepcopy(fitted).calibrate_threshold(pairs, y, strategy=strategy,
                                                      min_rate=min_rate, beta=beta)
    predicted = model.predict(pairs)
    assert_array_equal(predicted, np.where(distances < model.threshold_, 1, -1))
    objectives = {
        "accuracy": lambda p: np.mean(p == y),
        "f_beta": lambda p: fbeta_score(y, p, beta=beta, zero_division=0),
        "max_tpr": lambda p: _rates(y, p)[0],
        "max_tnr": lambda p: _rates(y, p)[1],
    }
    feasible = {"max_tpr": lambda tpr, tnr: tnr >= min_rate,
                "max_tnr": lambda tpr, tnr: tpr >= min_rate}.get(strategy,
                                                                 lambda tpr, tnr: True)
    assert feasible(*_rates(y, predicted))
    achieved = objectives[strategy](predicted)
    assert achieved == pytest.approx(_brute_force(distances, y, objectives[strategy],
                                                  feasible), abs=1e-12)
    if strategy == "accuracy":
        assert achieved < 1  # the noisy pairs are not separable: a real optimisation


def test_fit_threshold_maximises_training_accuracy(iris_pairs):
    X, _, index, labels = iris_pairs
    fitted = PairsClassifier(LogDet(random_state=0)).fit(X[index[:300]], labels[:300])
    distances = fitted.pair_distance(X[index[:300]])
    best = _brute_force(distances, labels[:300], lambda p: np.mean(p == labels[:300]))
    assert fitted.score(X[index[:300]], labels[:300]) == pytest.approx(best)


def test_set_threshold_and_units(iris_pairs):
    X, _, index, labels = iris_pairs
    model = PairsClassifier(LogDet(random_state=0)).fit(X[index], labels)
    pairs = X[index[:50]]
    # Distances are unsquared, as the learner's own pair_distance.
    assert_allclose(model.pair_distance(pairs), model.learner_.pair_distance(pairs))
    model.set_threshold(1.5)
    assert model.threshold_ == 1.5
    assert_allclose(model.decision_function(pairs), 1.5 - model.learner_.pair_distance(pairs))
    assert_array_equal(model.predict(pairs),
                       np.where(model.learner_.pair_distance(pairs) < 1.5, 1, -1))
    with pytest.raises(ValueError, match="finite number"):
        model.set_threshold(np.nan)


def test_labels_zero_one_and_strings_mean_the_same(iris_pairs):
    X, _, index, labels = iris_pairs
    pairs = X[index[:200]]
    reference = PairsClassifier(LogDet(random_state=0)).fit(pairs, labels[:200])
    for coded in ((labels[:200] + 1) // 2, np.where(labels[:200] == 1, "same", "diff")):
        model = PairsClassifier(LogDet(random_state=0)).fit(pairs, coded)
        assert_allclose(model.decision_function(pairs), reference.decision_function(pairs))
        assert_array_equal(model.predict(pairs) == model.classes_[1],
                           reference.predict(pairs) == 1)


# --- scores, AUC and model selection on pairs ----------------------------------------

def test_auc_of_decision_function_is_that_of_negative_distances(fitted, iris_pairs):
    X, _, index, labels = iris_pairs
    pairs, y = X[index[300:]], labels[300:]
    auc = roc_auc_score(y, fitted.decision_function(pairs))
    assert auc == roc_auc_score(y, -fitted.learner_.pair_distance(pairs))
    assert auc == roc_auc_score(y, -fitted.learner_.pair_distance(pairs, squared=True))
    assert auc > 0.95


def test_grid_search_and_cross_validation_on_pairs(iris_pairs):
    X, _, index, labels = iris_pairs
    pairs = X[index]
    search = GridSearchCV(PairsClassifier(LogDet(random_state=0)),
                          {"learner__gamma": [0.01, 1.0]}, scoring="roc_auc", cv=3)
    search.fit(pairs, labels)
    scores = cross_val_score(PairsClassifier(LogDet(random_state=0, gamma=0.01)), pairs,
                             labels, scoring="roc_auc", cv=3)
    assert_allclose(search.cv_results_["mean_test_score"][0], scores.mean())
    assert search.best_estimator_.learner_.gamma == search.best_params_["learner__gamma"]


def test_calibrated_classifier_gives_probabilities(iris_pairs):
    X, _, index, labels = iris_pairs
    pairs = X[index]
    calibrated = CalibratedClassifierCV(PairsClassifier(LogDet(random_state=0)), cv=3)
    calibrated.fit(pairs[:400], labels[:400])
    probability = calibrated.predict_proba(pairs[400:])[:, 1]
    assert np.all((probability >= 0) & (probability <= 1))
    assert roc_auc_score(labels[400:], probability) > 0.95
    # Better than the constant prediction of the base rate.
    brier = np.mean((probability - (labels[400:] == 1)) ** 2)
    base_rate = np.mean(labels[:400] == 1)
    assert brier < np.mean((base_rate - (labels[400:] == 1)) ** 2) / 2


# --- the three ways of giving pairs and triplets -------------------------------------

def test_index_pairs_equal_point_pairs(iris_pairs):
    X, _, index, labels = iris_pairs
    by_points = PairsClassifier(LogDet(random_state=0)).fit(X[index], labels)
    by_index = PairsClassifier(LogDet(random_state=0), preprocessor=X).fit(index, labels)
    flattened = PairsClassifier(LogDet(random_state=0)).fit(X[index].reshape(len(index), -1),
                                                            labels)
    assert_array_equal(by_index.learner_.components_, by_points.learner_.components_)
    assert_array_equal(flattened.learner_.components_, by_points.learner_.components_)
    assert by_index.threshold_ == by_points.threshold_
    assert_allclose(by_index.decision_function(index), by_points.decision_function(X[index]))
    # Repeated points are one point for the learner.
    assert len(by_points.learner_.constraints_.pairs) == len(index)
    assert by_points.learner_.constraints_.pairs.max() < len(np.unique(index))


def test_index_triplets_equal_point_triplets():
    X, y = load_iris(return_X_y=True)
    index = triplets_from_labels(X, y).triplets
    by_points = TripletsClassifier(PSDBoost(random_state=0)).fit(X[index])
    by_index = TripletsClassifier(PSDBoost(random_state=0), preprocessor=X).fit(index)
    assert_array_equal(by_index.learner_.components_, by_points.learner_.components_)
    assert_allclose(by_index.decision_function(index), by_points.decision_function(X[index]))


def test_triplet_scores_follow_the_learned_distances():
    X, y = load_iris(return_X_y=True)
    triplets = X[triplets_from_labels(X, y).triplets]
    model = TripletsClassifier(PSDBoost(random_state=0)).fit(triplets[::2])
    distance = model.learner_.pair_distance
    margin = distance(triplets[1::2, [0, 2]]) - distance(triplets[1::2, [0, 1]])
    assert_allclose(model.decision_function(triplets[1::2]), margin)
    assert model.score(triplets[1::2]) == np.mean(margin > 0)
    # Reversed triplets are answered the other way round.
    assert_array_equal(model.predict(triplets[1::2][:, [0, 2, 1]]),
                       -model.predict(triplets[1::2]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_other_pair_learners(iris_pairs):
    X, _, index, labels = iris_pairs
    pairs = X[index] / 4  # POLA's margin is 1: squared distances of order 1
    pola = PairsClassifier(POLA(random_state=0)).fit(pairs, labels)
    # POLA's own threshold b on squared distances, as a distance.
    assert pola.threshold_ == np.sqrt(pola.learner_.threshold_)
    agree = pola.predict(pairs) == pola.learner_.pair_predict(pairs)
    on_boundary = np.isclose(pola.learner_.pair_distance(pairs, squared=True),
                             pola.learner_.threshold_)
    assert np.all(agree | on_boundary)
    for learner in (VonNeumann(random_state=0), MEG(random_state=0)):
        model = PairsClassifier(learner).fit(pairs[:400], labels[:400])
        assert roc_auc_score(labels[400:], model.decision_function(pairs[400:])) > 0.9


# --- errors ---------------------------------------------------------------------------

def test_errors(iris_pairs, fitted):
    X, _, index, labels = iris_pairs
    pairs = X[index]
    with pytest.raises(TypeError, match="PSDBoost learns from triplets.*TripletsClassifier"):
        PairsClassifier(PSDBoost()).fit(pairs, labels)
    with pytest.raises(TypeError, match="LogDet learns from pairs.*PairsClassifier"):
        TripletsClassifier(LogDet()).fit(X[:30].reshape(10, 3, 4))
    # A linear transformer with components_ is welcome (PCA, NCA); one without is not.
    with pytest.raises(TypeError, match="StandardScaler"):
        PairsClassifier(StandardScaler()).fit(pairs, labels)
    with pytest.raises(ValueError, match="implementing 'fit' and 'transform'"):
        PairsClassifier(BurgRegressor()).fit(pairs, labels)
    with pytest.raises(ValueError, match=r"shape \(n_pairs, 2, n_features\).*Triplets"):
        PairsClassifier(LogDet()).fit(X[:30].reshape(10, 3, 4), np.arange(10) % 2)
    with pytest.raises(ValueError, match="Only binary classification"):
        PairsClassifier(LogDet()).fit(pairs, np.arange(len(pairs)) % 3)
    with pytest.raises(ValueError, match="row 150 of the preprocessor, which has 150 rows"):
        PairsClassifier(LogDet(), preprocessor=X).fit(np.array([[0, 150], [1, 2]]), [1, -1])
    with pytest.raises(ValueError, match="integer row indices"):
        PairsClassifier(LogDet(), preprocessor=X).fit(pairs.reshape(len(pairs), -1), labels)
    with pytest.raises(ValueError, match="strategy must be one of"):
        fitted.calibrate_threshold(pairs, labels, strategy="auc")
    with pytest.raises(ValueError, match="needs min_rate"):
        fitted.calibrate_threshold(pairs, labels, strategy="max_tpr")
    with pytest.raises(ValueError, match="not in classes_"):
        fitted.calibrate_threshold(pairs, np.where(labels == 1, 1, 0))


def test_learners_reject_tuples_given_as_samples(iris_pairs):
    X, y, index, labels = iris_pairs
    with pytest.raises(ValueError, match=r"looks like pairs of points.*PairsClassifier\(LogDet"):
        LogDet().fit(X[index], labels)
    with pytest.raises(ValueError, match=r"looks like triplets.*TripletsClassifier\(PSDBoost"):
        PSDBoost().fit(X[:30].reshape(10, 3, 4))
    with pytest.warns(UserWarning, match="look like index pairs"):
        LogDet(max_iter=5).fit(index, labels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ConvergenceWarning)
        LogDet(max_iter=5).fit(X[:, :2], y)  # float 2-feature samples: no warning


# --- explicit constraints through pipelines ------------------------------------------

@pytest.fixture(scope="module")
def labelled():
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(X))
    X, y = StandardScaler().fit_transform(X[order]), y[order]
    # Constraints among the first 100 rows only: valid for a training split X[:100].
    return X, y, pairs_from_labels(y[:100], 200, random_state=0)


def test_pipeline_passes_constraints_the_old_way(labelled):
    X, y, constraints = labelled
    pipe = Pipeline([("ml", LogDet(random_state=0)), ("knn", KNeighborsClassifier(3))])
    pipe.fit(X, y, ml__constraints=constraints)
    direct = LogDet(random_state=0).fit(X, constraints=constraints)
    assert_array_equal(pipe["ml"].components_, direct.components_)


def test_metadata_routing_of_constraints(labelled):
    X, y, constraints = labelled
    with config_context(enable_metadata_routing=True):
        learner = LogDet(random_state=0).set_fit_request(constraints=True)
        pipe = Pipeline([("ml", learner), ("knn", KNeighborsClassifier(3))])
        pipe.fit(X, y, constraints=constraints)
        assert_array_equal(pipe["ml"].components_,
                           LogDet(random_state=0).fit(X, constraints=constraints).components_)

        # One split that keeps the row numbers of the training part, as the
        # constraints index rows of the X the learner receives.
        split = [(np.arange(100), np.arange(100, 150))]
        on_train = LogDet(random_state=0).fit(X[:100], constraints=constraints)
        result = cross_validate(pipe, X, y, cv=split, return_estimator=True,
                                params={"constraints": constraints})
        assert_array_equal(result["estimator"][0]["ml"].components_, on_train.components_)
        expected = np.mean(KNeighborsClassifier(3).fit(on_train.transform(X[:100]), y[:100])
                           .predict(on_train.transform(X[100:])) == y[100:])
        assert result["test_score"][0] == pytest.approx(expected)

        search = GridSearchCV(pipe, {"ml__gamma": [0.1, 1.0]}, cv=split)
        search.fit(X, y, constraints=constraints)
        best = search.best_params_["ml__gamma"]
        refit = LogDet(random_state=0, gamma=best).fit(X, constraints=constraints)
        assert_array_equal(search.best_estimator_["ml"].components_, refit.components_)


# --- the metric-learn migration example ----------------------------------------------

def test_metric_learn_migration_example_runs():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    namespace = runpy.run_path(str(EXAMPLES / "plot_metric_learn_migration.py"))
    best, y_test = namespace["best"], namespace["y_test"]
    assert isinstance(best, PairsClassifier)
    assert namespace["auc"] > 0.95
    # The calibrated threshold maximises F1 on the validation pairs.
    distances = best.pair_distance(namespace["pairs_valid"])
    y_valid = namespace["y_valid"]
    f1 = f1_score(y_valid, best.predict(namespace["pairs_valid"]))
    assert f1 == pytest.approx(_brute_force(distances, y_valid,
                                            lambda p: f1_score(y_valid, p)))
    assert namespace["accuracy"] == np.mean(best.predict(namespace["pairs_test"]) == y_test)
    assert "from metric_learn import ITML" in (EXAMPLES / "plot_metric_learn_migration.py"
                                               ).read_text()


# --- KernelPOLA's metric callable -----------------------------------------------------

@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_kernel_pola_metric_callable_for_a_nonlinear_kernel():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (60, 2))
    y = (np.linalg.norm(X, axis=1) > 0.7).astype(int)
    model = KernelPOLA(kernel="rbf", kernel_params={"gamma": 5.0}, gamma=1.0, beta=0.5,
                       random_state=0).fit(X, y)
    assert not hasattr(model, "get_mahalanobis_matrix")
    metric = pickle.loads(pickle.dumps(model.get_metric()))
    pairs = np.stack([X[:20], X[20:40]], axis=1)
    assert_allclose([metric(u, v) for u, v in pairs], model.pair_distance(pairs))
    by_metric = KNeighborsClassifier(3, metric=model.get_metric()).fit(X[:40], y[:40])
    by_transform = KNeighborsClassifier(3).fit(model.transform(X[:40]), y[:40])
    assert_array_equal(by_metric.predict(X[40:]), by_transform.predict(model.transform(X[40:])))


def test_flattened_rows_of_odd_width_end_with_a_zero_feature():
    rng = np.random.RandomState(0)
    rows = rng.randn(80, 3)
    labels = np.where(np.abs(rows[:, 0] - rows[:, 1]) < 0.8, 1, -1)
    padded = np.column_stack([rows, np.zeros(80)]).reshape(80, 2, 2)
    odd = PairsClassifier(LogDet(random_state=0)).fit(rows, labels)
    explicit = PairsClassifier(LogDet(random_state=0)).fit(padded, labels)
    assert_array_equal(odd.learner_.components_, explicit.learner_.components_)
    assert_allclose(odd.decision_function(rows), explicit.decision_function(padded))
    triplets = rng.randn(30, 3, 2)
    model = TripletsClassifier(PSDBoost(random_state=0)).fit(triplets.reshape(30, 6))
    assert_allclose(model.decision_function(triplets.reshape(30, 6)),
                    model.decision_function(triplets))
