"""PSDBoost: the SDP (3) by column generation, checked against cvxpy and its own bounds."""

import tracemalloc
import warnings

import cvxpy as cp
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import psdmetric._boost._column_generation as column_generation
import psdmetric._boost._psdboost as psdboost_module
import psdmetric._boost._pricing as base_learner
import psdmetric._boost._master_lp as master_lp
from psdmetric import PSDBoost, TripletConstraints, triplets_from_labels

# Comparisons with the oracle allow Clarabel's 1e-7 tolerances (the learner's own LPs are
# solved to 1e-10), in the learner's rescaled units.
LP_TOL = 1e-7


def triplet_problem(n_features, n_samples, seed):
    rng = np.random.RandomState(seed)
    y = np.arange(n_samples) % 3
    X = rng.randn(n_samples, n_features) + 1.5 * rng.randn(3, n_features)[y]
    return X, y, triplets_from_labels(X, y).triplets


def differences(X, triplets, relative=False):
    """``a_i − a_k`` and ``a_i − a_j``, divided by ``√(d²(i, k) + d²(i, j))`` if relative."""
    i, j, k = triplets.T
    P, Q = X[i] - X[k], X[i] - X[j]
    if relative:
        size = np.sqrt((P**2).sum(axis=1) + (Q**2).sum(axis=1))[:, None]
        P, Q = P / size, Q / size
    return P, Q


def margins(M, P, Q):
    """``⟨A_r, M⟩ = d²_M(i, k) − d²_M(i, j)`` for every triplet (scaled if P, Q are)."""
    return np.einsum("ij,jk,ik->i", P, M, P) - np.einsum("ij,jk,ik->i", Q, M, Q)


def primal_objective(M, P, Q, C):
    """``max_ρ ρ − C Σ (ρ − m_r)₊``: the value of (3) at M (optimal ρ is a margin)."""
    m = margins(M, P, Q)
    return max(rho - C * np.maximum(rho - m, 0).sum() for rho in m)


def sdp_optimum(P, Q, C, rank, shrinkage):
    """The SDP (3) over ``M = s I / D + (1 − s) Y``, ``0 ⪯ Y ⪯ I / rank``, ``tr M = 1``.

    Solved by an interior-point solver, with the bounds on ``M`` written out:
    ``s I / D ⪯ M ⪯ s I / D + (1 − s) I / rank``.
    """
    # Solve at unit scale, where Clarabel's absolute tolerances mean something; the
    # value scales as the squared scale.
    scale = np.sqrt(max(np.einsum("ij,ij->i", P, P).max(), np.einsum("ij,ij->i", Q, Q).max()))
    P, Q = P / scale, Q / scale
    n_features = P.shape[1]
    M = cp.Variable((n_features, n_features), PSD=True)
    rho = cp.Variable()
    xi = cp.Variable(len(P), nonneg=True)
    m = cp.sum(cp.multiply(P @ M, P), axis=1) - cp.sum(cp.multiply(Q @ M, Q), axis=1)
    floor = shrinkage / n_features * np.eye(n_features)
    constraints = [cp.trace(M) == 1, m >= rho - xi, M - floor >> 0]
    if rank > 1:
        constraints.append(floor + (1 - shrinkage) * np.eye(n_features) / rank - M >> 0)
    problem = cp.Problem(cp.Maximize(rho - C * cp.sum(xi)), constraints)
    # 1e-8 (the default) is at the edge of double precision for these cone sizes.
    problem.solve(solver=cp.CLARABEL, tol_feas=1e-7, tol_gap_abs=1e-7, tol_gap_rel=1e-7)
    assert problem.status == cp.OPTIMAL
    return problem.value * scale**2


def unit_of(X, triplets, relative=False):
    """The squared scale the learner measures ``tol`` in."""
    return psdboost_module._scaled_differences(X, triplets, relative)[1]


