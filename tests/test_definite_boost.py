"""DefiniteBoost: AdaBoost as the diagonal case, Thm 4.1, NumPy reference, cvxpy oracle."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import linalg
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning

from psdmetric import DefiniteBoost, PairConstraints
from psdmetric._core import AUTO_COMPONENTS
from psdmetric._bregman._definite_boost_kernels import definite_boost_steps


def run_steps(terms, coef, start, shift, lmin, lmax, n, n_steps, correction=False,
              log_prior=None, cap=None):
    """Run the compiled steps from W₁ = exp(log_prior) / tr (I/n by default).

    One step per call, so that each step's constraint (the dual that moved), its
    violation ``tr(W C_j)`` before the step (from the matrix, in NumPy) and the dual
    objective after it can be recorded.
    """
    log_prior = np.zeros(n) if log_prior is None else np.sort(log_prior)
    Q, W = log_prior - log_prior.max(), np.eye(n, order="F")
    offset = np.array([log_prior.max() - np.log(np.exp(log_prior).sum())])
    dual = np.zeros(len(shift))
    terms, coef = np.ascontiguousarray(terms, dtype=float), np.asarray(coef, float)
    # Each term as the difference of its row and an appended zero row.
    points = np.vstack([terms, np.zeros((1, n))])
    ends = np.column_stack([np.arange(len(terms)), np.full(len(terms), len(terms))])
    start, shift = np.asarray(start, np.intp), np.asarray(shift, float)
    chosen, violation, objective = [], [], []
    steps, residual = 0, np.inf
    while steps < n_steps:
        before, M = dual.copy(), (W * np.exp(Q)) @ W.T
        taken, residual, value = definite_boost_steps(
            points, ends, coef, start, shift, np.asarray(lmin, float), np.asarray(lmax, float),
            dual, Q, W, offset=offset, max_steps=1, tol=0.0, correction=correction, floor=-np.inf,
            cap=cap)
        if taken == 0:
            break
        (j,) = np.flatnonzero(dual != before)
        parts = slice(start[j], start[j + 1])
        terms_j = np.einsum("ki,ij,kj->k", terms[parts], M / np.trace(M), terms[parts])
        chosen.append(j)
        violation.append(coef[parts] @ terms_j - shift[j])
        objective.append(value)
        steps += 1
    M = (W * np.exp(Q)) @ W.T
    return dict(steps=steps, dual=dual, W=M / np.trace(M), chosen=np.array(chosen, np.intp),
                violation=np.array(violation), objective=np.array(objective),
                residual=residual)


def test_diagonal_inputs_reproduce_adaboost_exactly():
    rng = np.random.RandomState(0)
    n_samples, n_hypotheses, n_rounds = 12, 7, 15
    y = np.where(rng.rand(n_samples) < 0.5, 1.0, -1.0)
    h = np.tanh(2 * rng.randn(n_hypotheses, n_samples))  # confidence-rated, in [−1, 1]
    margins = y * h  # C_j = diag(y_i h_j(x_i)), eigenvalues in [−1, 1] (Tsuda et al., 2005, §4.3)
    result = run_steps(np.tile(np.eye(n_samples), (n_hypotheses, 1)), margins.ravel(),
                       np.arange(n_hypotheses + 1) * n_samples, np.zeros(n_hypotheses),
                       -np.ones(n_hypotheses), np.ones(n_hypotheses), n_samples, n_rounds)
    # AdaBoost with confidence-rated hypotheses (Schapire and Singer 1999).
    weights, alphas, picks = np.full(n_samples, 1 / n_samples), np.zeros(n_hypotheses), []
    for _ in range(n_rounds):
        edges = margins @ weights
        best = int(np.argmax(edges))
        if edges[best] <= 0:
            break
        alpha = 0.5 * np.log((1 + edges[best]) / (1 - edges[best]))
        picks.append(best)
        alphas[best] += alpha
        weights = weights * np.exp(-alpha * margins[best])
        weights /= weights.sum()
    assert result["steps"] == len(picks) > 5
    assert np.array_equal(result["chosen"], picks)
    assert_allclose(result["dual"], alphas, rtol=1e-12, atol=1e-14)
    assert_allclose(result["W"], np.diag(weights), rtol=0, atol=1e-14)
    # The dual objective is AdaBoost's exponential loss (Tsuda et al., 2005, §4.3).
    exp_loss = np.mean(np.exp(-alphas @ margins))
    assert result["objective"][-1] == pytest.approx(np.log(exp_loss), rel=1e-12)


def feasible_pairs(seed, n_features=4, n_pairs=10, slack=0.05):
    """Pairs with per-pair bounds met by a hidden trace-one W (so the problem is feasible)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(30, n_features)
    root = rng.randn(n_features, n_features)
    hidden = root @ root.T / np.trace(root @ root.T)
    pairs = np.array([rng.choice(30, 2, replace=False) for _ in range(n_pairs)])
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    distances = np.einsum("ij,jk,ik->i", Z, hidden, Z)
    labels = np.where(rng.rand(n_pairs) < 0.5, 1, -1)
    bounds = np.where(labels == 1, (1 + slack) * distances, (1 - slack) * distances)
    return X, PairConstraints(pairs, labels, bounds=bounds)


