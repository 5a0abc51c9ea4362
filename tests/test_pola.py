"""POLA: compiled pass vs NumPy reference, invariants, Theorem 1, batch mode, kernels."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import PolynomialFeatures

from psdmetric import POLA, KernelPOLA, PairConstraints
from psdmetric._online._pola_kernels import pola_pass
from psdmetric._online._pola_projection import DENSE_BELOW


def reference_pola(Z, labels, A, b, gamma):
    """Fig. 1 of Shalev-Shwartz et al. (2004) on dense A, projected by a full eigendecomposition."""
    losses = []
    for v, y in zip(Z, labels):
        loss = max(0.0, y * (v @ A @ v - b) + 1)
        losses.append(loss)
        if loss == 0:
            continue
        alpha = loss / ((v @ v) ** 2 + 1 + gamma)
        A = A - y * alpha * np.outer(v, v)
        b = b + y * alpha
        if y > 0:
            eigenvalues, eigenvectors = np.linalg.eigh(A)
            A = (eigenvectors * np.maximum(eigenvalues, 0)) @ eigenvectors.T
        else:
            b = max(b, 1.0)
    return A, b, np.array(losses)


def run_pass(Z, labels, A, b, gamma=0.0):
    """pola_pass on the pairs (Z[t], 0); returns the symmetric A, b and the losses."""
    d = Z.shape[1]
    X = np.ascontiguousarray(np.vstack([np.zeros(d), Z]))
    pairs = np.column_stack([np.arange(1, len(Z) + 1), np.zeros(len(Z), dtype=np.intp)])
    losses = np.empty(len(Z))
    b = pola_pass(X, pairs, np.asarray(labels, dtype=float), A, b, gamma, losses)
    return np.tril(A) + np.tril(A, -1).T, b, losses


def separable_pairs(n_pairs, d, seed, rank=2):
    """Pairs labelled by a hidden (A*, b*) with margin: y (b* − d²_{A*}) ≥ 1."""
    rng = np.random.RandomState(seed)
    H = rng.randn(d, rank)
    A_star = H @ H.T / d
    Z = rng.randn(4 * n_pairs, d) / np.sqrt(d)
    distances = np.einsum("ij,jk,ik->i", Z, A_star, Z)
    median = np.median(distances)
    scale = 2.0 / (np.percentile(distances, 60) - np.percentile(distances, 40))
    A_star, distances = scale * A_star, scale * distances
    b_star = scale * median
    keep = np.abs(distances - b_star) >= 1
    Z, distances = Z[keep][:n_pairs], distances[keep][:n_pairs]
    labels = np.where(distances <= b_star, 1.0, -1.0)
    return Z, labels, A_star, max(b_star, 1.0)


@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_compiled_pass_equals_numpy_reference(gamma):
    Z, labels, _, _ = separable_pairs(300, 7, seed=0)
    A = np.zeros((7, 7), order="F")
    A_kernel, b_kernel, losses = run_pass(Z, labels, A, 1.0, gamma)
    A_ref, b_ref, losses_ref = reference_pola(Z, labels, np.zeros((7, 7)), 1.0, gamma)
    assert_allclose(A_kernel, A_ref, rtol=0, atol=1e-10 * np.abs(A_ref).max())
    assert b_kernel == pytest.approx(b_ref, rel=1e-12)
    assert_allclose(losses, losses_ref, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(losses) > 50


@pytest.mark.parametrize("start", [0.0, 0.3])
def test_solves_between_refreshes_match_the_numpy_reference(start):
    """Many rounds on one eigendecomposition plus rank-one terms (Woodbury) vs full eigh.

    Random labels on d = 80 (above ``DENSE_BELOW``) make most similar pairs project (A
    singular along each removed direction until a dissimilar pair refills it): the hard
    case for the solves.
    """
    d = 80
    assert d >= DENSE_BELOW
    rng = np.random.RandomState(3)
    Z = rng.randn(400, d) / 6
    labels = np.where(rng.rand(400) < 0.5, 1.0, -1.0)
    A0 = start * np.eye(d)
    X = np.ascontiguousarray(np.vstack([np.zeros(d), Z]))
    pairs = np.column_stack([np.arange(1, 401), np.zeros(400, dtype=np.intp)])
    A, losses, counters = np.asfortranarray(A0), np.empty(400), np.zeros(4, dtype=np.intp)
    b = pola_pass(X, pairs, labels, A, 1.0, 0.5, losses, counters=counters)
    A = np.tril(A) + np.tril(A, -1).T
    A_ref, b_ref, losses_ref = reference_pola(Z, labels, A0, 1.0, 0.5)
    assert_allclose(A, A_ref, rtol=0, atol=1e-10 * np.abs(A_ref).max())
    assert b == pytest.approx(b_ref, rel=1e-12)
    assert_allclose(losses, losses_ref, rtol=1e-9, atol=1e-12)
    projections, refreshes, evaluations, dense = counters
    assert projections > 100
    assert evaluations > 5 * refreshes  # most solves ran between refreshes
    assert dense < evaluations / 10


# In the "scaled" case (v·v)² overflows to inf in the NumPy reference: α = 0, its exact limit.
@pytest.mark.filterwarnings("ignore:overflow encountered in scalar power:RuntimeWarning")
@pytest.mark.parametrize(
    "case",
    ["zero", "rank-deficient", "v-outside-range", "clustered", "tiny-step", "scaled"])
def test_projection_matches_eigendecomposition_on_hard_cases(case):
    """One similar-pair update from a crafted A: the secular solver vs a full eigh."""
    rng = np.random.RandomState(1)
    d = 6
    Q = np.linalg.qr(rng.randn(d, d))[0]
    v = rng.randn(d)
    spectrum = {
        "zero": np.zeros(d),
        "rank-deficient": np.array([0, 0, 0, 1.0, 2.0, 3.0]),
        "v-outside-range": np.array([0, 0, 1.0, 1.0, 2.0, 5.0]),
        "clustered": np.array([1.0, 1.0 + 1e-12, 1.0 + 2e-12, 2.0, 2.0, 2.0]),
        "tiny-step": np.array([1e-9, 1e-6, 1.0, 2.0, 3.0, 4.0]),
        "scaled": 1e-200 * np.arange(1.0, d + 1),
    }[case]
    A = (Q * spectrum) @ Q.T
    if case == "v-outside-range":
        v = Q[:, 0] + 0.3 * Q[:, 4]
    if case == "scaled":
        v = 1e100 * v
    if case == "tiny-step":
        v = Q[:, 0] + 1e-3 * Q[:, 3]
    threshold = v @ A @ v + 0.5  # loss 0.5 for a similar pair
    A_kernel, _, _ = run_pass(v[None], [1.0], np.asfortranarray(A), threshold)
    A_ref, _, _ = reference_pola(v[None], [1.0], A, threshold, 0.0)
    alpha = 0.5 / ((v @ v) ** 2 + 1)
    scale = np.abs(A).max() + alpha * (v @ v)  # the size of the matrices involved
    assert_allclose(A_kernel, A_ref, rtol=0, atol=1e-10 * scale)
    assert np.linalg.eigvalsh(A_kernel).min() >= -1e-12 * scale


def test_psd_and_threshold_invariants_after_every_update():
    rng = np.random.RandomState(2)
    d = 6
    # Inconsistent labels: many similar-pair updates that need the projection.
    Z = rng.randn(3000, d) * rng.lognormal(0, 0.5, (3000, 1))
    labels = rng.choice([-1.0, 1.0], 3000)
    A = np.zeros((d, d), order="F")
    b, projected = 1.0, 0
    X = np.zeros((2, d))
    pair = np.array([[1, 0]], dtype=np.intp)
    loss = np.empty(1)
    for v, y in zip(Z, labels):
        X[1] = v
        # The half-space step alone (Shalev-Shwartz et al., 2004, Fig. 1): it needs the PSD
        # projection when it leaves a negative eigenvalue.
        before = np.tril(A) + np.tril(A, -1).T
        hinge = max(0.0, y * (v @ before @ v - b) + 1.0)
        step = before - y * hinge / ((v @ v) ** 2 + 1.0) * np.outer(v, v)
        projected += np.linalg.eigvalsh(step).min() < -1e-12 * np.abs(step).max()
        b = pola_pass(X, pair, np.array([y]), A, b, 0.0, loss)
        eigenvalues = np.linalg.eigvalsh(np.tril(A) + np.tril(A, -1).T)
        assert eigenvalues.min() >= -1e-12 * max(eigenvalues.max(), 1e-300)
        assert b >= 1.0
    assert projected > 300


@pytest.mark.parametrize("start", [0.0, 0.5])
@pytest.mark.parametrize("seed", [0, 1])
def test_theorem1_squared_hinge_loss_bound_on_separable_pairs(seed, start):
    """Σ ℓ_τ² ≤ R (‖A* − A₁‖²_F + (b* − b₁)²), R ≥ ‖x − x'‖⁴ + 1, A₁ = start·I."""
    Z, labels, A_star, b_star = separable_pairs(400, 8, seed)
    squared = np.einsum("ij,jk,ik->i", Z, A_star, Z)
    assert np.all(labels * (b_star - squared) >= 1 - 1e-9)  # (A*, b*) separates
    R = np.max(np.sum(Z**2, axis=1) ** 2) + 1
    A = np.asfortranarray(start * np.eye(8))
    bound = R * (np.sum((A_star - A) ** 2) + (b_star - 1.0) ** 2)
    b, total, mistakes = 1.0, 0.0, 0
    for _ in range(5):
        _, b, losses = run_pass(Z, labels, A, b)
        total += np.sum(losses**2)
        mistakes += np.count_nonzero(losses >= 1)
    assert 0 < total <= bound
    assert mistakes <= bound


