"""LogDet (ITML): compiled kernel vs NumPy reference, KKT, cvxpy oracle, API behaviour."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from numpy.testing import assert_allclose, assert_array_equal
from scipy import linalg
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet, PairConstraints
from psdmetric._bregman._base import pair_difference_basis, prior_eigenpairs
from psdmetric._bregman._logdet_kernels import logdet_sweep
from psdmetric._core import cholupdatemult
from psdmetric._core._cyclic import SCREEN_MARGIN


def reference_logdet_sweep(A, Z, direction, target, dual, gamma, order):
    """Plain NumPy ITML cycle on the full matrix: the gold standard for the kernel."""
    ratio, inv_gamma = (1.0, 0.0) if np.isinf(gamma) else (gamma / (gamma + 1), 1 / gamma)
    for c in order:
        z = Z[c]
        Az = A @ z
        p = z @ Az
        if not p > 1e-14 * target[c]:
            continue
        delta = direction[c]
        alpha = min(dual[c], delta * ratio * (1 / p - 1 / target[c]))
        if alpha == 0:
            continue
        beta = delta * alpha / (1 - delta * alpha * p)
        target[c] = 1 / (1 / target[c] + delta * alpha * inv_gamma)
        dual[c] -= alpha
        A += beta * np.outer(Az, Az)
    return A


def random_problem(n_samples=30, n_features=5, n_pairs=15, bounds=(1.0, 20.0), seed=0):
    """Random pairs labelled by a hidden metric, so hard constraints are feasible."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features)
    hidden = rng.randn(n_features, n_features)
    pairs, labels = [], []
    while len(pairs) < n_pairs:
        i, j = rng.choice(n_samples, 2, replace=False)
        distance = np.sum((hidden @ (X[i] - X[j])) ** 2) * bounds[1] / (4 * n_features)
        if distance <= bounds[0] or distance >= bounds[1]:
            pairs.append((i, j))
            labels.append(1 if distance <= bounds[0] else -1)
    return X, PairConstraints(pairs, labels)