def pair_steps(X, constraints, n_steps, correction=False, gamma=np.inf):
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    delta = constraints.labels.astype(float)
    lengths = np.einsum("ij,ij->i", Z, Z)
    xi = constraints.bounds
    lmax = np.where(delta > 0, lengths - xi, xi)
    lmin = np.where(delta > 0, -xi, xi - lengths)
    result = run_steps(Z, delta, np.arange(len(Z) + 1), delta * xi, lmin, lmax, X.shape[1],
                       n_steps, correction, cap=gamma / lengths)
    return result, Z, delta, lmin, lmax


def test_dual_objective_falls_under_the_product_bound_of_theorem_4_1():
    X, constraints = feasible_pairs(seed=6)
    result, _, _, lmin, lmax = pair_steps(X, constraints, 400)
    objective = np.concatenate([[0.0], result["objective"]])  # log tr W₁ = 0
    assert result["steps"] > 20
    assert np.all(np.diff(objective) <= 1e-13)
    j, r = result["chosen"], result["violation"]
    width = lmax[j] - lmin[j]
    log_rho = (lmax[j] / width * np.log1p(-r / lmax[j])
               - lmin[j] / width * np.log1p(-r / lmin[j]))
    assert np.all(r > 0)
    assert np.all(result["objective"] <= np.cumsum(log_rho) + 1e-12)


def test_dual_objective_falls_with_dual_corrections_too():
    X, constraints = feasible_pairs(seed=6)
    result, *_ = pair_steps(X, constraints, 600, correction=True)
    assert np.any(result["violation"] < 0)  # some steps relaxed a dual
    assert np.all(np.diff(result["objective"]) <= 1e-13)


def reference_definite_boost(Z, delta, xi, lmin, lmax, n_steps, correction, cap):
    """Plain NumPy DefiniteBoost on dense matrices (Tsuda et al., 2005, §4.2), duals in [0, cap]."""
    d = Z.shape[1]
    S, dual, chosen = np.zeros((d, d)), np.zeros(len(Z)), []
    C = [delta[j] * (np.outer(Z[j], Z[j]) - xi[j] * np.eye(d)) for j in range(len(Z))]
    for _ in range(n_steps):
        values, vectors = np.linalg.eigh(S)
        W = (vectors * np.exp(values - values.max())) @ vectors.T
        W /= np.trace(W)
        r = np.array([np.sum(W * Cj) for Cj in C])
        candidates = ((r > 0) & (dual < cap)) | (correction & (dual > 0) & (r < 0))
        if not candidates.any():
            break
        j = int(np.argmax(np.where(candidates, np.abs(r), -1)))
        alpha = np.log((1 - r[j] / lmin[j]) / (1 - r[j] / lmax[j])) / (lmax[j] - lmin[j])
        if correction:
            alpha = max(alpha, -dual[j])
        alpha = min(alpha, cap[j] - dual[j])
        dual[j] += alpha
        S = S - alpha * C[j]
        chosen.append(j)
    values, vectors = np.linalg.eigh(S)
    W = (vectors * np.exp(values - values.max())) @ vectors.T
    return W / np.trace(W), dual, chosen


