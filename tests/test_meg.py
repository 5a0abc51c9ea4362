"""MEG: compiled pass vs NumPy reference, Lemma 3.2's loss bound, invariants, partial_fit."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from psdmetric import MEG, DistanceTargets, pairs_from_labels
from psdmetric._online._meg_kernels import meg_pass


def reference_meg(X, pairs, targets, eta, sides):
    """Plain NumPy MEG (Tsuda et al. eq. 4) on the dense logarithm, from W₁ = I/d.

    An example within its bound (``side · (ŷ − y) < 0``) has no error.
    """
    d = X.shape[1]
    S, losses = np.zeros((d, d)), []
    for (i, j), y, side in zip(pairs, targets, sides):
        values, vectors = np.linalg.eigh(S)
        W = (vectors * np.exp(values - values.max())) @ vectors.T
        W /= np.trace(W)
        z = X[i] - X[j]
        prediction = z @ W @ z
        error = 0.0 if side * (prediction - y) < 0 else prediction - y
        losses.append(error**2)
        S = S - 2 * eta * error * np.outer(z, z)
    values, vectors = np.linalg.eigh(S)
    W = (vectors * np.exp(values - values.max())) @ vectors.T
    return W / np.trace(W), np.array(losses)


def random_examples(rng, n_samples, n_features, n_pairs):
    X = rng.randn(n_samples, n_features)
    pairs = rng.choice(n_samples, size=(n_pairs, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    lengths = ((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1)
    return X, pairs, rng.uniform(0, 1, len(pairs)) * lengths / n_features


@pytest.mark.parametrize("bounds", [False, True], ids=["targets", "bounds"])
def test_compiled_pass_equals_numpy_reference(bounds):
    rng = np.random.RandomState(0)
    X, pairs, targets = random_examples(rng, 40, 5, 300)
    sides = rng.choice([-1.0, 1.0], len(pairs)) if bounds else np.zeros(len(pairs))
    eta = 0.3 / ((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1).max() ** 2
    Q, W, losses = np.zeros(5), np.eye(5, order="F"), np.empty(len(pairs))
    total = meg_pass(np.ascontiguousarray(X), np.ascontiguousarray(pairs), targets, sides,
                     eta, Q, W, losses)
    expected_W, expected_losses = reference_meg(X, pairs, targets, eta, sides)
    if bounds:  # some examples were within their bounds, some not
        assert 0 < np.sum(expected_losses == 0) < len(pairs)
    learned = (W * np.exp(Q)) @ W.T / np.exp(Q).sum()
    assert_allclose(learned, expected_W, rtol=0, atol=1e-12)
    assert_allclose(losses, expected_losses, rtol=1e-9, atol=1e-15)
    assert total == pytest.approx(expected_losses.sum(), rel=1e-12)


def kernel_examples(rng, n_objects, n_examples, rank=3, noise=0.0):
    """Distance examples of a trace-one target kernel U (Tsuda et al., 2005, §5)."""
    factor = rng.randn(n_objects, rank)
    U = factor @ factor.T
    U /= np.trace(U)
    pairs = rng.choice(n_objects, size=(3 * n_examples, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]][:n_examples]
    # X_t has ½ on the diagonal entries of a and b and −½ off-diagonal: tr(U X_t) below.
    a, b = pairs.T
    targets = 0.5 * (U[a, a] + U[b, b] - 2 * U[a, b])
    targets = np.maximum(targets + noise * rng.randn(len(pairs)), 0.0)
    return U, pairs, targets


def von_neumann_divergence(U, W):
    u, U_vectors = np.linalg.eigh(U)
    w, W_vectors = np.linalg.eigh(W)
    u_log_u = np.sum(u[u > 0] * np.log(u[u > 0]))
    return u_log_u - np.sum(u[:, None] * (U_vectors.T @ W_vectors) ** 2 * np.log(w)[None, :])


@pytest.mark.parametrize("c", [0.5, 2.0, 20.0])
@pytest.mark.parametrize("noise", [0.0, 0.002])
def test_total_loss_is_under_the_relative_loss_bound_of_lemma_3_2(c, noise):
    rng = np.random.RandomState(int(10 * c))
    n = 12
    U, pairs, targets = kernel_examples(rng, n, 3000, noise=noise)
    # r ≥ λmax(X_t) − λmin(X_t) = 1 for these instances; the lemma's rate for c:
    r = 1.0
    eta = 2 * c / (r**2 * (2 + c))
    model = MEG(eta=eta).partial_fit(np.eye(n) / np.sqrt(2),
                                     constraints=DistanceTargets(pairs, targets))
    a, b = pairs.T
    comparator_loss = np.sum((0.5 * (U[a, a] + U[b, b] - 2 * U[a, b]) - targets) ** 2)
    bound = ((1 + c / 2) * comparator_loss
             + (0.5 + 1 / c) * r**2 * von_neumann_divergence(U, np.eye(n) / n))
    assert model.eta_ == pytest.approx(eta)
    assert 0 < model.cumulative_loss_ <= bound
    # It learns: the last examples are predicted far better than the first ones.
    K = model.get_mahalanobis_matrix()
    assert np.abs(0.5 * (K[a, a] + K[b, b] - 2 * K[a, b]) - targets)[-200:].mean() < (
        0.2 * np.abs(1 / n - targets[:200]).mean())


@pytest.mark.parametrize("c", [0.5, 2.0])
def test_hinge_loss_is_under_the_relative_loss_bound_of_lemma_3_2(c):
    """With labels, an example within its bound is skipped (no loss, no update).

    Every other example is an ordinary MEG step, for which Lemma 3.2's per-step
    inequality holds; a skipped one changes nothing. Summed, the squared hinge loss
    obeys the lemma's bound with the comparator's squared loss over all examples.
    """
    rng = np.random.RandomState(int(10 * c) + 1)
    n = 12
    U, pairs, exact = kernel_examples(rng, n, 3000)
    labels = rng.choice([-1, 1], len(pairs))
    targets = np.maximum(exact * (1 + 0.3 * labels * rng.rand(len(pairs)))
                         + 0.002 * rng.randn(len(pairs)), 0.0)
    eta = 2 * c / (2 + c)  # r = 1
    model = MEG(eta=eta).partial_fit(np.eye(n) / np.sqrt(2),
                                     constraints=DistanceTargets(pairs, targets, labels))
    comparator_loss = np.sum((exact - targets) ** 2)
    bound = (1 + c / 2) * comparator_loss + (0.5 + 1 / c) * von_neumann_divergence(U, np.eye(n) / n)
    assert 0 < model.cumulative_loss_ <= bound
    # Without the labels the same examples are squared-loss targets: a larger loss.
    squared = MEG(eta=eta).partial_fit(np.eye(n) / np.sqrt(2),
                                       constraints=DistanceTargets(pairs, targets))
    assert model.cumulative_loss_ < squared.cumulative_loss_


@pytest.mark.parametrize("rate", [1.0, 100.0])
def test_invariants_hold_over_a_hundred_thousand_updates(rate):
    rng = np.random.RandomState(3)
    X, pairs, targets = random_examples(rng, 60, 6, 110_000)
    pairs, targets = pairs[:100_000], targets[:100_000]
    lengths = ((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1)
    # rate 1: Lemma 3.2's η for c = 2; rate 100: steps that drive W close to singular.
    model = MEG(eta=rate / lengths[:10_000].max() ** 2)
    for chunk in np.array_split(np.arange(len(pairs)), 10):
        model.partial_fit(X, constraints=DistanceTargets(pairs[chunk], targets[chunk]))
        W = model.get_mahalanobis_matrix()
        assert np.all(np.isfinite(W))
        assert_allclose(W, W.T, rtol=0, atol=1e-15)
        assert np.trace(W) == pytest.approx(1.0, abs=1e-12)
        # W = V e^Λ Vᵀ / tr e^Λ with finite Λ (max 0) and orthogonal V: positive definite.
        log_eigenvalues, eigenvectors = model._log_eigenvalues, model._eigenvectors
        assert np.all(np.isfinite(log_eigenvalues)) and log_eigenvalues.max() == 0
        assert_allclose(eigenvectors.T @ eigenvectors, np.eye(6), rtol=0, atol=1e-11)
        if rate == 1.0:
            assert np.linalg.eigvalsh(W).min() > 1e-3
    assert model.n_iter_ == 10
    assert np.isfinite(model.cumulative_loss_)


def test_partial_fit_over_chunks_equals_one_pass_of_fit():
    rng = np.random.RandomState(4)
    X, pairs, targets = random_examples(rng, 50, 4, 400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        full = MEG(eta=0.02, max_iter=1).fit(X, constraints=DistanceTargets(pairs, targets))
    online = MEG(eta=0.02)
    for chunk in np.array_split(np.arange(len(pairs)), 7):
        online.partial_fit(X, constraints=DistanceTargets(pairs[chunk], targets[chunk]))
    assert_allclose(online.components_, full.components_, rtol=0, atol=1e-13)
    assert online.cumulative_loss_ == pytest.approx(full.cumulative_loss_, rel=1e-12)


@pytest.mark.parametrize("n_classes, expected_pairs", [(2, 40 * 2**2), (8, 4 * 64)])
def test_random_pairs_are_40_c_squared_at_most_4_per_sample(n_classes, expected_pairs):
    # 64 samples: 160 pairs for two classes (under 256); 2,560 asked for eight, capped.
    rng = np.random.RandomState(6)
    X = rng.randn(64, 3)
    y = np.arange(64) % n_classes
    model = MEG(n_neighbors=None, max_iter=1, random_state=0).fit(X, y)
    expected = pairs_from_labels(y, expected_pairs, np.random.RandomState(0))
    assert len(model.constraints_.pairs) == expected_pairs
    assert (sorted(map(tuple, model.constraints_.pairs))
            == sorted(map(tuple, expected.pairs)))


@pytest.mark.parametrize("ratio", [1.5, 2.0])
def test_label_targets_shrink_or_stretch_each_pair_at_the_trace_one_starts_total(ratio):
    rng = np.random.RandomState(5)
    X = rng.randn(60, 4)
    y = (X[:, 0] > 0).astype(int)
    model = MEG(target_ratio=ratio, random_state=0).fit(X, y)
    pairs = model.constraints_.pairs
    expected = pairs_from_labels(y, X=X, n_neighbors=3)  # the default neighbour pairs
    assert sorted(map(tuple, pairs)) == sorted(map(tuple, expected.pairs))
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    start = ((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2).sum(axis=1) / 4  # under W₁ = I / 4
    stretched = np.where(same, start / ratio, start * ratio)
    assert_allclose(model.constraints_.distances, stretched * start.sum() / stretched.sum(),
                    rtol=1e-14)
    assert model.constraints_.distances.sum() == pytest.approx(start.sum(), rel=1e-14)
    assert model.eta_ == pytest.approx(1 / start.max() ** 2 / 16)  # "auto": Lemma 3.2, c = 2


def test_kernel_mode_instances_have_the_seed_convention():
    # With X = I/√2 the first prediction for objects (a, b) is tr(W₁ X_t) = 1/n.
    n = 8
    model = MEG(eta=1.0).partial_fit(np.eye(n) / np.sqrt(2),
                                     constraints=DistanceTargets([[2, 5]], [0.4]))
    assert model.cumulative_loss_ == pytest.approx((1 / n - 0.4) ** 2, rel=1e-14)
    K = model.get_mahalanobis_matrix()
    # One update: W ∝ exp(−2η(ŷ − y) X_t) moves weight onto e_a − e_b.
    assert K[2, 5] < 0 and K[2, 2] > 1 / n


@pytest.mark.parametrize("n_neighbors", [3, None], ids=["neighbours", "random"])
def test_learns_a_useful_metric_and_is_reproducible(n_neighbors):
    rng = np.random.RandomState(6)
    X = rng.randn(200, 5)
    y = (X[:, 1] > 0).astype(int)
    first = MEG(n_neighbors=n_neighbors, random_state=0).fit(X, y)
    second = MEG(n_neighbors=n_neighbors, random_state=0).fit(X, y)
    assert np.array_equal(first.components_, second.components_)
    M = first.get_mahalanobis_matrix()
    weights = np.diag(M)
    assert weights[1] > 1.3 * np.delete(weights, 1).max()  # the informative feature
    assert linalg.norm(M - M.T) == 0


@pytest.mark.parametrize("load", ["iris", "wine", "breast_cancer"])
def test_default_fit_stops_by_its_rule_without_warning(load):
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(datasets, f"load_{load}")(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MEG(random_state=0).fit(X, y)
    assert 1 < model.n_iter_ < model.max_iter


def test_principal_axes_path_keeps_trace_one_on_the_axes():
    # The shared path is tested in test_online_api.py; MEG's W is trace one on the span.
    rng = np.random.RandomState(7)
    X = rng.randn(80, 30) * np.linspace(3, 0.1, 30)
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    M = MEG(n_components=6, random_state=0).fit(X, y).get_mahalanobis_matrix()
    assert np.trace(M) == pytest.approx(1.0, rel=1e-12)
    assert np.sum(np.linalg.eigvalsh(M) > 1e-12) == 6


def test_auto_components_learn_on_all_features_up_to_100():
    rng = np.random.RandomState(8)
    X = rng.randn(150, 101)
    y = (X[:, 0] > 0).astype(int)
    wide = MEG(max_iter=1, random_state=0).fit(X, y)
    assert wide.components_.shape == (100, 101)
    narrow = MEG(max_iter=2, random_state=0).fit(X[:, :100], y)
    every = MEG(max_iter=2, n_components=None, random_state=0).fit(X[:, :100], y)
    assert narrow.components_.shape == (100, 100)
    assert np.array_equal(narrow.components_, every.components_)


def test_partial_fit_keeps_the_axes_of_its_first_chunk():
    rng = np.random.RandomState(9)
    X = rng.randn(120, 12) * np.linspace(2, 0.5, 12)
    y = np.arange(120) % 3
    model = MEG(n_components=4, random_state=0).partial_fit(X[:60], y[:60])
    first = model._axes.copy()
    model.partial_fit(X[60:], y[60:])
    assert np.array_equal(model._axes, first)
    assert model.components_.shape == (4, 12)