# Sizes past 10 run the vectorised loop body and its remainder (4 doubles per AVX2 register).
@pytest.mark.parametrize("r", [*range(1, 11), 33, 64, 101])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cholupdatemult_matches_dense_cholesky(r, sign):
    rng = np.random.RandomState(r)
    B = np.asfortranarray(np.tril(rng.randn(r, r)) + 3 * np.eye(r))
    w = rng.randn(r)
    # Negative beta must keep I + beta w wᵀ positive definite.
    beta = sign * rng.uniform(0.1, 0.9) / (w @ w) if sign < 0 else rng.uniform(0.1, 5)
    expected = B @ linalg.cholesky(np.eye(r) + beta * np.outer(w, w), lower=True)
    cholupdatemult(beta, w, B)
    assert_allclose(B, expected, rtol=0, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("gamma", [np.inf, 1.0, 0.05])
def test_compiled_sweep_equals_numpy_reference_after_full_fit(gamma):
    X, constraints = random_problem(n_features=6, n_pairs=20, seed=1)
    model = LogDet(gamma=gamma, bounds=(1.0, 20.0), max_iter=50, tol=0.0, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, constraints=constraints)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    direction = constraints.labels.astype(float)
    target = np.where(direction > 0, 1.0, 20.0)
    dual = np.zeros(len(Z))
    A = np.eye(X.shape[1])
    # With explicit constraints and bounds the random state only draws the cycle orders, over
    # the constraints the screen keeps: violated ones and those with a nonzero dual.
    orders = np.random.RandomState(3)
    for _ in range(model.n_iter_):
        violation = direction * (np.einsum("ij,jk,ik->i", Z, A, Z) / target - 1)
        kept = np.flatnonzero((dual != 0) | (violation > -SCREEN_MARGIN))
        order = kept[orders.permutation(len(kept))]
        A = reference_logdet_sweep(A, Z, direction, target, dual, gamma, order)
    assert_allclose(model.get_mahalanobis_matrix(), A, rtol=1e-10, atol=1e-10 * np.abs(A).max())
    assert_allclose(model.dual_coef_, dual, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_compiled_sweep_equals_numpy_reference_at_vector_width(gamma):
    # 37 dimensions run the vectorised loop bodies of the compiled kernels and their remainders.
    rng = np.random.RandomState(4)
    X = rng.randn(30, 37)
    pairs = np.array([rng.choice(30, 2, replace=False) for _ in range(40)])
    direction = np.where(rng.rand(40) < 0.5, 1.0, -1.0)
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    # Every constraint starts violated: similar pairs must halve, dissimilar ones double.
    target = np.where(direction > 0, 0.5, 2.0) * np.einsum("ij,ij->i", Z, Z)
    compiled_target, compiled_dual = target.copy(), np.zeros(40)
    dual = np.zeros(40)
    ratio, inv_gamma = (1.0, 0.0) if np.isinf(gamma) else (gamma / (gamma + 1), 1 / gamma)
    B, A = np.eye(37, order="F"), np.eye(37)
    for _ in range(3):
        order = rng.permutation(40)
        logdet_sweep(X, pairs, direction, compiled_target, compiled_dual, B, ratio, inv_gamma,
                     order)
        A = reference_logdet_sweep(A, Z, direction, target, dual, gamma, order)
    assert np.count_nonzero(dual) > 20
    assert_allclose(B @ B.T, A, rtol=1e-10, atol=1e-10 * np.abs(A).max())
    assert_allclose(compiled_dual, dual, rtol=1e-8, atol=1e-12)
    assert_allclose(compiled_target, target, rtol=1e-10)


def test_each_projection_leaves_its_constraint_tight():
    X, constraints = random_problem(seed=2)
    G = np.ascontiguousarray(X)
    B = np.eye(X.shape[1], order="F")
    target = np.where(constraints.labels == 1, 1.0, 30.0)
    direction = constraints.labels.astype(float)
    for c in range(len(target)):
        dual = np.zeros(len(target))
        single = np.ascontiguousarray(constraints.pairs[c : c + 1])
        logdet_sweep(G, single, direction[c : c + 1], target[c : c + 1], dual[:1], B, 1.0, 0.0,
                     np.zeros(1, dtype=np.intp))
        z = B.T @ (X[single[0, 0]] - X[single[0, 1]])
        after = z @ z
        if dual[0] > 0:  # projected: equality holds
            assert after == pytest.approx(target[c], rel=1e-8)
        else:  # already satisfied: untouched
            assert direction[c] * (after - target[c]) <= 1e-12 * target[c]


@pytest.mark.parametrize("gamma", [np.inf, 2.0])
def test_kkt_conditions_at_convergence(gamma):
    X, constraints = random_problem(n_features=4, n_pairs=12, bounds=(1.0, 10.0), seed=3)
    model = LogDet(gamma=gamma, bounds=(1.0, 10.0), tol=1e-12, max_iter=100_000)
    model.fit(X, constraints=constraints)
    A = model.get_mahalanobis_matrix()
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    delta = constraints.labels
    nu = model.dual_coef_
    assert np.all(nu >= 0)
    # Stationarity: A⁻¹ = A₀⁻¹ + Σ δ ν z zᵀ.
    assert_allclose(linalg.inv(A), np.eye(4) + (Z.T * (delta * nu)) @ Z, atol=1e-7)
    distances = np.einsum("ij,jk,ik->i", Z, A, Z)
    xi0 = np.where(delta == 1, 1.0, 10.0)
    xi = xi0 if np.isinf(gamma) else 1 / (1 / xi0 - delta * nu / gamma)
    # Primal feasibility and complementary slackness.
    assert np.all(delta * (distances - xi) <= 1e-7 * xi)
    assert_allclose((nu * (distances - xi))[nu > 1e-10], 0, atol=1e-7)


def _cvxpy_logdet(X, constraints, bounds, gamma):
    cp = pytest.importorskip("cvxpy")
    d = X.shape[1]
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    delta = constraints.labels
    xi0 = np.where(delta == 1, bounds[0], bounds[1])
    A = cp.Variable((d, d), PSD=True)
    distances = cp.hstack([cp.sum(cp.multiply(np.outer(z, z), A)) for z in Z])
    objective = cp.trace(A) - cp.log_det(A) - d
    if np.isinf(gamma):
        cons = [cp.multiply(delta, distances - xi0) <= 0]
    else:
        xi = cp.Variable(len(Z), pos=True)
        ratio = cp.multiply(xi, 1 / xi0)
        objective = objective + gamma * cp.sum(ratio - cp.log(ratio) - 1)
        cons = [cp.multiply(delta, distances - xi) <= 0]
    cp.Problem(cp.Minimize(objective), cons).solve(solver="CLARABEL", tol_gap_abs=1e-10,
                                                   tol_gap_rel=1e-10, tol_feas=1e-10)
    return A.value


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_matches_cvxpy_oracle(seed, gamma):
    rng = np.random.RandomState(seed)
    d = int(rng.randint(2, 7))
    bounds = (0.5 * d, 3.0 * d)
    X, constraints = random_problem(n_samples=20, n_features=d, n_pairs=int(rng.randint(5, 21)),
                                    bounds=bounds, seed=10 + seed)
    model = LogDet(gamma=gamma, bounds=bounds, tol=1e-12, max_iter=100_000)
    model.fit(X, constraints=constraints)
    expected = _cvxpy_logdet(X, constraints, bounds, gamma)
    learned = model.get_mahalanobis_matrix()
    assert linalg.norm(learned - expected) <= 1e-4 * linalg.norm(expected)


@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_wide_data_cycles_in_the_pair_span_and_keeps_the_optimum(gamma):
    # At most 7 paired samples in 12 features: the cycles run on their differences' span.
    X, constraints = random_problem(n_samples=7, n_features=12, n_pairs=9,
                                    bounds=(2.0, 30.0), seed=4)
    basis = pair_difference_basis(X, constraints.pairs)
    span = len(np.unique(constraints.pairs)) - 1
    assert basis.shape == (12, span)
    assert_allclose(basis.T @ basis, np.eye(span), atol=1e-12)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    assert_allclose(Z @ basis @ basis.T, Z, atol=1e-12)
    model = LogDet(gamma=gamma, bounds=(2.0, 30.0), tol=1e-12, max_iter=100_000)
    A = model.fit(X, constraints=constraints).get_mahalanobis_matrix()
    assert model.components_.shape == (12, 12)
    # KKT in the full feature space: A⁻¹ = I + Σ δ ν z zᵀ (the identity off the span).
    delta, nu = constraints.labels, model.dual_coef_
    assert_allclose(linalg.inv(A), np.eye(12) + (Z.T * (delta * nu)) @ Z, atol=1e-8)
    xi0 = np.where(delta == 1, 2.0, 30.0)
    xi = xi0 if np.isinf(gamma) else 1 / (1 / xi0 - delta * nu / gamma)
    distances = np.einsum("ij,jk,ik->i", Z, A, Z)
    assert np.all(delta * (distances - xi) <= 1e-7 * xi)
    assert_allclose((nu * (distances - xi))[nu > 1e-10], 0, atol=1e-7)


def test_warm_start_path_reaches_each_optimum_in_fewer_cycles():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    path = LogDet(tol=1e-10, max_iter=100_000, warm_start=True, random_state=0)
    cold_cycles = warm_cycles = 0
    for gamma in (0.1, 1.0, 10.0):
        path.set_params(gamma=gamma).fit(X, y)
        cold = LogDet(gamma=gamma, tol=1e-10, max_iter=100_000, random_state=0).fit(X, y)
        assert_allclose(path.get_mahalanobis_matrix(), cold.get_mahalanobis_matrix(),
                        rtol=1e-6, atol=1e-8)
        assert_allclose(path.dual_coef_, cold.dual_coef_, rtol=1e-6, atol=1e-8)
        cold_cycles, warm_cycles = cold_cycles + cold.n_iter_, warm_cycles + path.n_iter_
    assert warm_cycles < cold_cycles
    # Restarting at the optimum: one cycle finds nothing to change.
    assert path.fit(X, y).n_iter_ == 1


def test_warm_start_is_not_used_when_it_does_not_fit():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    fresh = LogDet(gamma=0.1, tol=1e-10, random_state=0)
    reference = clone(fresh).fit(X, y)
    # Other pairs (fewer neighbours); then duals of γ = 10, which γ = 0.1 does not admit
    # for the similar pairs (νᵢ ξ₀ᵢ ≥ γ would make a slack bound negative).
    first_fits = (clone(fresh).set_params(warm_start=True, n_neighbors=1).fit(X, y),
                  clone(fresh).set_params(warm_start=True, gamma=10.0).fit(X, y))
    last = first_fits[1]
    similar = last.constraints_.labels == 1
    assert np.max(last.dual_coef_[similar] * last.bounds_[0]) >= 0.1
    for first in first_fits:
        refit = first.set_params(gamma=0.1, n_neighbors=3).fit(X, y)
        assert_array_equal(refit.components_, reference.components_)
        assert refit.n_iter_ == reference.n_iter_


def test_full_span_and_constant_features():
    X, constraints = random_problem(n_samples=30, n_features=5, seed=1)
    assert pair_difference_basis(X, constraints.pairs) is None
    # A constant feature never enters a difference: the span drops it exactly.
    widened = np.column_stack([X, np.full(len(X), 3.0)])
    basis = pair_difference_basis(widened, constraints.pairs)
    assert basis.shape == (6, 5)
    assert_allclose(np.abs(basis[5]), 0, atol=1e-15)
    plain = LogDet(bounds=(1.0, 20.0), tol=1e-10, random_state=0).fit(X, constraints=constraints)
    wide = LogDet(bounds=(1.0, 20.0), tol=1e-10, random_state=0).fit(
        widened, constraints=constraints)
    A = wide.get_mahalanobis_matrix()
    assert_allclose(A[:5, :5], plain.get_mahalanobis_matrix(), rtol=1e-8, atol=1e-10)
    assert_allclose(A[5], np.eye(6)[5], atol=1e-12)


def test_low_rank_prior_keeps_its_rank_and_range():
    rng = np.random.RandomState(4)
    X = rng.randn(50, 6)
    basis = linalg.qr(rng.randn(6, 3))[0][:, :3]
    prior = basis @ np.diag([3.0, 2.0, 1.0]) @ basis.T
    y = (X @ basis[:, 0] > 0).astype(int)
    model = LogDet(prior=prior, random_state=0).fit(X, y)
    M = model.get_mahalanobis_matrix()
    assert model.components_.shape == (3, 6)
    assert np.linalg.matrix_rank(M, tol=1e-8 * np.abs(M).max()) == 3
    # The learned metric lives in the range of the prior.
    projector = basis @ basis.T
    assert_allclose(projector @ M @ projector, M, atol=1e-10 * np.abs(M).max())


def test_kernel_mode_learns_factor_of_same_rank_with_index_pair_bounds():
    rng = np.random.RandomState(5)
    n, r = 200, 4
    G0 = rng.randn(n, r)
    pairs = rng.choice(n, size=(40, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    labels = np.where(rng.rand(len(pairs)) < 0.5, 1, -1)
    # Bounds met by a hidden factor G0 T, so the hard constraints are feasible.
    hidden = G0 @ rng.randn(r, r)
    reachable = ((hidden[pairs[:, 0]] - hidden[pairs[:, 1]]) ** 2).sum(axis=1)
    bounds = np.where(labels == 1, 1.1 * reachable, 0.9 * reachable)
    model = LogDet(gamma=np.inf, tol=1e-10, max_iter=10_000)
    model.fit(G0, constraints=PairConstraints(pairs, labels, bounds=bounds))
    G = model.transform(G0)
    assert G.shape == (n, r)
    assert np.linalg.matrix_rank(G @ G.T) == r
    learned = ((G[pairs[:, 0]] - G[pairs[:, 1]]) ** 2).sum(axis=1)
    assert np.all(labels * (learned - bounds) <= 1e-6 * bounds)


def test_n_components_gives_low_rank_metric_on_pca_directions():
    X, y = make_classification(200, 20, n_informative=5, random_state=0)
    model = LogDet(n_components=5, random_state=0).fit(X, y)
    assert model.components_.shape == (5, 20)
    assert model.transform(X).shape == (200, 5)
    eigenvalues = np.linalg.eigvalsh(model.get_mahalanobis_matrix())
    assert np.sum(eigenvalues > 1e-10 * eigenvalues.max()) == 5


def test_covariance_prior_is_the_inverse_covariance():
    X, _ = load_iris(return_X_y=True)
    U, s = prior_eigenpairs(X, "covariance", None)
    assert_allclose(U @ np.diag(s) @ U.T, linalg.inv(np.cov(X, rowvar=False)), rtol=1e-8)
    U2, s2 = prior_eigenpairs(X, "covariance", 2)
    assert_allclose(s2, np.sort(s)[::-1][:2])


def test_rank_deficient_prior_warns_unless_n_components_says_so():
    X, y = load_iris(return_X_y=True)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # a collinear fifth feature
    with pytest.warns(UserWarning, match="prior has rank 4 < 5 .features.*n_components=4"):
        model = LogDet(prior="covariance", random_state=0).fit(X, y)
    assert model.transform(X).shape == (150, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        explicit = LogDet(prior="covariance", n_components=4, random_state=0).fit(X, y)
    assert_allclose(explicit.components_, model.components_)


def test_pipeline_grid_search_and_knn_metric():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), LogDet(random_state=0), KNeighborsClassifier(3))
    search = GridSearchCV(pipe, {"logdet__gamma": [0.1, 1.0, np.inf]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.9
    learner = LogDet(random_state=0).fit(X, y)
    knn = KNeighborsClassifier(3, metric=learner.get_metric()).fit(X, y)
    euclidean_in_learned_space = KNeighborsClassifier(3).fit(learner.transform(X), y)
    assert_allclose(
        knn.kneighbors(X[:10])[0],
        euclidean_in_learned_space.kneighbors(learner.transform(X[:10]))[0],
        rtol=1e-10,
    )


def test_pair_distance_matches_transform():
    X, y = load_iris(return_X_y=True)
    model = LogDet(random_state=0).fit(X, y)
    pairs = np.stack([X[:20], X[20:40]], axis=1)
    expected = np.linalg.norm(model.transform(X[:20]) - model.transform(X[20:40]), axis=1)
    assert_allclose(model.pair_distance(pairs), expected, rtol=1e-12)
    assert_allclose(model.pair_distance(pairs, squared=True), expected**2, rtol=1e-12)
    with pytest.raises(ValueError, match="pairs must have shape"):
        model.pair_distance(X[:20])


def test_reproducible_and_pickles():
    X, y = load_iris(return_X_y=True)
    first = LogDet(random_state=7).fit(X, y)
    second = LogDet(random_state=7).fit(X, y)
    assert np.array_equal(first.components_, second.components_)
    other = LogDet(random_state=8).fit(X, y)
    assert not np.array_equal(first.components_, other.components_)
    restored = pickle.loads(pickle.dumps(first))
    assert np.array_equal(restored.transform(X), first.transform(X))


def test_zero_distance_pairs_are_skipped():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    constraints = PairConstraints([[0, 1], [0, 2], [1, 3]], [-1, 1, -1])
    model = LogDet(bounds=(0.5, 5.0)).fit(X, constraints=constraints)
    assert np.all(np.isfinite(model.components_))
    assert model.dual_coef_[0] == 0.0


def test_max_iter_warns_and_verbose_prints_table(capsys):
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        LogDet(max_iter=2, tol=0, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "cycle" in out and "violated" in out and "dual change" in out
    assert len([line for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]) == 2


def test_explicit_constraints_validation():
    X = np.random.RandomState(0).randn(10, 3)
    with pytest.raises(ValueError, match="X has only 10 rows"):
        LogDet().fit(X, constraints=PairConstraints([[0, 10]], [1]))
    # Explicit constraints win over y (a Pipeline passes y to every step).
    constraints = PairConstraints([[0, 1], [2, 3]], [1, -1])
    with_y = LogDet(random_state=0).fit(X, np.arange(10) % 2, constraints=constraints)
    assert_array_equal(with_y.components_,
                       LogDet(random_state=0).fit(X, constraints=constraints).components_)
    with pytest.raises(TypeError, match="PairConstraints"):
        LogDet().fit(X, constraints=[[0, 1]])
    with pytest.raises(ValueError, match="requires y"):
        LogDet().fit(X)
    with pytest.raises(ValueError, match="0 < u < l"):
        LogDet(bounds=(5.0, 1.0)).fit(X, np.arange(10) % 2)


@pytest.mark.parametrize("sweep_runs", [False, True], ids=["before-sweep", "after-sweep"])
def test_interrupted_fit_keeps_the_last_counted_cycle(monkeypatch, sweep_runs):
    """Ctrl-C before the third sweep, or after it ran (the compiled sweep finishes before
    Python sees the signal): both give exactly the matrix of two cycles."""
    import psdmetric._bregman._logdet as logdet_module

    real_sweep = logdet_module.logdet_sweep
    calls = []

    def sweep_then_interrupt(*args):
        calls.append(1)
        violated = real_sweep(*args) if len(calls) < 3 or sweep_runs else 0
        if len(calls) == 3:
            raise KeyboardInterrupt
        return violated

    X, y = load_iris(return_X_y=True)
    two_cycles = LogDet(tol=0, max_iter=2, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        two_cycles.fit(X, y)
    monkeypatch.setattr(logdet_module, "logdet_sweep", sweep_then_interrupt)
    with pytest.warns(ConvergenceWarning, match="after 2 complete cycles"):
        model = LogDet(tol=0, random_state=0).fit(X, y)
    assert model.n_iter_ == 2
    assert np.array_equal(model.components_, two_cycles.components_)
    assert np.array_equal(model.dual_coef_, two_cycles.dual_coef_)