@pytest.mark.parametrize("gamma", [np.inf, 0.3])
@pytest.mark.parametrize("correction", [False, True])
def test_compiled_steps_equal_numpy_reference(correction, gamma):
    # With slack: bounds no trace-one W meets, so that duals reach their caps.
    X, constraints = feasible_pairs(seed=8, n_features=5, n_pairs=12,
                                    slack=0.05 if np.isinf(gamma) else -0.5)
    # Steps before the violations reach roundoff, where the choice is arbitrary.
    n_steps = 30 if np.isinf(gamma) else 14
    result, Z, delta, lmin, lmax = pair_steps(X, constraints, n_steps, correction, gamma)
    cap = gamma / np.einsum("ij,ij->i", Z, Z)
    W, dual, chosen = reference_definite_boost(Z, delta, constraints.bounds, lmin, lmax,
                                               n_steps, correction, cap)
    if not np.isinf(gamma):
        assert np.sum(dual == cap) >= 2
    assert np.all((dual >= 0) & (dual <= cap))
    assert np.abs(result["violation"]).min() > 1e-12
    assert np.array_equal(result["chosen"], chosen)
    assert_allclose(result["dual"], dual, rtol=1e-9, atol=1e-12)
    assert_allclose(result["W"], W, rtol=0, atol=1e-11)


def _cvxpy_trace_one(X, constraints):
    cp = pytest.importorskip("cvxpy")
    d = X.shape[1]
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    W = cp.Variable((d, d), symmetric=True)
    distances = cp.hstack([z @ W @ z for z in Z])
    # D_vN(W, I/d) = −S(W) + log d for trace-one W.
    problem = cp.Problem(cp.Minimize(-cp.von_neumann_entr(W)), [
        W >> 0, cp.trace(W) == 1,
        cp.multiply(constraints.labels, distances - constraints.bounds) <= 0])
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return W.value


def divergence_to_uniform(W):
    values = np.linalg.eigvalsh(W)
    values = values[values > 0]
    return float(values @ np.log(values) + np.log(len(W)))


@pytest.mark.parametrize("seed", [0, 2])
def test_exact_and_corrected_steps_reach_the_oracle_and_uncorrected_ones_need_not(seed):
    X, constraints = feasible_pairs(seed)
    expected = _cvxpy_trace_one(X, constraints)
    fits = {name: DefiniteBoost(gamma=np.inf, tol=1e-9, max_iter=100_000, **params).fit(
        X, constraints=constraints).get_mahalanobis_matrix()
        for name, params in [("exact", {"projection": "exact"}),
                             ("corrected", {"dual_correction": True}),
                             ("uncorrected", {"dual_correction": False})]}
    for name in ("exact", "corrected"):
        assert linalg.norm(fits[name] - expected) <= 1e-4 * linalg.norm(expected), name
    # Without corrections the steps stop at a feasible point that is not the closest
    # one to W₁ (Kulis et al., 2009, App. B).
    uncorrected = fits["uncorrected"]
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    distances = np.einsum("ij,jk,ik->i", Z, uncorrected, Z)
    assert np.all(constraints.labels * (distances - constraints.bounds)
                  <= 1e-6 * constraints.bounds)
    assert divergence_to_uniform(uncorrected) > divergence_to_uniform(expected) + 1e-3


