"""VonNeumann: compiled sweep vs NumPy reference, tight projections, KKT, cvxpy oracle."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import linalg, optimize
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import psdmetric._bregman._von_neumann
from psdmetric import PairConstraints, VonNeumann
from psdmetric._bregman._von_neumann_kernels import von_neumann_sweep
from psdmetric._bregman._von_neumann_krylov import von_neumann_krylov_sweep
from psdmetric._core._cyclic import SCREEN_MARGIN


def log_quadratic(L, z_hat, t):
    """log(ẑᵀ exp(L + t ẑẑᵀ) ẑ) and log tr exp(L + t ẑẑᵀ), by LAPACK."""
    values, vectors = np.linalg.eigh(L + t * np.outer(z_hat, z_hat))
    top = values.max()
    weights = np.exp(values - top)
    return top + np.log(weights @ (vectors.T @ z_hat) ** 2), top + np.log(weights.sum())


def reference_vn_sweep(L, Z, direction, target, slack, dual, order, relative=False):
    """Plain NumPy cycle of exact von Neumann projections on the dense log-matrix L.

    The projection multiplier is the root (Brent) of
    log(zᵀ e^{L + δα zzᵀ} z) [− log tr e^{…}] + δα slack = log ξ, then the dual correction
    α ← min(ν, α) and the slack update ξ ← ξ e^{−δα slack} (Kulis et al., 2009, §5.2, §6.2.1).
    """
    for c in order:
        z = Z[c]
        length = z @ z
        if length == 0:
            continue
        z_hat = z / np.sqrt(length)
        kappa = slack[c] / length

        def g(t):
            log_phi, log_trace = log_quadratic(L, z_hat, t)
            return log_phi - relative * log_trace + kappa * t - np.log(target[c] / length)

        g0, delta = g(0.0), direction[c]
        if delta * g0 <= 0 and dual[c] <= 0:
            continue
        lo, hi = (-1.0, 0.0) if g0 > 0 else (0.0, 1.0)
        while g(lo) > 0:
            lo *= 4
        while g(hi) < 0:
            hi *= 4
        t = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15)
        alpha = min(dual[c], delta * t / length)
        t = delta * alpha * length
        dual[c] -= alpha
        target[c] *= np.exp(-kappa * t)
        L = L + t * np.outer(z_hat, z_hat)
        if relative:
            L = L - np.linalg.eigvalsh(L).max() * np.eye(len(L))
    return L


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


def differences(X, constraints):
    return X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]


@pytest.mark.parametrize("gamma", [np.inf, 1.0, 0.05])
def test_compiled_sweep_equals_numpy_reference_after_full_fit(gamma, monkeypatch):
    # The reference solves every projection exactly; so must the learner here.
    monkeypatch.setattr(psdmetric._bregman._von_neumann, "ROOT_RTOL", 0.0)
    X, constraints = random_problem(n_features=5, n_pairs=12, seed=1)
    bounds = (1.0, 20.0)
    model = VonNeumann(gamma=gamma, bounds=bounds, max_iter=8, tol=0.0, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, constraints=constraints)
    Z = differences(X, constraints)
    direction = constraints.labels.astype(float)
    target = np.where(direction > 0, *bounds)
    slack = np.zeros(len(Z)) if np.isinf(gamma) else target / gamma
    dual = np.zeros(len(Z))
    L = np.zeros((5, 5))
    # With explicit constraints and bounds the random state only draws the cycle orders, over
    # the constraints the screen keeps: violated ones and those with a nonzero dual.
    orders = np.random.RandomState(3)
    for _ in range(model.n_iter_):
        violation = direction * (np.einsum("ij,jk,ik->i", Z, linalg.expm(L), Z) / target - 1)
        kept = np.flatnonzero((dual != 0) | (violation > -SCREEN_MARGIN))
        L = reference_vn_sweep(L, Z, direction, target, slack, dual,
                               kept[orders.permutation(len(kept))])
    M = linalg.expm(L)
    assert_allclose(model.get_mahalanobis_matrix(), M, rtol=0, atol=1e-9 * np.abs(M).max())
    assert_allclose(model.dual_coef_, dual, rtol=1e-7, atol=1e-12)


def test_each_projection_leaves_its_constraint_tight():
    X, constraints = random_problem(seed=2)
    F = np.ascontiguousarray(X)
    Q, W = np.zeros(5), np.eye(5, order="F")
    direction = constraints.labels.astype(float)
    target = np.where(direction > 0, 1.0, 30.0)
    projected = 0
    for c in range(len(target)):
        dual, bound = np.zeros(1), target[c : c + 1].copy()
        pair = np.ascontiguousarray(constraints.pairs[c : c + 1])
        von_neumann_sweep(F, pair, direction[c : c + 1], bound, np.zeros(1), dual, Q, W,
                          np.zeros(1, dtype=np.intp))
        z = X[pair[0, 0]] - X[pair[0, 1]]
        after = z @ (W * np.exp(Q)) @ W.T @ z
        if dual[0] > 0:  # projected: equality holds
            assert after == pytest.approx(bound[0], rel=1e-8)
            projected += 1
        else:  # already satisfied: untouched
            assert direction[c] * (after - bound[0]) <= 1e-12 * bound[0]
        assert_allclose(W.T @ W, np.eye(5), atol=1e-13)
        assert np.all(np.diff(Q) >= 0)
    assert projected > 5


@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_relaxed_projections_reach_the_exact_fixed_point(gamma, monkeypatch):
    X, constraints = random_problem(n_features=5, n_pairs=15, seed=4)
    fits = {}
    for root_rtol in (psdmetric._bregman._von_neumann.ROOT_RTOL, 0.0):
        monkeypatch.setattr(psdmetric._bregman._von_neumann, "ROOT_RTOL", root_rtol)
        model = VonNeumann(gamma=gamma, bounds=(1.0, 20.0), tol=1e-12, max_iter=100_000,
                           random_state=0).fit(X, constraints=constraints)
        fits[root_rtol] = model.get_mahalanobis_matrix(), model.dual_coef_
    (relaxed, relaxed_dual), (exact, exact_dual) = fits.values()
    assert_allclose(relaxed, exact, rtol=0, atol=1e-9 * np.abs(exact).max())
    assert_allclose(relaxed_dual, exact_dual, rtol=1e-7, atol=1e-12)


def test_relaxed_projection_cuts_the_residual_tenfold():
    X, constraints = random_problem(seed=2)
    F = np.ascontiguousarray(X)
    Q, W = np.zeros(5), np.eye(5, order="F")
    direction = constraints.labels.astype(float)
    target = np.where(direction > 0, 1.0, 30.0)
    projected = 0
    for c in range(len(target)):
        pair = np.ascontiguousarray(constraints.pairs[c : c + 1])
        z = X[pair[0, 0]] - X[pair[0, 1]]
        before = np.log(z @ (W * np.exp(Q)) @ W.T @ z / target[c])
        dual = np.zeros(1)
        von_neumann_sweep(F, pair, direction[c : c + 1], target[c : c + 1].copy(),
                          np.zeros(1), dual, Q, W, np.zeros(1, dtype=np.intp), root_rtol=0.1)
        after = np.log(z @ (W * np.exp(Q)) @ W.T @ z / target[c])
        if dual[0] > 0:
            assert abs(after) <= 0.1 * abs(before) + 1e-11
            projected += 1
    assert projected > 5


def _cvxpy_von_neumann(X, constraints, bounds, gamma, prior_log=None):
    cp = pytest.importorskip("cvxpy")
    d = X.shape[1]
    Z = differences(X, constraints)
    delta = constraints.labels
    xi0 = np.where(delta == 1, bounds[0], bounds[1])
    prior_log = np.zeros((d, d)) if prior_log is None else prior_log
    M = cp.Variable((d, d), symmetric=True)
    distances = cp.hstack([z @ M @ z for z in Z])
    # D_vN(M, M₀) = tr(M log M) − tr(M log M₀) − tr M + tr M₀
    objective = (-cp.von_neumann_entr(M) - cp.trace(prior_log @ M) - cp.trace(M)
                 + np.trace(linalg.expm(prior_log)))
    cons = [M >> 0]
    if np.isinf(gamma):
        cons.append(cp.multiply(delta, distances - xi0) <= 0)
    else:
        xi = cp.Variable(len(Z), pos=True)
        objective = objective + gamma * cp.sum(cp.kl_div(cp.multiply(xi, 1 / xi0), 1))
        cons.append(cp.multiply(delta, distances - xi) <= 0)
    cp.Problem(cp.Minimize(objective), cons).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return M.value


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_matches_cvxpy_oracle(seed, gamma):
    rng = np.random.RandomState(seed)
    d = int(rng.randint(2, 5))
    bounds = (0.5 * d, 3.0 * d)
    X, constraints = random_problem(n_samples=20, n_features=d, n_pairs=int(rng.randint(3, 9)),
                                    bounds=bounds, seed=10 + seed)
    model = VonNeumann(gamma=gamma, bounds=bounds, tol=1e-12, max_iter=100_000)
    model.fit(X, constraints=constraints)
    expected = _cvxpy_von_neumann(X, constraints, bounds, gamma)
    learned = model.get_mahalanobis_matrix()
    assert linalg.norm(learned - expected) <= 1e-4 * linalg.norm(expected)


def test_matches_cvxpy_oracle_with_a_full_rank_prior():
    X, constraints = random_problem(n_samples=20, n_features=3, n_pairs=6, bounds=(1.5, 9.0),
                                    seed=21)
    rng = np.random.RandomState(0)
    root = rng.randn(3, 3)
    prior = root @ root.T + 0.5 * np.eye(3)
    model = VonNeumann(prior=prior, gamma=np.inf, bounds=(1.5, 9.0), tol=1e-12,
                       max_iter=100_000).fit(X, constraints=constraints)
    expected = _cvxpy_von_neumann(X, constraints, (1.5, 9.0), np.inf, linalg.logm(prior).real)
    learned = model.get_mahalanobis_matrix()
    assert linalg.norm(learned - expected) <= 1e-4 * linalg.norm(expected)


@pytest.mark.parametrize("gamma", [np.inf, 2.0])
def test_kkt_conditions_at_convergence(gamma):
    X, constraints = random_problem(n_features=4, n_pairs=12, bounds=(1.0, 10.0), seed=3)
    model = VonNeumann(gamma=gamma, bounds=(1.0, 10.0), tol=1e-12, max_iter=100_000)
    model.fit(X, constraints=constraints)
    M = model.get_mahalanobis_matrix()
    Z = differences(X, constraints)
    delta, nu = constraints.labels, model.dual_coef_
    assert np.all(nu >= 0)
    # Stationarity: log M = log M₀ − Σ δ ν z zᵀ (M₀ = I).
    log_M = (model.eigenvectors_ * np.log(model.eigenvalues_)) @ model.eigenvectors_.T
    assert_allclose(log_M, -(Z.T * (delta * nu)) @ Z, atol=1e-7)
    distances = np.einsum("ij,jk,ik->i", Z, M, Z)
    xi0 = np.where(delta == 1, 1.0, 10.0)
    xi = xi0 if np.isinf(gamma) else xi0 * np.exp(delta * nu * xi0 / gamma)
    # Primal feasibility and complementary slackness.
    assert np.all(delta * (distances - xi) <= 1e-7 * xi)
    assert_allclose((nu * (distances - xi) / xi)[nu > 1e-10], 0, atol=1e-7)


def test_warm_start_path_reaches_each_optimum():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    path = VonNeumann(tol=1e-10, max_iter=100_000, warm_start=True, random_state=0)
    for gamma in (0.1, 1.0, 10.0):
        path.set_params(gamma=gamma).fit(X, y)
        cold = VonNeumann(gamma=gamma, tol=1e-10, max_iter=100_000, random_state=0).fit(X, y)
        M = cold.get_mahalanobis_matrix()
        assert_allclose(path.get_mahalanobis_matrix(), M, rtol=0, atol=1e-9 * np.abs(M).max())
        assert_allclose(path.dual_coef_, cold.dual_coef_, rtol=0,
                        atol=1e-9 * cold.dual_coef_.max())
    # Restarting at the optimum: one cycle finds nothing to change.
    assert path.fit(X, y).n_iter_ == 1


@pytest.mark.parametrize("gamma", [np.inf, 2.0])
def test_warm_start_from_another_problems_duals_reaches_the_optimum(gamma):
    """Any ν ≥ 0 fixes log M and the slacked bounds: duals fitted on other samples
    and at another γ are a valid start, from which the fit reaches the cold optimum."""
    X, constraints = random_problem(n_features=4, n_pairs=12, bounds=(1.0, 10.0), seed=3)
    other = X + np.random.RandomState(5).randn(*X.shape)
    model = VonNeumann(gamma=0.5, bounds=(1.0, 10.0), tol=1e-12, max_iter=100_000,
                       warm_start=True).fit(other, constraints=constraints)
    model.set_params(gamma=gamma).fit(X, constraints=constraints)
    cold = VonNeumann(gamma=gamma, bounds=(1.0, 10.0), tol=1e-12,
                      max_iter=100_000).fit(X, constraints=constraints)
    M = cold.get_mahalanobis_matrix()
    assert_allclose(model.get_mahalanobis_matrix(), M, rtol=0, atol=1e-8 * np.abs(M).max())
    assert_allclose(model.dual_coef_, cold.dual_coef_, rtol=0,
                    atol=1e-8 * cold.dual_coef_.max())


def test_warm_start_is_not_used_when_it_does_not_fit():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    fresh = VonNeumann(gamma=0.1, tol=1e-8, random_state=0)
    reference = clone(fresh).fit(X, y)
    # Other pairs (fewer neighbours); then duals whose slacked bounds overflow at γ = 0.1.
    other_pairs = clone(fresh).set_params(warm_start=True, n_neighbors=1).fit(X, y)
    overflowing = clone(fresh).set_params(warm_start=True).fit(X, y)
    overflowing.dual_coef_ = overflowing.dual_coef_ * 1e6
    assert np.max(overflowing.dual_coef_ * overflowing.bounds_[0] / 0.1) > 710
    for first in (other_pairs, overflowing):
        refit = first.set_params(n_neighbors=3).fit(X, y)
        assert_array_equal(refit.components_, reference.components_)
        assert refit.n_iter_ == reference.n_iter_


def test_auto_rank_is_the_top_principal_directions_only_above_the_cap():
    rng = np.random.RandomState(7)
    cap = psdmetric._core.AUTO_COMPONENTS
    X, y = rng.randn(40, cap + 3), rng.randint(3, size=40)
    auto = VonNeumann(n_neighbors=1, random_state=0).fit(X, y)
    explicit = VonNeumann(n_components=cap, n_neighbors=1, random_state=0).fit(X, y)
    assert auto.components_.shape == (cap, cap + 3)
    assert_array_equal(auto.components_, explicit.components_)
    # At most cap features, or a prior the user chose, the prior's rank is kept.
    full = VonNeumann(n_neighbors=1, random_state=0).fit(X[:, :cap], y)
    assert full.components_.shape == (cap, cap)
    diagonal = VonNeumann(prior=np.eye(cap + 3), n_neighbors=1, max_iter=1,
                          random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert diagonal.fit(X, y).components_.shape == (cap + 3, cap + 3)


def test_low_rank_prior_never_grows_rank_and_keeps_range():
    rng = np.random.RandomState(4)
    X = rng.randn(50, 6)
    basis = linalg.qr(rng.randn(6, 3))[0][:, :3]
    prior = basis @ np.diag([3.0, 2.0, 1.0]) @ basis.T
    y = (X @ basis[:, 0] > 0).astype(int)
    model = VonNeumann(prior=prior, random_state=0).fit(X, y)
    M = model.get_mahalanobis_matrix()
    assert model.components_.shape == (3, 6)
    assert np.linalg.matrix_rank(M, tol=1e-8 * np.abs(M).max()) <= 3
    projector = basis @ basis.T
    assert_allclose(projector @ M @ projector, M, atol=1e-10 * np.abs(M).max())
    assert_allclose(model.eigenvectors_.T @ model.eigenvectors_, np.eye(3), atol=1e-12)


def test_kernel_mode_learns_factors_of_no_larger_rank():
    rng = np.random.RandomState(5)
    n, r = 200, 6
    V0 = linalg.qr(rng.randn(n, r), mode="economic")[0]
    spectrum = np.array([3.0, 2.0, 1.5, 1.0, 0.0, 0.0])  # K₀ has rank 4
    pairs = rng.choice(n, size=(60, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    labels = np.where(rng.rand(len(pairs)) < 0.5, 1, -1)
    # Bounds met by a hidden kernel in the range of K₀, so hard constraints are feasible.
    hidden = V0[:, :4] @ rng.randn(4, 4)
    reachable = ((hidden[pairs[:, 0]] - hidden[pairs[:, 1]]) ** 2).sum(axis=1)
    bounds = np.where(labels == 1, 1.1 * reachable, 0.9 * reachable)
    model = VonNeumann(prior=np.diag(spectrum), gamma=np.inf, tol=1e-10, max_iter=10_000)
    model.fit(V0, constraints=PairConstraints(pairs, labels, bounds=bounds))
    V = V0 @ model.eigenvectors_
    K = (V * model.eigenvalues_) @ V.T
    assert model.eigenvalues_.shape == (4,) and np.all(model.eigenvalues_ > 0)
    assert_allclose(V.T @ V, np.eye(4), atol=1e-12)  # an orthonormal learned factor
    assert np.linalg.matrix_rank(K, tol=1e-10 * np.abs(K).max()) <= 4
    assert_allclose(K, V0 @ model.get_mahalanobis_matrix() @ V0.T, atol=1e-12)
    learned = np.diag(K)[pairs[:, 0]] + np.diag(K)[pairs[:, 1]] - 2 * K[pairs[:, 0], pairs[:, 1]]
    assert np.all(labels * (learned - bounds) <= 1e-6 * bounds)


def test_tiny_prior_eigenvalues_stay_finite():
    rng = np.random.RandomState(6)
    basis = linalg.qr(rng.randn(5, 5))[0]
    prior = (basis * np.array([1e-300, 1e-200, 1e-100, 1e-10, 1.0])) @ basis.T
    X = rng.randn(40, 5)
    model = VonNeumann(prior=prior, random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    assert np.all(np.isfinite(model.components_))
    assert np.all(np.isfinite(model.eigenvalues_)) and np.all(model.eigenvalues_ >= 0)
    assert np.all(np.isfinite(model.transform(X)))


def test_root_finder_needs_few_evaluations():
    rng = np.random.RandomState(7)
    F = rng.randn(200, 20)
    pairs = rng.choice(200, size=(300, 2))
    pairs = np.ascontiguousarray(pairs[pairs[:, 0] != pairs[:, 1]])
    direction = np.where(rng.rand(len(pairs)) < 0.5, 1.0, -1.0)
    # Far from the Euclidean distances (median 40): most pairs start violated.
    target = np.where(direction > 0, 10.0, 160.0)
    slack, dual, stats = target.copy(), np.zeros(len(target)), np.zeros(3, dtype=np.intp)
    Q, W = np.zeros(20), np.eye(20, order="F")
    order = np.random.RandomState(0)
    for _ in range(5):
        von_neumann_sweep(F, pairs, direction, target, slack, dual, Q, W,
                          order.permutation(len(target)), counters=stats)
    projections, evaluations = stats[0], stats[1]
    assert projections > 300
    assert evaluations / projections <= 6  # Kulis et al. (2009): rarely more than six


def test_only_columns_that_do_not_deflate_are_rotated():
    # From the identity all eigenvalues are equal: projection t merges them into t
    # distinct ones, so it rotates t columns; directions the data never reach (the
    # last 3 features are 0) deflate forever.
    rng = np.random.RandomState(3)
    F = np.hstack([rng.randn(30, 7), np.zeros((30, 3))])
    pairs = np.array([[0, 1], [2, 3], [4, 5], [6, 7]], dtype=np.intp)
    direction, target = np.ones(4), np.full(4, 1e-3)
    slack, dual, stats = np.zeros(4), np.zeros(4), np.zeros(4, dtype=np.intp)
    Q, W = np.zeros(10), np.eye(10, order="F")
    von_neumann_sweep(F, pairs, direction, target, slack, dual, Q, W,
                      np.arange(4, dtype=np.intp), counters=stats)
    assert stats[0] == 4 and stats[3] == 1 + 2 + 3 + 4
    for _ in range(20):
        von_neumann_sweep(F, pairs, direction, target, slack, dual, Q, W,
                          np.arange(4, dtype=np.intp), counters=stats)
    assert_allclose(W[7:, 7:], np.eye(3), atol=0)


def krylov_problem(r=48, n_pairs=400, seed=11):
    """Pairs in r dimensions from a spread start: log-eigenvalues from −30 to 5."""
    rng = np.random.RandomState(seed)
    F = rng.randn(300, r) * rng.lognormal(0, 1, r)
    pairs = rng.choice(300, size=(n_pairs, 2))
    pairs = np.ascontiguousarray(pairs[pairs[:, 0] != pairs[:, 1]])
    direction = np.where(rng.rand(len(pairs)) < 0.5, 1.0, -1.0)
    squared = np.sum((F[pairs[:, 0]] - F[pairs[:, 1]]) ** 2, axis=1)
    target = np.where(direction > 0, *np.percentile(squared, [10, 90]))
    Q = np.sort(rng.uniform(-30, 5, r))
    W = np.asfortranarray(linalg.qr(rng.randn(r, r))[0])
    return F, pairs, direction, target, Q, W


@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_krylov_sweep_equals_the_eigenbasis_sweep(gamma):
    F, pairs, direction, target, Q0, W0 = krylov_problem()
    results = []
    for sweep in (von_neumann_sweep, von_neumann_krylov_sweep):
        bound = target.copy()
        slack = np.zeros(len(bound)) if np.isinf(gamma) else bound / gamma
        dual, Q, W = np.zeros(len(bound)), Q0.copy(), W0.copy(order="F")
        stats = np.zeros(4, dtype=np.intp)
        for cycle in range(3):
            order = np.random.RandomState(cycle).permutation(len(bound)).astype(np.intp)
            sweep(F, pairs, direction, bound, slack, dual, Q, W, order, counters=stats)
        assert np.all(np.diff(Q) >= 0)
        assert_allclose(W.T @ W, np.eye(len(Q)), atol=1e-12)
        results.append(((W * np.exp(Q)) @ W.T, dual, bound, stats))
    (M, dual, bound, stats), (M_krylov, dual_krylov, bound_krylov, stats_krylov) = results
    assert_allclose(M_krylov, M, rtol=0, atol=1e-10 * np.abs(M).max())
    assert_allclose(dual_krylov, dual, rtol=1e-9, atol=1e-14 * np.abs(dual).max())
    assert_allclose(bound_krylov, bound, rtol=1e-10)
    assert stats_krylov[0] == stats[0] > 500


def test_krylov_sweep_equals_numpy_reference():
    F, pairs, direction, target, Q, W = krylov_problem(r=40, n_pairs=60, seed=12)
    L = (W * Q) @ W.T
    slack, dual = target / 0.5, np.zeros(len(target))
    order = np.arange(len(target), dtype=np.intp)
    expected_target, expected_dual = target.copy(), dual.copy()
    expected = reference_vn_sweep(L, F[pairs[:, 0]] - F[pairs[:, 1]], direction,
                                  expected_target, slack, expected_dual, order)
    von_neumann_krylov_sweep(F, pairs, direction, target, slack, dual, Q, W, order)
    M, M_expected = (W * np.exp(Q)) @ W.T, linalg.expm(expected)
    assert_allclose(M, M_expected, rtol=0, atol=1e-10 * np.abs(M_expected).max())
    assert_allclose(dual, expected_dual, rtol=1e-8, atol=1e-14 * np.abs(expected_dual).max())
    assert_allclose(target, expected_target, rtol=1e-10)


@pytest.mark.parametrize("gamma", [np.inf, 1.0])
def test_relaxed_lanczos_fit_reaches_the_exact_fixed_point(gamma, monkeypatch):
    """From rank 32 the fit projects through Lanczos with relaxed roots and Lanczos runs;
    at a tight tol it reaches the fixed point of exact projections on the eigenbasis."""
    rank = psdmetric._bregman._von_neumann.KRYLOV_MIN_RANK
    rng = np.random.RandomState(13)
    X = rng.randn(120, rank)
    pairs = rng.choice(120, size=(80, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    # Labels from a hidden diagonal metric, Euclidean 10th/90th-percentile bounds: most
    # pairs start violated, and 80 pairs in 32 dimensions leave the bounds feasible.
    hidden = np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2 * rng.lognormal(0, 1.5, rank), 1)
    constraints = PairConstraints(pairs, np.where(hidden < np.median(hidden), 1, -1))
    squared = np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2, axis=1)
    bounds = tuple(np.percentile(squared, [10, 90]))
    fits = {}
    for label, min_rank, root_rtol in (("lanczos", rank, psdmetric._bregman._von_neumann.ROOT_RTOL),
                                       ("exact", rank + 1, 0.0)):
        monkeypatch.setattr(psdmetric._bregman._von_neumann, "KRYLOV_MIN_RANK", min_rank)
        monkeypatch.setattr(psdmetric._bregman._von_neumann, "ROOT_RTOL", root_rtol)
        fits[label] = VonNeumann(gamma=gamma, bounds=bounds, tol=1e-12, max_iter=100_000,
                                 random_state=0).fit(X, constraints=constraints)
    assert fits["lanczos"].n_iter_ > 10
    M = fits["exact"].get_mahalanobis_matrix()
    assert_allclose(fits["lanczos"].get_mahalanobis_matrix(), M, rtol=0,
                    atol=1e-9 * np.abs(M).max())
    assert_allclose(fits["lanczos"].dual_coef_, fits["exact"].dual_coef_, rtol=1e-7,
                    atol=1e-12 * np.abs(fits["exact"].dual_coef_).max())


def test_fit_leaves_krylov_spaces_that_grow_long_for_the_eigenbasis(monkeypatch):
    """Hard constraints spread the log-spectrum over 10⁴: Lanczos would need most of r."""
    F, pairs, direction, target, _, _ = krylov_problem()
    constraints = PairConstraints(pairs, direction.astype(int))
    bounds = np.percentile(target, [0, 100])
    calls = []

    def spy(*args, **kwargs):
        calls.append(kwargs["counters"][3])
        return von_neumann_sweep(*args, **kwargs)

    monkeypatch.setattr(psdmetric._bregman._von_neumann, "von_neumann_sweep", spy)
    model = VonNeumann(gamma=np.inf, bounds=bounds, max_iter=6, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(F, constraints=constraints)
    # The first cycles (from the identity, a narrow spectrum) ran Lanczos, the rest the
    # eigenbasis.
    assert 0 < len(calls) < model.n_iter_
    assert np.isfinite(model.components_).all()


def test_label_fit_pipeline_grid_search_and_metric():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(VonNeumann(random_state=0), KNeighborsClassifier(3))
    search = GridSearchCV(pipe, {"vonneumann__gamma": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.9
    model = VonNeumann(random_state=0).fit(X, y)
    M = model.get_mahalanobis_matrix()
    assert_allclose(M, M.T, atol=1e-14)
    assert np.all(model.eigenvalues_ > 0)
    assert np.linalg.eigvalsh(M).min() >= -1e-14 * model.eigenvalues_.max()
    assert_allclose((model.eigenvectors_ * model.eigenvalues_) @ model.eigenvectors_.T, M,
                    atol=1e-12 * np.abs(M).max())


def test_reproducible_and_pickles():
    X, y = load_iris(return_X_y=True)
    first = VonNeumann(random_state=7).fit(X, y)
    second = VonNeumann(random_state=7).fit(X, y)
    assert np.array_equal(first.components_, second.components_)
    restored = pickle.loads(pickle.dumps(first))
    assert np.array_equal(restored.transform(X), first.transform(X))


def test_max_iter_warns_and_verbose_prints_table(capsys):
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        VonNeumann(max_iter=2, tol=0, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert "[VonNeumann]" in out and "dual change" in out