# (n_features, n_samples, C, smoothing, bases_per_iter, seed, margin, min_rank, shrinkage)
PROBLEMS = [
    (3, 30, 1.0, 0.0, 1, 0, "absolute", 1, 0.0),
    (5, 40, 0.1, 0.9, 8, 1, "absolute", 1, 0.0),
    (8, 60, 0.05, 0.0, 1, 2, "absolute", 1, 0.0),
    (8, 60, 0.05, 0.9, 8, 2, "absolute", 1, 0.0),
    (6, 40, 0.05, 0.9, 8, 3, "relative", 1, 0.0),
    (6, 40, 0.05, 0.9, 4, 3, "relative", 3, 0.0),
    (5, 40, 0.1, 0.0, 1, 4, "absolute", 2, 0.0),
    (6, 40, 0.05, 0.9, 8, 3, "relative", 2, 0.3),
    (5, 40, 0.1, 0.0, 1, 4, "absolute", 1, 0.05),
]


@pytest.fixture(scope="module", params=PROBLEMS,
                ids=lambda p: "D{}-n{}-C{}-s{}-k{}-seed{}-{}-r{}-shrink{}".format(*p))
def fitted(request):
    (n_features, n_samples, C, smoothing, bases_per_iter, seed, margin, rank,
     shrinkage) = request.param
    X, _, triplets = triplet_problem(n_features, n_samples, seed)
    learner = PSDBoost(C=C, margin=margin, min_rank=rank, shrinkage=shrinkage,
                       smoothing=smoothing, bases_per_iter=bases_per_iter, tol=1e-7,
                       max_iter=1000)
    learner.fit(X, constraints=TripletConstraints(triplets))
    relative = margin == "relative"
    P, Q = differences(X, triplets, relative)
    # The learner's units: lengths are relative when the margins are.
    unit = LP_TOL * unit_of(X, triplets, relative)
    return learner, P, Q, C, rank, unit, sdp_optimum(P, Q, C, rank, learner.shrinkage)


def test_objective_equals_the_sdp_optimum_and_x_is_feasible(fitted):
    learner, P, Q, C, rank, _, optimum = fitted
    M = learner.get_mahalanobis_matrix()
    n_features, shrinkage = P.shape[1], learner.shrinkage
    assert abs(learner.objective_ - optimum) <= 1e-4
    assert abs(primal_objective(M, P, Q, C) - optimum) <= 1e-4
    assert_allclose(np.trace(M), 1.0, atol=1e-12)
    assert_allclose(M, M.T, atol=1e-14)
    eigenvalues = np.linalg.eigvalsh(M)
    floor = shrinkage / n_features
    assert eigenvalues.min() >= floor - 1e-12
    assert eigenvalues.max() <= floor + (1.0 - shrinkage) / rank + 1e-12
    assert np.sum(eigenvalues > 1e-9) >= rank
    if shrinkage > 0:
        assert learner.components_.shape == (n_features, n_features)
    bases = learner.bases_
    assert bases.shape[1:] == (rank, n_features)
    assert_allclose(np.einsum("bik,bjk->bij", bases, bases),
                    np.broadcast_to(np.eye(rank), (len(bases), rank, rank)), atol=1e-10)
    Y = np.einsum("b,bki,bkj->ij", learner.base_weights_, bases, bases) / rank
    assert_allclose(floor * np.eye(n_features) + (1.0 - shrinkage) * Y, M, atol=1e-12)


def test_restricted_master_rises_monotonically_to_the_optimum_from_below(fitted):
    learner, _, _, _, _, scale, optimum = fitted
    lower, upper = learner.dual_objective_, learner.max_eigenvalue_
    assert np.all(np.diff(lower) >= -scale), "π decreased between iterations"
    assert np.all(np.diff(upper) <= 0), "the best λmax(H) increased"
    assert np.all(lower <= optimum + scale)
    assert np.all(upper >= optimum - 1e-6)
    assert optimum - lower[-1] <= 1e-4