@pytest.mark.parametrize("projection", ["approximate", "exact"])
def test_infeasible_constraints_are_certified_and_stop_early(projection):
    # Two dissimilar pairs along orthogonal axes, each asking for 90% of its squared
    # length: no trace-one W can give both.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    constraints = PairConstraints([[0, 1], [0, 2]], [-1, -1], bounds=[0.9, 0.9])
    model = DefiniteBoost(projection=projection, gamma=np.inf, max_iter=10_000)
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        model.fit(X, constraints=constraints)
    assert model.n_iter_ < 100
    assert model.dual_objective_ < np.log(0.5)
    W = model.get_mahalanobis_matrix()
    assert np.all(np.isfinite(W)) and np.trace(W) == pytest.approx(1.0)


def test_kernel_learning_from_index_pairs_like_tsuda_2005_section_5():
    rng = np.random.RandomState(1)
    n = 20
    points = np.repeat(rng.randn(4, 3), 5, axis=0) + 0.3 * rng.randn(n, 3)
    target = points @ points.T
    target /= np.trace(target)
    half_distances = 0.5 * (np.diag(target)[:, None] + np.diag(target) - 2 * target)
    close = np.argwhere(np.triu(half_distances < 0.2 / n, k=1))
    # Similar pairs: ½‖x_a − x_b‖² ≤ γ = 0.2/n, i.e. tr(W X_j) ≤ γ (Tsuda et al., 2005, §5).
    constraints = PairConstraints(close, np.ones(len(close)), bounds=np.full(len(close), 0.2 / n))
    model = DefiniteBoost(gamma=np.inf, dual_correction=False, tol=1e-6, max_iter=10_000)
    model.fit(np.eye(n) / np.sqrt(2), constraints=constraints)
    K = model.get_mahalanobis_matrix()
    learned = 0.5 * (np.diag(K)[close[:, 0]] + np.diag(K)[close[:, 1]]
                     - 2 * K[close[:, 0], close[:, 1]])
    assert len(close) > 10
    assert np.trace(K) == pytest.approx(1.0, abs=1e-12)
    assert np.linalg.eigvalsh(K).min() > 0
    # Each constraint holds to tol relative to its bound.
    assert np.all(learned <= (1 + 1e-6) * 0.2 / n)


def test_label_fit_gives_a_trace_one_metric():
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = DefiniteBoost(random_state=0).fit(X, y)
    assert model.eigenvalues_.sum() == pytest.approx(1.0)
    assert np.all(model.eigenvalues_ > 0)
    assert np.trace(model.get_mahalanobis_matrix()) == pytest.approx(1.0)
    assert model.dual_coef_.shape == (len(model.constraints_.pairs),)


def slack_fit(seed, gamma, n_unmet=0):
    """A fit with slack on pairs no trace-one W meets, and its violations tr(W C_j).

    ``n_unmet`` dissimilar pairs get a bound above their squared length, which no
    trace-one W reaches (their dual sits at its cap at the optimum).
    """
    X, constraints = feasible_pairs(seed, slack=-0.4)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    lengths = np.einsum("ij,ij->i", Z, Z)
    bounds = constraints.bounds.copy()
    unmet = np.flatnonzero(constraints.labels == -1)[:n_unmet]
    bounds[unmet] = 1.2 * lengths[unmet]
    constraints = PairConstraints(constraints.pairs, constraints.labels, bounds=bounds)
    model = DefiniteBoost(gamma=gamma, dual_correction=True, fit_unmeetable=True, tol=1e-11,
                          max_iter=100_000)
    model.fit(X, constraints=constraints)
    W = model.get_mahalanobis_matrix()
    # Every other pair can hold for some trace-one W.
    assert np.sum(bounds >= lengths) == n_unmet
    violation = constraints.labels * (np.einsum("ij,jk,ik->i", Z, W, Z) - bounds)
    # The slack is the mean hinge loss: each pair's cap is gamma / (m ‖z‖²).
    return model, constraints, W, violation, gamma / (len(Z) * lengths)


