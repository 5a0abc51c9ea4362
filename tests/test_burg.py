"""Burg learners: compiled passes vs NumPy references, Lemma 2, Theorem 2, the API."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import (
    BurgRegressor,
    DistanceTargets,
    OnlineLogDet,
    distance_targets_from_labels,
)
from psdmetric._online._burg_kernels import burg_matrix_pass, burg_vector_pass


def reference_matrix_pass(W, Z, targets, eta, scale, sides):
    """Alg. 2 literally on the dense W, learning rate halved: the gold standard.

    A pair within its bound (``side · (ŷ − y) < 0``) is an example with no error. A pair
    below its target has its own rate cut to half Alg. 2's bound; later pairs start
    again from ``eta``.
    """
    identity = np.eye(len(W))
    rates, predictions = [], []
    for z, target, side in zip(Z, targets, sides):
        length = np.linalg.norm(z)
        X = np.outer(z, z) / length**2
        target = target / (scale * length**2)
        prediction = np.trace(W @ X)
        predictions.append(prediction)
        if side * (prediction - target) < 0:
            rates.append(eta)
            continue
        rate = eta
        if prediction < target:
            shifted = identity + np.linalg.inv(np.linalg.inv(W) - identity)
            bound = 1 / (2 * (target - prediction) * np.trace(shifted @ W @ X))
            rate = min(eta, 0.5 * bound)
        W = np.linalg.inv(np.linalg.inv(W) + 2 * rate * (prediction - target) * X)
        rates.append(rate)
    return W, np.array(predictions), np.array(rates)


def reference_vector_pass(w, X, y, eta):
    """Alg. 1 with the sign-general, halved learning-rate rule."""
    predictions = []
    for x, target in zip(X, y):
        prediction = w @ x
        error = prediction - target
        push = np.max(-error * x * w)
        if push > 0:
            eta = min(eta, 0.5 / (2 * push))
        w = 1 / (1 / w + 2 * eta * error * x)
        predictions.append(prediction)
    return w, np.array(predictions), eta


def run_matrix_pass(F, G, X, pairs, targets, eta, scale, sides=None):
    n = len(pairs)
    sides = np.zeros(n) if sides is None else sides
    predictions, relative, rates = np.empty(n), np.empty(n), np.empty(n)
    burg_matrix_pass(X, pairs, targets, sides, F, G, eta, scale, predictions=predictions,
                     relative_targets=relative, rates=rates)
    return predictions, relative, rates


def initial_factors(d, weight):
    identity = np.eye(d)
    return (np.asfortranarray(np.sqrt(1 / weight - 1) * identity),
            np.asfortranarray(np.sqrt(1 / weight) * identity))


def hidden_metric(d, seed, low=0.05, high=0.9):
    """A random U with eigenvalues in [low, high], so 0 ≺ U ≺ I."""
    rng = np.random.RandomState(seed)
    Q = np.linalg.qr(rng.randn(d, d))[0]
    return Q @ np.diag(rng.uniform(low, high, d)) @ Q.T


def ld_divergence(X, Y):
    product = X @ np.linalg.inv(Y)
    return np.trace(product) - np.linalg.slogdet(product)[1] - len(X)


@pytest.mark.parametrize("bounds", [False, True], ids=["targets", "bounds"])
def test_matrix_pass_equals_numpy_reference(bounds):
    rng = np.random.RandomState(0)
    d, n_pairs, scale, weight = 6, 300, 2.0, 1 / 6
    X = rng.randn(50, d)
    pairs = rng.randint(0, 50, (n_pairs, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    # Targets both reachable and unreachable (above the ceiling scale · ‖z‖²).
    targets = rng.uniform(0, 1.1, len(pairs)) * scale * np.einsum("ij,ij->i", Z, Z)
    sides = rng.choice([-1.0, 1.0], len(pairs)) if bounds else np.zeros(len(pairs))
    F, G = initial_factors(d, weight)
    predictions, _, rates = run_matrix_pass(F, G, X, pairs, targets, 40.0, scale, sides)
    W_ref, predictions_ref, rates_ref = reference_matrix_pass(
        weight * np.eye(d), Z, targets, 40.0, scale, sides)
    assert_allclose(predictions, predictions_ref, rtol=1e-9)
    assert_allclose(rates, rates_ref, rtol=1e-9)
    # Cuts of the rate are per pair: pairs after the deepest cut run at the full rate.
    deepest = np.argmin(rates)
    assert rates[deepest] < 1e-2 * 40.0 and np.any(rates[deepest + 1:] == 40.0)
    assert_allclose(np.linalg.inv(np.eye(d) + F @ F.T), W_ref, rtol=0, atol=1e-10)
    assert_allclose(G @ G.T, np.eye(d) + F @ F.T, rtol=1e-10)


def test_vector_pass_equals_numpy_reference():
    rng = np.random.RandomState(1)
    X = rng.randn(400, 7)  # inputs of both signs exercise the general rule
    y = X @ rng.uniform(0, 1, 7) + 0.1 * rng.randn(400)
    w = np.full(7, 1 / 7)
    predictions, rates = np.empty(400), np.empty(400)
    eta = burg_vector_pass(X, y, w, 5.0, predictions, rates)
    w_ref, predictions_ref, eta_ref = reference_vector_pass(np.full(7, 1 / 7), X, y, 5.0)
    assert_allclose(w, w_ref, rtol=1e-10)
    assert_allclose(predictions, predictions_ref, rtol=1e-10, atol=1e-12)
    assert eta == pytest.approx(eta_ref, rel=1e-12)


def test_lemma2_invariant_over_1e5_random_updates():
    """0 ≺ W ≺ I after each of 10⁵ updates, targets often beyond reach (W pushed to I).

    W = (I + K)⁻¹ with K = F Fᵀ, so eig(W) = 1 / (1 + σ²) and eig(I − W) = σ² / (1 + σ²)
    for the singular values σ of F: both are positive exactly when σ_min(F) > 0. The
    eigenvalues are read from σ because near I, ``1 − eig(W)`` falls below the spacing of
    floating-point numbers around 1 while σ² is still resolved to full relative accuracy.
    """
    rng = np.random.RandomState(2)
    d, n_updates = 4, 100_000
    F, G = initial_factors(d, 1 / d)
    X = rng.randn(n_updates, 2, d) * rng.lognormal(0, 2, (n_updates, 1, 1))
    ceilings = np.einsum("ij,ij->i", X[:, 0] - X[:, 1], X[:, 0] - X[:, 1])
    targets = rng.uniform(0, 2, n_updates) * ceilings
    pair = np.array([[0, 1]], dtype=np.intp)
    out = dict(predictions=np.empty(1), relative_targets=np.empty(1), rates=np.empty(1))
    factors = np.empty((n_updates, d, d))
    for t in range(n_updates):
        burg_matrix_pass(X[t], pair, targets[t:t + 1], np.zeros(1), F, G, 100.0, 1.0, **out)
        factors[t] = F
    eigenvalues_K = np.linalg.svd(factors, compute_uv=False) ** 2
    eigenvalues_W = 1 / (1 + eigenvalues_K)
    gaps_to_identity = eigenvalues_K / (1 + eigenvalues_K)
    assert eigenvalues_W.min() > 0 and gaps_to_identity.min() > 0
    # The updates did drive W towards I, where the invariant is hardest to keep.
    assert eigenvalues_K.min() < 1e-6
    # The two factors still describe the same W after 10⁵ independent rank-one updates.
    assert_allclose(G @ G.T, np.eye(d) + F @ F.T, rtol=1e-8)
    W = np.linalg.inv(G @ G.T)
    assert np.linalg.eigvalsh(W).min() > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem2_loss_bound_on_noiseless_data(seed):
    """Σ η_t (ŷ_t − y_t)² ≤ D_ld(U, W₀), so the cumulative loss is ≤ D_ld(U, W₀) / min η_t.

    Noiseless targets ``y = κ zᵀUz`` with ``0 ≺ U ≺ I``, instances normalised to R = 1,
    η ≤ ½ in the algorithm's units, the condition under which the bound holds.
    """
    rng = np.random.RandomState(seed)
    d, n_pairs = 5, 3000
    U = hidden_metric(d, seed)
    X = rng.randn(200, d)
    pairs = rng.randint(0, 200, (n_pairs, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    targets = 3.0 * np.einsum("ij,jk,ik->i", Z, U, Z)
    model = OnlineLogDet(eta=0.5 / d**2, scale=3.0, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, constraints=DistanceTargets(pairs, targets))
    weight = model.initial_weight_
    divergence = ld_divergence(U, weight * np.eye(d))

    F, G = initial_factors(d, weight)
    predictions, relative, rates = run_matrix_pass(F, G, X, pairs, targets, 0.5, 3.0)
    assert np.sum(rates * (predictions - relative) ** 2) <= divergence
    assert model.cumulative_loss_ <= divergence / rates.min()
    assert np.sum((predictions - relative) ** 2) == pytest.approx(model.cumulative_loss_)
    # And the learner does find U: the late predictions are nearly exact.
    assert np.mean(np.abs(predictions - relative)[-300:]) < 0.05 * np.mean(relative)


@pytest.mark.parametrize("seed", [0, 1])
def test_theorem2_loss_bound_holds_for_bounds_met_by_the_comparator(seed):
    """With labels, the loss is the squared hinge ``max(0, side · (ŷ − y))²``.

    For any ``0 ≺ U ≺ I`` within every bound, a violated example has
    ``e (ŷ − tr(UX)) ≥ e²`` (``e = ŷ − y``), so each step lowers ``D_ld(U, W)`` by at
    least as much as Theorem 2's step on exact targets: ``Σ η_t e_t² ≤ D_ld(U, W₀)``.
    """
    rng = np.random.RandomState(seed)
    d, n_pairs, scale = 5, 3000, 3.0
    U = hidden_metric(d, seed)
    X = rng.randn(200, d)
    pairs = rng.randint(0, 200, (n_pairs, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    labels = rng.choice([-1, 1], len(pairs))
    # Upper bounds above, lower bounds below U's distances: U meets all of them.
    targets = scale * np.einsum("ij,jk,ik->i", Z, U, Z) * (1 + 0.5 * labels * rng.rand(len(pairs)))
    F, G = initial_factors(d, 1 / d)
    predictions, relative, rates = run_matrix_pass(F, G, X, pairs, targets, 0.5, scale,
                                                   labels.astype(float))
    errors = predictions - relative
    hinge = np.where(labels * errors < 0, 0.0, errors)
    assert 0 < np.sum(hinge == 0) < len(pairs)
    assert np.sum(rates * hinge**2) <= ld_divergence(U, np.eye(d) / d)
    model = OnlineLogDet(eta=0.5 / d**2, scale=scale, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, constraints=DistanceTargets(pairs, targets, labels))
    assert model.cumulative_loss_ == pytest.approx(np.sum(hinge**2), rel=1e-12)
    # The late examples are nearly all within their bounds.
    assert np.mean(hinge[-300:] != 0) < 0.5 * np.mean(hinge[:300] != 0)


def test_pairs_from_labels_are_visited_in_random_order():
    """The neighbour pairs of the generator, shuffled: similar and dissimilar interleave."""
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = OnlineLogDet(random_state=0, max_iter=1).fit(X, y)
    got = model.constraints_
    generated = distance_targets_from_labels(X, y, None, np.random.RandomState(0),
                                             n_neighbors=model.n_neighbors)
    rows = np.column_stack([got.pairs, got.distances, got.labels])
    expected = np.column_stack([generated.pairs, generated.distances, generated.labels])
    assert_array_equal(np.unique(rows, axis=0), np.unique(expected, axis=0))
    # The generator lists every similar pair first; the pass must not.
    assert np.all(np.diff(generated.labels) <= 0)
    half = len(got.labels) // 2
    assert 0.3 < np.mean(got.labels[:half] == 1) < 0.7


def test_defaults_converge_within_max_iter_on_digits():
    """No ConvergenceWarning with the defaults on a set whose folds used to reach max_iter."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = OnlineLogDet(random_state=0).fit(X, y)
    assert model.n_iter_ < model.max_iter