def test_primal_recovered_from_lp_duals_satisfies_kkt(fitted):
    learner, P, Q, C, _, scale, _ = fitted
    w, theta, rho, xi = (learner.dual_coef_, learner.base_weights_, learner.margin_,
                         learner.slack_)
    m = margins(learner.get_mahalanobis_matrix(), P, Q)
    assert np.all((w >= 0) & (w <= C)) and abs(w.sum() - 1) <= 1e-9
    assert np.all(theta > 0) and abs(theta.sum() - 1) <= 1e-12
    assert np.all(xi >= 0)
    assert np.all(m >= rho - xi - scale), "(ρ, ξ) infeasible for (3) at the learned X"
    # Complementary slackness: weight only on triplets at the margin, slack only at w = C.
    assert np.all(np.abs((m - rho + xi)[w > 1e-9]) <= 10 * scale)
    assert np.all(np.abs(w[xi > 10 * scale] - C) <= 1e-9)
    # Strong duality of the last restricted LP: ρ − C Σ ξ = π.
    assert abs(learner.objective_ - learner.dual_objective_[-1]) <= 10 * scale


def test_stopping_rule_is_honoured_and_rank_is_at_most_the_number_of_bases():
    X, _, triplets = triplet_problem(8, 60, seed=3)
    constraints = TripletConstraints(triplets)
    tol = 1e-2
    learner = PSDBoost(C=0.05, min_rank=1, shrinkage=0.0, smoothing=0.0, bases_per_iter=1,
                       tol=tol).fit(X, constraints=constraints)
    lower, upper = learner.dual_objective_, learner.max_eigenvalue_
    first_gap = upper[0] - lower[0]
    epsilon = tol * np.maximum(np.maximum(np.abs(lower), np.abs(upper)), first_gap)
    assert upper[-1] - lower[-1] <= epsilon[-1]
    assert np.all(upper[:-1] - lower[:-1] > epsilon[:-1]), "kept going after λmax ≤ π + ε′"
    # Algorithm 1 adds one base per iteration: the first before the loop, then one per
    # iteration that did not stop.
    assert learner.components_.shape[0] <= len(learner.bases_) <= learner.n_iter_
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        capped = PSDBoost(C=0.05, min_rank=1, shrinkage=0.0, smoothing=0.0, bases_per_iter=1,
                          tol=1e-9, max_iter=3).fit(X, constraints=constraints)
    assert capped.n_iter_ == 3 and len(capped.dual_objective_) == 3
    assert np.linalg.matrix_rank(capped.get_mahalanobis_matrix()) <= 3


def test_tailing_off_stops_once_the_gap_closes_too_slowly(monkeypatch):
    # Overlapping classes: π settles long before λmax(H) comes down to it. A window of
    # 3 iterations (10 by default) makes the rule fire on a problem this small.
    X, y = make_classification(400, 30, n_informative=20, n_classes=7, flip_y=0.05,
                               random_state=0)
    monkeypatch.setattr(column_generation, "_STALL_WINDOW", 10**6)
    certified = PSDBoost(random_state=0).fit(X, y)
    monkeypatch.setattr(column_generation, "_STALL_WINDOW", 3)
    stalled = PSDBoost(random_state=0).fit(X, y)
    n_iter, tol = stalled.n_iter_, stalled.tol
    assert n_iter < certified.n_iter_
    # The rule only stops the fit: the path up to there is the same.
    assert_allclose(stalled.dual_objective_, certified.dual_objective_[:n_iter], rtol=1e-12)
    lower, upper = stalled.dual_objective_, stalled.max_eigenvalue_
    # At the last iteration nothing was priced, so its records are the ones the rule saw;
    # the window's start is the gap recorded 3 iterations earlier.
    gap, window_gap = upper[-1] - lower[-1], upper[-4] - lower[-4]
    assert gap > tol * max(abs(lower[-1]), abs(upper[-1])), "the certificate did not stop it"
    slow_pi = lower[-1] - lower[-4] <= tol * gap
    slow_gap = window_gap - gap < gap
    assert slow_pi or slow_gap


def test_slow_gap_rule_ends_a_fit_the_pi_rule_lets_run(monkeypatch):
    X, y = make_classification(400, 30, n_informative=20, n_classes=7, flip_y=0.05,
                               random_state=0)
    monkeypatch.setattr(column_generation, "_STALL_WINDOW", 3)
    both = PSDBoost(random_state=0).fit(X, y)
    monkeypatch.setattr(column_generation, "_NEAR_GAP", 0.0)
    pi_rule_only = PSDBoost(random_state=0).fit(X, y)
    assert both.n_iter_ < pi_rule_only.n_iter_
    assert_allclose(both.dual_objective_, pi_rule_only.dual_objective_[:both.n_iter_],
                    rtol=1e-12)