@pytest.mark.parametrize("seed, n_unmet", [(0, 0), (3, 0), (0, 2), (3, 2)])
def test_slack_solution_satisfies_kkt_and_strong_duality(seed, n_unmet):
    model, constraints, W, violation, cap = slack_fit(seed, 20.0, n_unmet)
    dual, scale = model.dual_coef_, 1e-8 * constraints.bounds
    at_cap, free = np.isclose(dual, cap, rtol=1e-14, atol=0), (dual > 0) & (dual < cap)
    assert at_cap.sum() >= 2 + n_unmet and free.sum() >= 1  # both kinds of KKT condition
    assert np.all((dual >= 0) & (dual <= cap * (1 + 1e-14)))
    assert np.all(violation[dual == 0] <= scale[dual == 0])
    assert np.all(np.abs(violation[free]) <= scale[free])
    assert np.all(violation[at_cap] >= -scale[at_cap])
    # Strong duality: D_vN(W, I/d) + Σ cap_j max(0, tr(W C_j)) = −(dual objective, eq. 9).
    values = np.linalg.eigvalsh(W)
    primal = values @ np.log(values * len(W)) + cap @ np.maximum(violation, 0)
    assert primal == pytest.approx(-model.dual_objective_, rel=1e-8)


@pytest.mark.parametrize("seed, n_unmet", [(0, 0), (3, 0), (0, 2), (3, 2)])
def test_slack_solution_equals_the_cvxpy_oracle(seed, n_unmet):
    cp = pytest.importorskip("cvxpy")
    model, constraints, W, _, cap = slack_fit(seed, 20.0, n_unmet)
    X = np.random.RandomState(seed).randn(30, 4)  # the samples of feasible_pairs(seed)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    V = cp.Variable((4, 4), symmetric=True)
    violation = cp.multiply(constraints.labels,
                            cp.hstack([z @ V @ z for z in Z]) - constraints.bounds)
    # D_vN(V, I/d) = −S(V) + log d for trace-one V; the hinge penalty is the slack.
    problem = cp.Problem(cp.Minimize(-cp.von_neumann_entr(V) + cap @ cp.pos(violation)),
                         [V >> 0, cp.trace(V) == 1])
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert linalg.norm(W - V.value) <= 1e-4 * linalg.norm(V.value)
    assert problem.value == pytest.approx(-model.dual_objective_ - np.log(4), abs=1e-6)


def test_warm_start_at_the_caps_reaches_the_same_optimum_as_the_cold_start():
    # The fit starts every pair violated under W₁ at its cap; corrected steps from
    # duals 0 solve the same convex problem and reach the same optimum.
    model, constraints, W, _, cap = slack_fit(0, 20.0, n_unmet=2)
    X = np.random.RandomState(0).randn(30, 4)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    lengths = np.einsum("ij,ij->i", Z, Z)
    delta, xi = constraints.labels.astype(float), constraints.bounds
    usable = xi < lengths
    lmax = np.where(delta > 0, lengths - xi, xi)[usable]
    lmin = np.where(delta > 0, -xi, xi - lengths)[usable]
    # The unmet pairs at their cap enter the cold start's prior, as in the fit.
    log_prior = np.log(0.25) * np.eye(4) + (Z[~usable].T * cap[~usable]) @ Z[~usable]
    values, vectors = np.linalg.eigh(log_prior)
    cold = run_steps(Z[usable] @ vectors, delta[usable], np.arange(usable.sum() + 1),
                     (delta * xi)[usable], lmin, lmax, 4, 5_000, correction=True,
                     log_prior=values, cap=cap[usable])
    assert_allclose(vectors @ cold["W"] @ vectors.T, W, atol=1e-7)
    assert_allclose(cold["dual"], model.dual_coef_[usable], rtol=1e-5, atol=1e-9)


def test_slack_replaces_the_infeasibility_stop():
    # The problem of the infeasibility test: with slack it has an optimum, reached.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    constraints = PairConstraints([[0, 1], [0, 2]], [-1, -1], bounds=[0.9, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = DefiniteBoost(gamma=2.0, dual_correction=True, tol=1e-10).fit(
            X, constraints=constraints)
    # Symmetric problem: the optimum is I/2 with both duals at their cap γ/(m‖z‖²) = 1.
    assert_allclose(model.get_mahalanobis_matrix(), np.eye(2) / 2, atol=1e-12)
    assert_allclose(model.dual_coef_, [1.0, 1.0])