def test_partial_fit_on_chunks_equals_one_pass():
    rng = np.random.RandomState(3)
    X = rng.randn(90, 4)
    chunks = [np.arange(0, 30), np.arange(30, 60), np.arange(60, 90)]
    local_pairs = [rng.randint(0, 30, (40, 2)) for _ in chunks]
    local_pairs = [p[p[:, 0] != p[:, 1]] for p in local_pairs]
    targets = [rng.uniform(0.1, 8.0, len(p)) for p in local_pairs]
    online = OnlineLogDet(eta=0.3, scale=4.0)
    for rows, pairs, target in zip(chunks, local_pairs, targets):
        online.partial_fit(X[rows], constraints=DistanceTargets(pairs, target))
    all_pairs = np.concatenate([p + rows[0] for p, rows in zip(local_pairs, chunks)])
    all_targets = DistanceTargets(all_pairs, np.concatenate(targets))
    one_pass = OnlineLogDet(eta=0.3, scale=4.0).partial_fit(X, constraints=all_targets)
    assert_allclose(online.get_mahalanobis_matrix(), one_pass.get_mahalanobis_matrix(),
                    rtol=1e-12, atol=1e-12)
    # fit's one pass makes the same steps (its model is their average, tested below).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = OnlineLogDet(eta=0.3, scale=4.0, max_iter=1).fit(X, constraints=all_targets)
    assert online.cumulative_loss_ == pytest.approx(one_pass.cumulative_loss_, rel=1e-12)
    assert online.cumulative_loss_ == pytest.approx(fitted.cumulative_loss_, rel=1e-12)
    assert online.n_iter_ == 3