def test_hard_margin_maximises_the_smallest_margin():
    X, _, triplets = triplet_problem(4, 30, seed=4)
    constraints = TripletConstraints(triplets)
    hard = PSDBoost(C=1.0, margin="absolute", tol=1e-8).fit(X, constraints=constraints)
    # For C ≥ 1 the bound w ≤ C never binds: the same problem, no slack.
    looser = PSDBoost(C=7.0, margin="absolute", tol=1e-8).fit(X, constraints=constraints)
    assert_allclose(hard.objective_, looser.objective_, atol=1e-6)
    assert_allclose(hard.slack_, 0.0, atol=1e-9)
    m = margins(hard.get_mahalanobis_matrix(), *differences(X, triplets))
    assert_allclose(hard.margin_, m.min(), atol=1e-6)


def test_labels_give_the_triplets_of_triplets_from_labels():
    rng = np.random.RandomState(5)
    X = rng.randn(45, 4)
    y = rng.randint(0, 3, size=45)
    learner = PSDBoost(C=0.1, n_neighbors=2, max_triplets=None, random_state=0).fit(X, y)
    expected = triplets_from_labels(X, y, n_neighbors=2).triplets
    assert_array_equal(learner.constraints_.triplets, expected)
    explicit = PSDBoost(C=0.1).fit(X, constraints=learner.constraints_)
    assert_allclose(explicit.components_, learner.components_)


def test_subsampled_triplets_come_from_the_labels():
    X, y, _ = triplet_problem(3, 60, seed=6)
    learner = PSDBoost(C=0.1, n_neighbors=2, max_triplets=50, random_state=0).fit(X, y)
    triplets = learner.constraints_.triplets
    assert triplets.shape == (50, 3)
    i, j, k = triplets.T
    assert np.all(y[i] == y[j]) and np.all(y[i] != y[k])


def explicit_H(P, Q, w):
    """Gold standard: H = Σ w_r A_r summed one triplet matrix at a time."""
    return sum(wr * (np.outer(p, p) - np.outer(q, q)) for wr, p, q in zip(w, P, Q))


@pytest.mark.parametrize(
    "route, n_weighted, dense_max_features, closer",
    [
        ("span", 15, 512, False),  # 30 difference vectors < 40 features
        ("span-zero-top", 15, 512, True),  # H ⪯ 0 on the span: λmax = 0 off it
        ("dense", 30, 512, False),
        ("lanczos", 30, 0, False),
    ],
)
def test_base_learner_matches_the_explicit_sum_of_triplet_matrices(
    monkeypatch, route, n_weighted, dense_max_features, closer
):
    monkeypatch.setattr(base_learner, "_DENSE_MAX_FEATURES", dense_max_features)
    X, _, triplets = triplet_problem(40, 30, seed=7)
    if closer:
        triplets[:, 2] = triplets[:, 0]  # a_k = a_i: every A_r = −q qᵀ
    rng = np.random.RandomState(0)
    w = np.zeros(len(triplets))
    w[rng.choice(len(triplets), n_weighted, replace=False)] = rng.rand(n_weighted)
    w /= w.sum()
    P, Q = differences(X, triplets)
    values, vectors = base_learner.top_eigenpairs(np.concatenate([P, Q]), w, 3, rng)
    H = explicit_H(P, Q, w)
    expected = np.linalg.eigvalsh(H)[::-1]
    scale = np.abs(expected).max()
    assert_allclose(values[0], expected[0], atol=1e-10 * scale)
    if not closer:
        assert_allclose(values, expected[:3], atol=1e-10 * scale)
    assert_allclose(np.linalg.norm(vectors, axis=0), 1.0)
    assert_allclose(H @ vectors, vectors * values, atol=1e-9 * scale)