def test_exact_projections_refuse_slack():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="gamma"):
        DefiniteBoost(projection="exact", gamma=0.1).fit(X, y)


@pytest.mark.parametrize("gamma, prior", [(20.0, "identity"), (np.inf, np.diag([1.0, 2, 3, 4]))])
def test_dual_objective_tracked_by_the_steps_is_eq_9(capsys, gamma, prior):
    # The steps track eq. 9 (and stop on weak duality's floor with it) from the start:
    # the prior's scale and the pairs fixed at their cap count from the first step.
    X, constraints = feasible_pairs(0, slack=-0.4 if np.isfinite(gamma) else 0.05)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    bounds = constraints.bounds.copy()
    unmet = np.flatnonzero(constraints.labels == -1)[:2]
    if np.isfinite(gamma):  # two pairs no trace-one W meets, fixed at their cap
        bounds[unmet] = 1.2 * np.einsum("ij,ij->i", Z[unmet], Z[unmet])
    constraints = PairConstraints(constraints.pairs, constraints.labels, bounds=bounds)
    model = DefiniteBoost(gamma=gamma, prior=prior, fit_unmeetable=True, tol=1e-11,
                          max_iter=1000, verbose=1)
    model.fit(X, constraints=constraints)
    last_row = capsys.readouterr().out.strip().splitlines()[-1].split()
    assert float(last_row[3]) == pytest.approx(model.dual_objective_, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 3])
def test_unmeetable_pairs_left_out_by_default_is_the_fit_without_them(seed):
    # fit_unmeetable=False solves the slack problem of the pairs some trace-one W meets.
    model, constraints, _, _, _ = slack_fit(seed, 20.0, n_unmet=2)
    X = np.random.RandomState(seed).randn(30, 4)
    Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    meetable = constraints.bounds < np.einsum("ij,ij->i", Z, Z)
    params = dict(gamma=20.0, tol=1e-11, max_iter=100_000)
    left_out = DefiniteBoost(**params).fit(X, constraints=constraints)
    kept = PairConstraints(constraints.pairs[meetable], constraints.labels[meetable],
                           bounds=constraints.bounds[meetable])
    # The same caps γ/(m ‖z‖²): m counts every pair, so gamma scales as in the full fit.
    without = DefiniteBoost(**{**params, "gamma": 20.0 * meetable.mean()}).fit(
        X, constraints=kept)
    assert_allclose(left_out.get_mahalanobis_matrix(), without.get_mahalanobis_matrix(),
                    atol=1e-9)
    assert_allclose(left_out.dual_coef_[meetable], without.dual_coef_, rtol=1e-6, atol=1e-12)
    assert np.all(left_out.dual_coef_[~meetable] == 0.0)
    # Fitted at their caps instead, the unmeetable pairs move the metric.
    assert not np.allclose(model.get_mahalanobis_matrix(), left_out.get_mahalanobis_matrix(),
                           atol=1e-3)


def test_auto_rank_is_the_top_principal_directions_only_above_the_cap():
    rng = np.random.RandomState(7)
    cap = AUTO_COMPONENTS
    X, y = rng.randn(40, cap + 3), rng.randint(3, size=40)
    auto = DefiniteBoost(random_state=0).fit(X, y)
    explicit = DefiniteBoost(n_components=cap, random_state=0).fit(X, y)
    assert auto.components_.shape == (cap, cap + 3)
    assert_array_equal(auto.components_, explicit.components_)
    # Up to cap features, or with n_components=None (kernel learning), every feature.
    for features, n_components in ((X[:, :cap], "auto"), (X, None)):
        full = DefiniteBoost(n_components=n_components, random_state=0).fit(features, y)
        assert full.components_.shape == (features.shape[1],) * 2
        assert np.trace(full.get_mahalanobis_matrix()) == pytest.approx(1.0, abs=1e-12)