def test_fit_averages_the_inverse_over_every_step():
    """fit's M is κ (mean of W⁻¹ over every step of every pass)⁻¹; a step is a partial_fit
    on one pair, so stepping pair by pair gives the iterates whose mean fit returns."""
    rng = np.random.RandomState(5)
    X = rng.randn(60, 4)
    pairs = rng.randint(0, 60, (150, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    distances = rng.uniform(0.1, 8.0, len(pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = OnlineLogDet(eta=0.3, scale=4.0, max_iter=3, tol=0.0).fit(
            X, constraints=DistanceTargets(pairs, distances))
    stepper, inverses = OnlineLogDet(eta=0.3, scale=4.0), []
    for _ in range(3):
        for pair, distance in zip(pairs, distances):
            stepper.partial_fit(X, constraints=DistanceTargets(pair[None], [distance]))
            inverses.append(np.linalg.inv(stepper.get_mahalanobis_matrix() / 4.0))
    expected = 4.0 * np.linalg.inv(np.mean(inverses, axis=0))
    assert_allclose(model.get_mahalanobis_matrix(), expected, rtol=1e-9, atol=1e-12)
    assert model.cumulative_loss_ == pytest.approx(stepper.cumulative_loss_, rel=1e-12)
    # The steps did move W, so the average is neither the last iterate nor the mean
    # over the ends of the passes.
    assert not np.allclose(expected, stepper.get_mahalanobis_matrix(), rtol=1e-3)
    pass_ends = 4.0 * np.linalg.inv(np.mean(inverses[len(pairs) - 1::len(pairs)], axis=0))
    assert not np.allclose(expected, pass_ends, rtol=1e-3)


def test_fit_resets_and_partial_fit_continues():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = OnlineLogDet(random_state=0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = model.fit(X, y).get_mahalanobis_matrix()
        model.partial_fit(X, y)
        assert not np.allclose(model.get_mahalanobis_matrix(), first)
        assert_allclose(model.fit(X, y).get_mahalanobis_matrix(), first, rtol=1e-12)


def test_auto_scale_fits_the_median_target_and_is_scale_invariant():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = OnlineLogDet(random_state=0).fit(X, y)
        scaled = OnlineLogDet(random_state=0).fit(1e3 * X, y)
    c = model.constraints_
    Z = X[c.pairs[:, 0]] - X[c.pairs[:, 1]]
    ratios = c.distances / np.einsum("ij,ij->i", Z, Z)
    assert model.scale_ == pytest.approx(2 * ratios.max())
    assert model.scale_ * model.initial_weight_ == pytest.approx(np.median(ratios))
    # Targets from labels are percentiles of the squared distances: u for similar pairs,
    # l for dissimilar ones.
    all_squared = np.concatenate([np.sum((X[i] - X[i + 1:]) ** 2, axis=1)
                                  for i in range(len(X))])
    assert_allclose(np.unique(c.distances), np.percentile(all_squared, [5, 95]),
                    rtol=1e-12)
    assert_allclose(scaled.get_mahalanobis_matrix(), model.get_mahalanobis_matrix(),
                    rtol=1e-8, atol=1e-10)


def test_learned_metric_beats_euclidean_knn_on_wine():
    X, y = load_wine(return_X_y=True)
    euclidean = make_pipeline(StandardScaler(), KNeighborsClassifier(3))
    learned = make_pipeline(StandardScaler(), OnlineLogDet(random_state=0),
                            KNeighborsClassifier(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        learned_accuracy = cross_val_score(learned, X, y).mean()
        assert learned_accuracy > cross_val_score(euclidean, X, y).mean()


def test_eta_is_a_grid_search_parameter():
    X, y = load_wine(return_X_y=True)
    pipeline = make_pipeline(StandardScaler(), OnlineLogDet(random_state=0, max_iter=3),
                             KNeighborsClassifier(3))
    grid = {"onlinelogdet__eta": [0.01, 0.1, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = GridSearchCV(pipeline, grid, cv=3).fit(X, y)
        best = search.best_params_["onlinelogdet__eta"]
        alone = make_pipeline(StandardScaler(), OnlineLogDet(eta=best, random_state=0,
                                                             max_iter=3)).fit(X, y)
    assert best in grid["onlinelogdet__eta"]
    assert_allclose(search.best_estimator_[1].components_, alone[1].components_)
    assert search.best_estimator_[1].eta == best


def test_burg_regressor_learns_positive_weights_online():
    rng = np.random.RandomState(4)
    u = np.abs(rng.randn(20))
    u /= np.linalg.norm(u)
    X = np.abs(rng.randn(3000, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = X @ u
    model = BurgRegressor(eta=10.0)
    for chunk in np.array_split(np.arange(3000), 6):
        model.partial_fit(X[chunk], y[chunk])
    assert np.all(model.coef_ > 0)
    assert model.n_iter_ == 6
    one_pass = BurgRegressor(eta=10.0, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one_pass.fit(X, y)
    assert_allclose(model.coef_, one_pass.coef_, rtol=1e-12)
    assert model.cumulative_loss_ == pytest.approx(one_pass.cumulative_loss_, rel=1e-12)
    assert np.mean((model.predict(X) - y) ** 2) < 1e-3 * np.mean(y**2)


def test_burg_regressor_weights_stay_positive_under_adversarial_signs():
    rng = np.random.RandomState(5)
    X = rng.standard_cauchy((2000, 6))
    y = rng.standard_cauchy(2000) * 100
    model = BurgRegressor(eta=1e3, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    assert np.all(model.coef_ > 0) and np.all(np.isfinite(model.coef_))


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_burg_regressor_stops_when_a_pass_changes_the_loss_by_tol_of_sum_y2(noise):
    # The loss of each pass, from one-pass partial_fit calls over the whole data.
    rng = np.random.RandomState(7)
    X = np.abs(rng.randn(500, 5))
    y = X @ np.array([0.5, 0.1, 0.2, 0.1, 0.1]) + noise * rng.randn(500)
    tol, by_passes, losses = 1e-3, BurgRegressor(), []
    for _ in range(50):
        before = getattr(by_passes, "cumulative_loss_", 0.0)
        losses.append(by_passes.partial_fit(X, y).cumulative_loss_ - before)
    expected = 1 + next(k for k in range(1, 50)
                        if abs(losses[k] - losses[k - 1]) <= tol * (y @ y))
    model = BurgRegressor(max_iter=50, tol=tol).fit(X, y)
    assert model.n_iter_ == expected > 1  # noiseless data too: the loss → 0 there
    assert model.cumulative_loss_ == pytest.approx(sum(losses[:expected]), rel=1e-12)


@pytest.mark.parametrize("Estimator", [OnlineLogDet, BurgRegressor])
def test_max_iter_warns(Estimator):
    rng = np.random.RandomState(6)
    X = np.abs(rng.randn(40, 3))
    y = rng.randint(0, 2, 40) if Estimator is OnlineLogDet else rng.rand(40)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        Estimator(max_iter=1, tol=0.0).fit(X, y)


@pytest.mark.parametrize("Estimator", [OnlineLogDet, BurgRegressor])
def test_bad_parameters_are_rejected(Estimator):
    X = np.abs(np.random.RandomState(7).randn(10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="eta"):
        Estimator(eta=0.0).fit(X, y)
    if Estimator is OnlineLogDet:
        with pytest.raises(ValueError, match="scale"):
            Estimator(scale=-1.0).fit(X, y)