def test_lanczos_fit_matches_the_dense_fit(monkeypatch):
    X, _, triplets = triplet_problem(20, 60, seed=12)
    constraints = TripletConstraints(triplets)
    dense = PSDBoost(C=0.05, tol=1e-7).fit(X, constraints=constraints)
    monkeypatch.setattr(base_learner, "_DENSE_MAX_FEATURES", 0)
    lanczos = PSDBoost(C=0.05, tol=1e-7, random_state=0).fit(X, constraints=constraints)
    assert_allclose(lanczos.objective_, dense.objective_, atol=1e-5)


def test_many_features_never_form_the_feature_by_feature_matrix():
    rng = np.random.RandomState(8)
    X = rng.randn(20, 600)
    y = np.arange(20) % 2
    # One BLAS thread: the per-iteration QR is small, and a busy machine makes a
    # second OpenBLAS thread ten times slower, not faster.
    with threadpool_limits(1):
        tracemalloc.start()
        # One base is a vector (the pool of min_rank-dimensional bases would outgrow
        # D²), and one target per sample keeps the triplets few.
        learner = PSDBoost(C=0.1, min_rank=1, shrinkage=0.0, n_neighbors=1,
                           random_state=0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # One 600×600 float matrix alone would take 2.9 MB.
    assert peak < 2e6
    assert_allclose(np.trace(learner.get_mahalanobis_matrix()), 1.0)
    lower, upper = learner.dual_objective_, learner.max_eigenvalue_
    scale = max(abs(lower[-1]), abs(upper[-1]), upper[0] - lower[0])
    assert upper[-1] - lower[-1] <= learner.tol * scale


@pytest.mark.parametrize("margin, power", [("absolute", 2), ("relative", 0)])
@pytest.mark.parametrize("scale", [1e-120, 1e6, 1e120])
def test_scaling_the_data_keeps_x_and_scales_the_objective(scale, margin, power):
    X, _, triplets = triplet_problem(5, 40, seed=9)
    constraints = TripletConstraints(triplets)
    reference = PSDBoost(C=0.1, margin=margin).fit(X, constraints=constraints)
    scaled = PSDBoost(C=0.1, margin=margin).fit(scale * X, constraints=constraints)
    assert_allclose(scaled.get_mahalanobis_matrix(), reference.get_mahalanobis_matrix(),
                    atol=1e-9)
    assert_allclose(scaled.objective_, scale**power * reference.objective_, rtol=1e-9)
    assert scaled.n_iter_ == reference.n_iter_


def test_c_below_one_over_the_number_of_triplets_is_rejected():
    X, _, triplets = triplet_problem(3, 30, seed=10)
    n = len(triplets)
    with pytest.raises(ValueError, match=rf"C=0.01 is below 1/n_triplets = 1/{n}"):
        PSDBoost(C=0.01).fit(X, constraints=TripletConstraints(triplets))
    PSDBoost(C=1 / n).fit(X, constraints=TripletConstraints(triplets))


def test_verbose_prints_one_row_per_iteration(capsys):
    X, y, _ = triplet_problem(4, 30, seed=11)
    learner = PSDBoost(C=0.1, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "[PSDBoost]" and "dual obj. π" in lines[1]
    rows = lines[3:]
    assert len(rows) == learner.n_iter_
    last = rows[-1].split()
    assert int(last[0]) == learner.n_iter_
    assert float(last[5]) <= learner.tol


def test_identical_points_give_a_valid_trace_one_metric():
    X = np.zeros((6, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        learner = PSDBoost().fit(X, constraints=TripletConstraints([[0, 1, 2], [3, 4, 5]]))
    assert learner.objective_ == 0.0
    assert_allclose(np.trace(learner.get_mahalanobis_matrix()), 1.0)


def test_default_c_bounds_the_fraction_of_margin_errors_and_of_support_triplets():
    # C = 1 / (ν n_triplets): w ≤ C with Σ w = 1 puts weight on at least ν n_triplets
    # triplets, and ξ_r > 0 forces w_r = C, so at most ν n_triplets have slack.
    X, y, _ = triplet_problem(6, 90, seed=13)
    learner = PSDBoost(random_state=0).fit(X, y)
    n_triplets = len(learner.constraints_.triplets)
    nu = psdboost_module._DEFAULT_NU
    assert_allclose(learner.C_, 1.0 / (nu * n_triplets))
    slack_tol = 1e-9 * abs(learner.margin_)
    assert np.sum(learner.slack_ > slack_tol) <= nu * n_triplets + 1e-9
    assert np.sum(learner.dual_coef_ > 0) >= nu * n_triplets - 1e-9


def test_min_rank_keeps_every_eigenvalue_below_its_inverse():
    X, y, _ = triplet_problem(10, 90, seed=14)
    constraints = triplets_from_labels(X, y)
    paper = PSDBoost(C=1.0, min_rank=1, shrinkage=0.0).fit(X, constraints=constraints)
    assert np.linalg.eigvalsh(paper.get_mahalanobis_matrix()).max() > 1 / 4, "bound inactive"
    for min_rank in (4, 10):
        learner = PSDBoost(C=1.0, min_rank=min_rank).fit(X, constraints=constraints)
        eigenvalues = np.linalg.eigvalsh(learner.get_mahalanobis_matrix())
        assert eigenvalues.max() <= 1.0 / min_rank + 1e-12
        assert learner.components_.shape[0] >= min_rank
    # min_rank = n_features leaves one feasible point: the Euclidean metric I / D.
    assert_allclose(learner.get_mahalanobis_matrix(), np.eye(10) / 10, atol=1e-12)


def test_highspy_and_linprog_give_the_same_fit(monkeypatch):
    pytest.importorskip("highspy")
    X, y, _ = triplet_problem(8, 90, seed=15)
    warm = PSDBoost(tol=1e-6, random_state=0).fit(X, y)
    monkeypatch.setattr(master_lp, "highspy", None)
    cold = PSDBoost(tol=1e-6, random_state=0).fit(X, y)
    assert_allclose(warm.objective_, cold.objective_, rtol=1e-5)
    assert_allclose(warm.get_mahalanobis_matrix(), cold.get_mahalanobis_matrix(), atol=1e-3)


def _fail_first_solves(monkeypatch, n_failures, backend):
    """Make HiGHS report a non-optimal status (after solving) for its first solves."""
    calls = {"n": 0}
    if backend == "highspy":
        highspy = pytest.importorskip("highspy")
        run = master_lp.HighsLP._run

        def failing_run(self):
            status = run(self)
            calls["n"] += 1
            return highspy.HighsModelStatus.kUnknown if calls["n"] <= n_failures else status

        monkeypatch.setattr(master_lp.HighsLP, "_run", failing_run)
    else:
        monkeypatch.setattr(master_lp, "highspy", None)
        linprog = master_lp.linprog

        def failing_linprog(*args, **kwargs):
            result = linprog(*args, **kwargs)
            calls["n"] += 1
            if calls["n"] <= n_failures:
                result.status = 4
                result.message = "HiGHS Status 15: model_status is Unknown"
            return result

        monkeypatch.setattr(master_lp, "linprog", failing_linprog)


@pytest.mark.parametrize("backend", ["highspy", "linprog"])
def test_a_lp_not_proved_optimal_is_resolved_or_its_feasible_point_used(
    monkeypatch, backend
):
    X, y, _ = triplet_problem(5, 60, seed=16)
    constraints = triplets_from_labels(X, y)
    reference = PSDBoost(tol=1e-6).fit(X, constraints=constraints)
    with monkeypatch.context() as patch:
        _fail_first_solves(patch, 1, backend)  # the interior-point re-solve succeeds
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            resolved = PSDBoost(tol=1e-6).fit(X, constraints=constraints)
    assert_allclose(resolved.objective_, reference.objective_, rtol=1e-6)
    with monkeypatch.context() as patch:
        _fail_first_solves(patch, 2, backend)  # both methods fail on the first LP
        with pytest.warns(ConvergenceWarning, match="did not prove the restricted master"):
            fallback = PSDBoost(tol=1e-6).fit(X, constraints=constraints)
    assert_allclose(fallback.objective_, reference.objective_, rtol=1e-6)