def test_batch_conversion_ends_with_every_training_loss_below_beta():
    Z, labels, A_star, b_star = separable_pairs(300, 6, seed=3)
    X = np.vstack([np.zeros(6), Z])
    pairs = np.column_stack([np.arange(1, len(Z) + 1), np.zeros(len(Z), dtype=int)])
    # The separable algorithm (Fig. 1) with the conversion of §6 alone: no tol stop.
    model = POLA(gamma=0.0, beta=0.2, tol=0.0, max_iter=500)
    model.fit(X, constraints=PairConstraints(pairs, labels))
    distances = model.pair_distance(np.stack([X[pairs[:, 0]], X[pairs[:, 1]]], axis=1),
                                    squared=True)
    assert np.max(np.maximum(0, labels * (distances - model.threshold_) + 1)) <= 0.2
    R = np.max(np.sum(Z**2, axis=1) ** 2) + 1
    passes_bound = R * (np.sum(A_star**2) + (b_star - 1) ** 2) / 0.2**2
    assert model.n_iter_ <= math.ceil(passes_bound)
    assert model.threshold_ >= 1
    pair_points = np.stack([X[pairs[:, 0]], X[pairs[:, 1]]], axis=1)
    assert model.pair_score(pair_points, labels) == 1.0


def test_inseparable_pairs_warn_at_max_iter():
    rng = np.random.RandomState(4)
    X = rng.randn(30, 3)
    y = rng.randint(0, 2, 30)
    # One pass: the loss-improvement rule needs a previous pass, so only max_iter stops.
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        POLA(max_iter=1, random_state=0).fit(X, y)


