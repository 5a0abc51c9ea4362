"""LogDetCV and VonNeumannCV: the search equals a brute-force cross-validation over the
same grid and folds, and the refit equals the plain learner with the chosen setting."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine, make_classification
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

import psdmetric._bregman._cv
import psdmetric._bregman._logdet
import psdmetric._bregman._von_neumann
from psdmetric import LogDet, LogDetCV, VonNeumann, VonNeumannCV

SEARCHES = [(LogDetCV, LogDet), (VonNeumannCV, VonNeumann)]
GAMMAS = (0.1, 1.0, 10.0)
SCHEMES = (None, 3)


def brute_force_samples(learner, X, y, folds, gammas=GAMMAS):
    """Per fold, a (γ of ``gammas`` × test sample) array: the share of each test sample's
    5 nearest training samples (in the space ``learner`` learns on the training fold)
    that hold its label. The γ of a fold are fitted as one warm-started path."""
    samples = []
    for train, test in folds.split(X, y):
        model, rows = clone(learner).set_params(warm_start=True), []
        for gamma in gammas:
            model.set_params(gamma=gamma).fit(X[train], y[train])
            knn = KNeighborsClassifier(5).fit(model.transform(X[train]), y[train])
            neighbours = knn.kneighbors(model.transform(X[test]), return_distance=False)
            rows.append(np.mean(y[train][neighbours] == y[test][:, None], axis=1))
        samples.append(np.array(rows))
    return samples


def brute_force_scores(learner, X, y, folds, gammas=GAMMAS):
    """Per γ and fold, the mean of ``brute_force_samples``."""
    return np.column_stack([split.mean(axis=1)
                            for split in brute_force_samples(learner, X, y, folds, gammas)])


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module", params=SEARCHES, ids=lambda pair: pair[0].__name__)
def fitted(request, wine):
    search_class, learner_class = request.param
    X, y = wine
    search = search_class(GAMMAS, SCHEMES, cv=StratifiedKFold(5), random_state=0).fit(X, y)
    return search, learner_class


def stepwise_oracle(samples, default, n_gammas, margin):
    """The rule on per-split (candidates × test sample) scores, written out as loops: γ of
    the default's scheme against the default, then the other schemes against that
    choice, each by the per-sample differences pooled over the splits."""
    pooled = np.hstack(samples)
    means = np.mean([split.mean(axis=1) for split in samples], axis=0)
    chosen = default
    for same in (True, False):
        reference, best_mean = chosen, -np.inf
        for index, row in enumerate(pooled):
            if (index // n_gammas == default // n_gammas) != same:
                continue
            differences = row - pooled[reference]
            error = np.std(differences, ddof=1) / np.sqrt(len(row))
            if differences.mean() > margin * error and means[index] > best_mean:
                chosen, best_mean = index, means[index]
    return chosen


def test_scores_equal_brute_force_true_class_probability(fitted, wine):
    search, learner_class = fitted
    X, y = wine
    folds = StratifiedKFold(5)
    per_scheme = [brute_force_samples(learner_class(n_neighbors=k, random_state=0), X, y,
                                      folds) for k in SCHEMES]
    samples = [np.vstack(split) for split in zip(*per_scheme)]
    brute = np.column_stack([split.mean(axis=1) for split in samples])
    splits = np.column_stack([search.cv_results_[f"split{i}_test_score"] for i in range(5)])
    np.testing.assert_array_equal(splits, brute)
    # The default (γ = 0.1, 3 neighbours) is the fourth candidate.
    margin = {LogDetCV: 1.5, VonNeumannCV: 1.0}[type(search)]
    best = stepwise_oracle(samples, default=3, n_gammas=len(GAMMAS), margin=margin)
    k, gamma = SCHEMES[best // len(GAMMAS)], GAMMAS[best % len(GAMMAS)]
    assert search.best_params_ == {"gamma": gamma, "n_neighbors": k}
    assert search.best_index_ == best and search.cv_results_["chosen"][best]
    assert search.cv_results_["chosen"].sum() == 1
    assert search.best_score_ == pytest.approx(brute.mean(axis=1)[best])
    # The default's scheme is compared with the default, the other with that step's choice.
    reference = search.cv_results_["gain_reference_index"]
    np.testing.assert_array_equal(reference[3:], 3)
    first = stepwise_oracle([split[3:] for split in samples], default=0,
                            n_gammas=len(GAMMAS), margin=margin) + 3
    np.testing.assert_array_equal(reference[:3], first)
    pooled = np.hstack(samples)
    gain = pooled - pooled[reference.astype(int)]
    np.testing.assert_allclose(search.cv_results_["mean_score_gain"], gain.mean(axis=1),
                               atol=1e-15)
    np.testing.assert_allclose(search.cv_results_["std_error_score_gain"],
                               gain.std(axis=1, ddof=1) / np.sqrt(len(X)), atol=1e-15)


def test_refit_equals_the_plain_learner_with_the_best_params(fitted, wine):
    search, learner_class = fitted
    X, y = wine
    plain = learner_class(**search.best_params_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(search.components_, plain.components_)
    np.testing.assert_array_equal(search.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(search.constraints_.pairs, plain.constraints_.pairs)
    assert search.n_iter_ == plain.n_iter_
    np.testing.assert_array_equal(search.transform(X), plain.transform(X))


def test_cv_results_layout(fitted):
    search, _ = fitted
    results = search.cv_results_
    n_candidates = len(GAMMAS) * len(SCHEMES)
    assert results["params"] == [{"gamma": g, "n_neighbors": k}
                                 for k in SCHEMES for g in GAMMAS]
    np.testing.assert_array_equal(results["param_gamma"], np.tile(GAMMAS, len(SCHEMES)))
    assert list(results["param_n_neighbors"]) == [k for k in SCHEMES for _ in GAMMAS]
    splits = np.column_stack([results[f"split{i}_test_score"] for i in range(5)])
    assert splits.shape == (n_candidates, 5)
    np.testing.assert_allclose(results["mean_test_score"], splits.mean(axis=1))
    np.testing.assert_allclose(results["std_test_score"], splits.std(axis=1))
    ranks = results["rank_test_score"]
    assert np.all(np.diff(ranks[np.argsort(-results["mean_test_score"], kind="stable")]) >= 0)
    assert np.all(results["mean_fit_time"] > 0)
    np.testing.assert_array_equal(results["n_splits_scored"], 5)
    np.testing.assert_array_equal(search.gammas_, GAMMAS)


def test_unsorted_gamma_grid_is_searched_in_ascending_order():
    X, y = load_iris(return_X_y=True)
    search = LogDetCV([10.0, 0.1, 1.0, 0.1], [None], random_state=0).fit(X, y)
    np.testing.assert_array_equal(search.gammas_, [0.1, 1.0, 10.0])
    assert [p["gamma"] for p in search.cv_results_["params"]] == [0.1, 1.0, 10.0]


def test_parallel_paths_equal_sequential():
    X, y = load_iris(return_X_y=True)
    kwargs = dict(gammas=(0.1, 1.0), n_neighbors_grid=(None, 2), cv=3, random_state=0)
    sequential = LogDetCV(**kwargs).fit(X, y)
    parallel = LogDetCV(**kwargs, n_jobs=2).fit(X, y)
    for key in ("split0_test_score", "split1_test_score", "split2_test_score"):
        np.testing.assert_array_equal(sequential.cv_results_[key], parallel.cv_results_[key])
    np.testing.assert_array_equal(sequential.components_, parallel.components_)


def test_scheme_impossible_on_a_fold_is_left_out_with_a_warning():
    X, y = load_iris(return_X_y=True)
    keep = np.r_[0:100, 100:102]
    # The first training fold holds a single class: no neighbour pair can be drawn.
    folds = [(np.r_[0:50], np.r_[50:102]), (np.r_[50:102], np.r_[0:50])]
    with pytest.warns(FitFailedWarning, match=r"n_neighbors=\[3\] left out"):
        search = LogDetCV((0.1, 1.0), (None, 3), cv=folds, random_state=0).fit(
            X[keep], y[keep])
    assert np.isnan(search.cv_results_["mean_test_score"][2:]).all()
    # As GridSearchCV: failed candidates share the rank after the last scored one.
    np.testing.assert_array_equal(search.cv_results_["rank_test_score"][2:], [3, 3])
    assert search.best_params_["n_neighbors"] is None
    with pytest.raises(ValueError, match="No pair scheme in n_neighbors_grid"):
        LogDetCV((0.1,), (3,), cv=folds, random_state=0).fit(X[keep], y[keep])


def test_neighbours_beyond_a_small_class_are_capped_as_in_the_learner():
    X, y = load_iris(return_X_y=True)
    # Class 2 keeps 8 samples, 6 or 7 per training fold: the learner caps 7 neighbours.
    keep = np.r_[0:100, 100:108]
    X, y = X[keep], y[keep]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitFailedWarning)
        search = LogDetCV((0.1,), (7,), cv=StratifiedKFold(5), random_state=0).fit(X, y)
    brute = brute_force_scores(LogDet(n_neighbors=7, random_state=0), X, y,
                               StratifiedKFold(5), gammas=(0.1,))[0]
    splits = [search.cv_results_[f"split{i}_test_score"][0] for i in range(5)]
    np.testing.assert_array_equal(splits, brute)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"gammas": []}, "gammas must hold at least one value"),
        ({"gammas": [1.0, -1.0]}, "gammas must hold positive numbers"),
        ({"gammas": [1.0, "a"]}, "gammas must hold positive numbers"),
        ({"n_neighbors_grid": [0]}, "n_neighbors_grid must hold None"),
        ({"n_neighbors_grid": [2.5]}, "n_neighbors_grid must hold None"),
    ],
)
def test_bad_grids_raise_naming_the_argument(params, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        LogDetCV(**params).fit(X, y)


def test_knn_neighbors_above_a_training_fold_is_rejected():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="knn_neighbors=101 exceeds the 100 samples"):
        LogDetCV(cv=3, knn_neighbors=101).fit(X, y)


def test_verbose_prints_the_candidate_table(capsys):
    X, y = load_iris(return_X_y=True)
    LogDetCV((0.1, 1.0), (None,), cv=3, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "[LogDetCV]" in out and "mean score" in out
    assert out.count("\n        None ") == 2


def test_random_state_none_draws_one_seed_for_all_folds_and_the_refit():
    X, y = load_iris(return_X_y=True)
    search = LogDetCV((1.0,), (None,), cv=3, random_state=np.random.RandomState(3)).fit(X, y)
    seed = np.random.RandomState(3).randint(np.iinfo(np.int32).max)
    plain = LogDet(gamma=1.0, n_neighbors=None, random_state=seed).fit(X, y)
    np.testing.assert_array_equal(search.components_, plain.components_)


def _interrupt_second_sweep(monkeypatch):
    real, calls = psdmetric._bregman._logdet.logdet_sweep, []

    def interrupted(*args):
        calls.append(None)
        result = real(*args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(psdmetric._bregman._logdet, "logdet_sweep", interrupted)
    return calls


def test_ctrl_c_during_the_search_stops_it(monkeypatch):
    X, y = load_iris(return_X_y=True)
    calls = _interrupt_second_sweep(monkeypatch)
    search = LogDetCV((0.1, 1.0), (None,), cv=3, random_state=0)
    with pytest.raises(KeyboardInterrupt):
        search.fit(X, y)
    assert len(calls) == 2
    assert not hasattr(search, "components_")


def test_ctrl_c_during_the_refit_keeps_its_last_complete_cycle(monkeypatch):
    X, y = load_iris(return_X_y=True)
    search = LogDetCV((0.1, 1.0), (None,), cv=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference = search.fit(X, y).components_
        one_cycle = LogDet(**search.best_params_, max_iter=1, random_state=0).fit(X, y)
    real_fit = LogDet.fit

    def refit_interrupted(self, X, y=None, **kwargs):
        if y is not None:  # the refit: the inner fits pass constraints
            _interrupt_second_sweep(monkeypatch)
        return real_fit(self, X, y, **kwargs)

    monkeypatch.setattr(LogDet, "fit", refit_interrupted)
    with pytest.warns(ConvergenceWarning, match="interrupted by the user"):
        search.fit(X, y)
    assert search.n_iter_ == 1
    np.testing.assert_array_equal(search.components_, one_cycle.components_)
    assert not np.array_equal(search.components_, reference)


@pytest.mark.parametrize("params", [{"n_components": 2}, {"prior": "covariance"}])
def test_inner_fits_draw_bounds_under_the_prior_like_the_learner(params):
    X, y = load_iris(return_X_y=True)
    search = LogDetCV((0.1, 1.0), (None, 3), cv=3, random_state=0, **params).fit(X, y)
    folds = StratifiedKFold(3)
    brute = np.vstack([brute_force_scores(LogDet(n_neighbors=k, random_state=0, **params),
                                          X, y, folds, gammas=(0.1, 1.0))
                       for k in (None, 3)])
    splits = np.column_stack([search.cv_results_[f"split{i}_test_score"] for i in range(3)])
    np.testing.assert_array_equal(splits, brute)
    assert search.components_.shape == (params.get("n_components", 4), 4)


@pytest.mark.parametrize("search_class, learner_class", SEARCHES)
def test_auto_rank_searches_and_refits_in_the_top_principal_directions(
        search_class, learner_class):
    rng = np.random.RandomState(3)
    cap = psdmetric._core.AUTO_COMPONENTS
    X, y = rng.randn(40, cap + 2), np.repeat([0, 1], 20)
    search = search_class((0.1,), (3,), cv=2, random_state=0).fit(X, y)
    plain = learner_class(n_components=cap, random_state=0).fit(X, y)
    assert search.components_.shape == (cap, cap + 2)
    np.testing.assert_array_equal(search.components_, plain.components_)


@pytest.mark.parametrize("n_samples, splitter, n_splits", [
    (150, RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=0), 6),
    (1000, StratifiedKFold(3, shuffle=True, random_state=0), 1),
])
def test_default_splits_hold_out_a_third_repeated_below_1000_samples(
        n_samples, splitter, n_splits):
    rng = np.random.RandomState(0)
    X, y = rng.randn(n_samples, 3), np.arange(n_samples) % 3
    expected = list(splitter.split(X, y))[:n_splits]
    splits = psdmetric._bregman._cv._inner_splits(None, X, y, seed=0)
    assert len(splits) == n_splits
    for (train, test), (expected_train, expected_test) in zip(splits, expected):
        np.testing.assert_array_equal(test, expected_test)
        np.testing.assert_array_equal(train, expected_train)


def test_large_sets_hold_every_inner_fit_to_twice_the_defaults_work(wine, monkeypatch):
    X, y = wine
    monkeypatch.setattr(psdmetric._bregman._cv, "_LARGE_FROM", 100)
    folds = [next(StratifiedKFold(3).split(X, y))]
    search = LogDetCV((0.01, 0.1, 10.0), (None, 3), cv=folds, tol=1e-6,
                      random_state=0).fit(X, y)
    results = search.cv_results_
    train = folds[0][0]
    # The default's path (3 neighbours) is fitted freely up to the default, γ = 0.1.
    plain, cycles, n_pairs = {}, {}, {}
    for k in (3, None):
        model = LogDet(n_neighbors=k, tol=1e-6, warm_start=True, random_state=0)
        if k is None:
            model.set_params(n_constraints=min(40 * 9, 10 * len(y)))
        plain[k], cycles[k] = [], []
        for gamma in (0.01, 0.1, 10.0):
            model.set_params(gamma=gamma).fit(X[train], y[train])
            n_pairs[k] = len(model.constraints_.pairs)
            plain[k].append(model.n_iter_ * n_pairs[k])
            cycles[k].append(model.n_iter_)
    budget = 2 * plain[3][1]
    # Scored exactly when the unbounded fit of the same path needs less than the budget,
    # and the random path's budget covers the cycles the default's first γ took.
    started = budget // n_pairs[None] >= cycles[3][0]
    within = np.array([started and w < budget for w in plain[None]]
                      + [True, True, plain[3][2] < budget])
    assert not within.all(), "the test needs a candidate over the budget"
    within[:3] = np.cumprod(within[:3]).astype(bool)  # a path ends at its first overrun
    np.testing.assert_array_equal(results["n_splits_scored"], within.astype(int))
    assert within[search.best_index_]


@pytest.mark.parametrize("search", [LogDetCV, VonNeumannCV])
def test_a_path_short_of_the_defaults_first_cycles_is_not_started(search, monkeypatch):
    # 20 classes: 10 random pairs per sample, twice the neighbour pairs, so the random
    # path's budget affords fewer cycles than the default's first γ took; run anyway,
    # its first fit is cut at the budget and scores nothing, so skipping it changes no
    # result.
    X, y = make_classification(n_samples=1000, n_features=10, n_informative=8,
                               n_redundant=0, n_classes=20, n_clusters_per_class=1,
                               class_sep=1.5, random_state=0)
    skipping = search(random_state=0).fit(X, y)
    score_path = psdmetric._bregman._cv._score_path

    def every_path_started(*args, **kwargs):
        return score_path(*args, **{**kwargs, "min_cycles": None})

    monkeypatch.setattr(psdmetric._bregman._cv, "_score_path", every_path_started)
    running = search(random_state=0).fit(X, y)
    random_first = skipping.cv_results_["params"].index({"gamma": 0.01, "n_neighbors": None})
    assert np.isnan(skipping.cv_results_["mean_fit_time"][random_first])
    assert running.cv_results_["mean_fit_time"][random_first] > 0
    for key in ("mean_test_score", "n_splits_scored", "chosen"):
        np.testing.assert_array_equal(skipping.cv_results_[key], running.cv_results_[key])
    assert skipping.best_params_ == running.best_params_
    np.testing.assert_array_equal(skipping.components_, running.components_)


def test_random_pairs_are_capped_at_ten_per_sample():
    X, y = load_iris(return_X_y=True)
    keep = np.r_[0:10, 50:60, 100:110]  # 3 classes: 40·3² = 360 pairs > 10·30
    search = LogDetCV((1.0,), (None,), cv=2, random_state=0).fit(X[keep], y[keep])
    plain = LogDet(gamma=1.0, n_neighbors=None, n_constraints=300, random_state=0)
    np.testing.assert_array_equal(search.constraints_.pairs,
                                  plain.fit(X[keep], y[keep]).constraints_.pairs)


def test_stepwise_rule_on_a_constructed_table():
    choose = psdmetric._bregman._cv_rule.stepwise_choice
    # One scheme: the default, a steady gain of 0.02, a larger but noisy mean gain.
    scores = np.array([[0.80, 0.82, 0.73],
                       [0.70, 0.72, 0.88],
                       [0.75, 0.77, 0.63],
                       [0.90, 0.92, 1.03]])
    samples = [row[:, None] for row in scores]
    best, gain, error, reference = choose(samples, 0, 3, margin=1.5)
    np.testing.assert_allclose(gain, [0.0, 0.02, 0.03], atol=1e-15)
    np.testing.assert_allclose(error[2], np.std(scores[:, 2] - scores[:, 0], ddof=1) / 2)
    np.testing.assert_array_equal(reference, 0)
    assert best == 1
    # A noisier steady gain clears one standard error but not 1.5.
    noisy = scores.copy()
    noisy[:, 1] += [0.03, -0.03, 0.03, -0.03]
    best, gain, error, _ = choose([row[:, None] for row in noisy], 0, 3, margin=1.5)
    assert error[1] < gain[1] < 1.5 * error[1] and best == 0
    assert choose([row[:, None] for row in noisy], 0, 3, margin=1.0)[0] == 1
    # A second scheme is compared with the first step's choice, not with the default.
    two = np.hstack([scores, scores[:, [1]] + [[0.001], [0.003], [0.002], [0.002]]])
    best, gain, error, reference = choose([row[:, None] for row in two], 0, 3, margin=1.5)
    np.testing.assert_array_equal(reference, [0, 0, 0, 1])
    assert best == 3 and gain[3] == pytest.approx(0.002)
    # Without the default in the grid the best mean wins.
    assert choose(samples, None, 3, margin=1.5)[0] == 2


def test_one_split_takes_the_error_of_the_per_sample_differences():
    choose = psdmetric._bregman._cv_rule.stepwise_choice
    rng = np.random.RandomState(0)
    default = rng.rand(400)
    steady, noisy = default + 0.01, default + 0.02 + rng.randn(400) * 0.5
    best, gain, error, _ = choose([np.vstack([default, steady, noisy])], 0, 3, margin=1.5)
    np.testing.assert_allclose(error[2], np.std(noisy - default, ddof=1) / 20)
    assert best == 1 and error[1] == pytest.approx(0, abs=1e-15)