def _total_hinge_loss(model, X):
    pairs = model.constraints_.pairs
    squared = model.pair_distance(np.stack([X[pairs[:, 0]], X[pairs[:, 1]]], axis=1),
                                  squared=True)
    return np.maximum(0.0, model.constraints_.labels * (squared - model.threshold_) + 1).sum()


@pytest.mark.parametrize("tol", [1e-2, 1e-1])
def test_inseparable_pairs_stop_when_the_pass_loss_stops_improving(tol):
    rng = np.random.RandomState(4)
    X = rng.randn(30, 3)
    y = rng.randint(0, 2, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = POLA(tol=tol, max_iter=500, random_state=0).fit(X, y)
    n = model.n_iter_
    assert 1 < n < 500
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first, last, final = [
            _total_hinge_loss(POLA(tol=0.0, max_iter=k, random_state=0).fit(X, y), X)
            for k in (1, n - 1, n)]
        if n > 2:
            before = _total_hinge_loss(
                POLA(tol=0.0, max_iter=n - 2, random_state=0).fit(X, y), X)
            # The rule did not fire one pass earlier.
            assert before - last > tol * first
    assert _total_hinge_loss(model, X) == pytest.approx(final, rel=1e-12)
    # The last pass improved the total loss by at most tol times the first pass's.
    assert last - final <= tol * first


def test_pair_api_is_consistent_with_distances_and_threshold():
    rng = np.random.RandomState(5)
    X = rng.randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = POLA(gamma=1.0, max_iter=5, random_state=0).fit(X, y)
    pairs = np.stack([X[:20], X[20:]], axis=1)
    squared = model.pair_distance(pairs, squared=True)
    decision = model.pair_decision_function(pairs)
    assert_allclose(decision, model.threshold_ - squared)
    predicted = model.pair_predict(pairs)
    assert np.array_equal(predicted, np.where(squared <= model.threshold_, 1, -1))
    truth = np.where(y[:20] == y[20:], 1, -1)
    assert model.pair_score(pairs, truth) == np.mean(predicted == truth)
    with pytest.raises(ValueError, match="one label per pair"):
        model.pair_score(pairs, truth[:-1])
    with pytest.raises(ValueError, match=r"\+1 \(similar\) or -1"):
        model.pair_score(pairs, (truth + 1) // 2)
    with pytest.raises(ValueError, match="pairs must have shape"):
        model.pair_predict(X[:5])


def test_pairs_of_identical_points_are_skipped():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    constraints = PairConstraints([[0, 1], [0, 2], [2, 3]], [-1, 1, -1])
    model = POLA(gamma=0.0, max_iter=50).fit(X, constraints=constraints)
    assert model.n_iter_ < 50
    assert np.all(np.isfinite(model.components_))


# 70 features: the basis grows past DENSE_BELOW, so the solves run on a reduction whose
# reflectors leave the coordinates added since untouched.
@pytest.mark.parametrize("n_features", [5, 70])
@pytest.mark.parametrize("init", ["zero", "identity"])
def test_kernel_pola_with_linear_kernel_learns_the_same_distances(init, n_features):
    rng = np.random.RandomState(6)
    X = rng.randn(80, n_features) / 2 / np.sqrt(n_features / 5)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        linear = POLA(gamma=0.5, init=init, initial_threshold=1.0, max_iter=4,
                      random_state=0).fit(X, y)
        kernel = KernelPOLA(kernel="linear", init=init, gamma=0.5, initial_threshold=1.0,
                            max_iter=4, random_state=0)
        kernel.fit(X, y)
    pairs = np.stack([X[:40], X[40:]], axis=1)
    assert_allclose(kernel.pair_distance(pairs), linear.pair_distance(pairs), rtol=1e-8)
    assert kernel.threshold_ == pytest.approx(linear.threshold_, rel=1e-10)
    assert_allclose(kernel.get_mahalanobis_matrix(), linear.get_mahalanobis_matrix(),
                    rtol=0, atol=1e-9 * np.abs(linear.get_mahalanobis_matrix()).max())
    # The basis never exceeds the dimension of the span of the differences.
    assert kernel.embedding_.shape[1] <= n_features


def test_kernel_pola_partial_fit_reads_data_changed_in_place_afresh():
    """fit's later passes reuse the pairs' coordinates; a new partial_fit chunk must not.

    The second chunk comes in the same array and constraints objects as the first,
    its values changed in place: the model must equal one fed two separate arrays.
    """
    rng = np.random.RandomState(8)
    first, second = rng.randn(30, 3), rng.randn(30, 3)
    constraints = PairConstraints(np.column_stack([np.arange(15), np.arange(15, 30)]),
                                  np.where(rng.rand(15) < 0.5, 1, -1))
    buffer = first.copy()
    reused = KernelPOLA(initial_threshold=3.0).partial_fit(buffer, constraints=constraints)
    # This chunk adds no basis vector: a fit's next pass would reuse its coordinates.
    reused.partial_fit(buffer, constraints=constraints)
    buffer[:] = second
    reused.partial_fit(buffer, constraints=constraints)
    fresh = KernelPOLA(initial_threshold=3.0).partial_fit(first, constraints=constraints)
    fresh.partial_fit(first.copy(), constraints=constraints)
    fresh.partial_fit(second, constraints=constraints)
    pairs = np.stack([second[:15], first[15:]], axis=1)
    assert_allclose(reused.pair_distance(pairs), fresh.pair_distance(pairs), rtol=1e-12)
    assert reused.threshold_ == fresh.threshold_


@pytest.mark.parametrize("init", ["zero", "identity"])
def test_kernel_pola_learns_in_the_kernels_feature_space(init):
    """A polynomial kernel gives POLA on the explicit polynomial features.

    With ``init="identity"`` POLA's A₁ = c·I also covers the constant feature, which
    no difference has, so the distances agree there as well.
    """
    rng = np.random.RandomState(7)
    X = rng.uniform(-1, 1, (60, 2))
    y = (np.linalg.norm(X, axis=1) > 0.7).astype(int)
    features = PolynomialFeatures(degree=2).fit_transform(X)
    # (1 + xᵀy)² = φ(x)ᵀφ(y) with φ the degree-2 features scaled by √(multinomial).
    features *= np.sqrt([1, 2, 2, 1, 2, 1])

    def kernel(a, b):
        return (1.0 + a @ b) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # Random pairs: the same pairs in both spaces (neighbours would differ).
        implicit = KernelPOLA(kernel=kernel, init=init, gamma=1.0, initial_threshold=1.0,
                              n_neighbors=None, max_iter=3, random_state=0)
        implicit.fit(X, y)
        explicit = POLA(gamma=1.0, init=init, initial_threshold=1.0, n_neighbors=None,
                        max_iter=3, random_state=0).fit(features, y)
    pairs_implicit = np.stack([X[:30], X[30:]], axis=1)
    pairs_explicit = np.stack([features[:30], features[30:]], axis=1)
    assert_allclose(implicit.pair_distance(pairs_implicit),
                    explicit.pair_distance(pairs_explicit), rtol=1e-7)
    with pytest.raises(AttributeError):
        implicit.get_mahalanobis_matrix()
    truth = np.where(y[:30] == y[30:], 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        rbf = KernelPOLA(kernel="rbf", kernel_params={"gamma": 2.0}, init=init, gamma=1.0,
                         initial_threshold=1.0, max_iter=20,
                         n_neighbors=None, random_state=0).fit(X, y)
        flat = POLA(gamma=1.0, init=init, initial_threshold=1.0, max_iter=20,
                    n_neighbors=None, random_state=0).fit(X, y)
    # Rings are not separable by a linear pseudo-metric; in the rbf feature space they are.
    rbf_accuracy = rbf.pair_score(pairs_implicit, truth)
    assert rbf_accuracy > flat.pair_score(pairs_implicit, truth) + 0.1


def _initial_scale(X, constraints, init):
    """c of A₁ = c·I: the median training pair on the threshold b₁ = 1, or 0."""
    differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    return 1.0 / np.median(np.sum(differences**2, axis=1)) if init == "identity" else 0.0


def _dense_passes(X, constraints, n_passes, gamma, init):
    """pola_pass on the full d×d matrix: what POLA computes without its span coordinates."""
    A = np.asfortranarray(_initial_scale(X, constraints, init) * np.eye(X.shape[1]))
    b = 1.0
    for _ in range(n_passes):
        b = pola_pass(np.ascontiguousarray(X), constraints.pairs,
                      constraints.labels.astype(float), A, b, gamma,
                      np.empty(len(constraints.labels)))
    return np.tril(A) + np.tril(A, -1).T, b


# With 40 features, the span's 29 directions and the second pass's 29 differences exceed
# the dimension: the later passes must still run in the span, which they do not extend.
@pytest.mark.parametrize("n_features", [80, 40])
@pytest.mark.parametrize("init", ["zero", "identity"])
def test_fewer_points_than_features_run_in_the_span_of_the_differences(init, n_features):
    rng = np.random.RandomState(8)
    X = rng.randn(30, n_features) / 4
    y = rng.randint(0, 3, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = POLA(gamma=1.0, init=init, initial_threshold=1.0, max_iter=5, tol=0.0,
                     random_state=0).fit(X, y)
    assert model.n_iter_ == 5
    assert model._span.shape == (n_features, 29)  # 30 points span 29 difference directions
    A, b = _dense_passes(X, model.constraints_, 5, 1.0, init)
    assert_allclose(model.get_mahalanobis_matrix(), A, rtol=0, atol=1e-12 * np.abs(A).max())
    assert model.threshold_ == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("init", ["zero", "identity"])
def test_partial_fit_extends_the_span_with_new_directions(init):
    rng = np.random.RandomState(9)
    X = rng.randn(40, 60) / 4
    # Distinct pairs among 20 points per chunk, labelled at random.
    pairs = np.array([(i, j) for i in range(20) for j in (i + 1, i + 3) if j < 20])
    first = PairConstraints(pairs, np.where(rng.rand(len(pairs)) < 0.5, 1, -1))
    second = PairConstraints(pairs[::-1], np.where(rng.rand(len(pairs)) < 0.5, 1, -1))
    model = POLA(gamma=0.5, init=init, initial_threshold=1.0).partial_fit(
        X[:20], constraints=first)
    rank = model._span.shape[1]
    model.partial_fit(X[20:], constraints=second)  # other points: new directions
    assert model._span.shape[1] > rank
    # The first chunk fixes A₁.
    A = np.asfortranarray(_initial_scale(X[:20], first, init) * np.eye(60))
    b = 1.0
    for chunk, constraints in ((X[:20], first), (X[20:], second)):
        b = pola_pass(np.ascontiguousarray(chunk), constraints.pairs,
                      constraints.labels.astype(float), A, b, 0.5,
                      np.empty(len(constraints.labels)))
    A = np.tril(A) + np.tril(A, -1).T
    assert_allclose(model.get_mahalanobis_matrix(), A, rtol=0, atol=1e-12 * np.abs(A).max())
    assert model.threshold_ == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_kernel_pola_principal_axes_evaluate_the_kernel_on_the_projections(kernel):
    # KernelPOLA on 6 axes is KernelPOLA on all features of the points projected onto
    # them (in input space), whose transform, pair distances and metric it reproduces.
    rng = np.random.RandomState(8)
    X = rng.randn(60, 20) * np.linspace(2, 0.1, 20) / 3
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    params = dict(kernel=kernel, max_iter=5, random_state=0,
                  kernel_params={"gamma": 0.5} if kernel == "rbf" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = KernelPOLA(n_components=6, **params).fit(X, y)
        projected = (X @ model._axes) @ model._axes.T
        reference = KernelPOLA(n_components=None, **params).fit(projected, y)
    assert_allclose(model.transform(X), reference.transform(projected), rtol=0, atol=1e-10)
    pairs = np.stack([X[:30], X[30:]], axis=1)
    distances = reference.pair_distance(np.stack([projected[:30], projected[30:]], axis=1))
    assert_allclose(model.pair_distance(pairs), distances, rtol=1e-9)
    metric = model.get_metric()
    assert metric(X[0], X[30]) == pytest.approx(distances[0], rel=1e-9)
    if kernel == "linear":
        linear = POLA(n_components=6, max_iter=5, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            linear.fit(X, y)
        assert_allclose(model.pair_distance(pairs), linear.pair_distance(pairs), rtol=1e-8)
