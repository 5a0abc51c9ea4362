"""LSML (Liu, Guo, Zhang, Jojic & Wang, 2012), quadruplet constraints and QuadrupletsClassifier."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import (LSML, MMC, QuadrupletConstraints, QuadrupletsClassifier,
                       TripletsClassifier)
from psdmetric._convex._lsml import LSMLObjective


@pytest.fixture(scope="module")
def problem():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :4]
    constraints = QuadrupletConstraints.from_labels(X, y, n_constraints=12, random_state=0)
    return X, y, constraints


def test_lsml_reaches_the_convex_optimum(problem):
    X, _, constraints = problem
    model = LSML(tol=1e-9).fit(X, constraints=constraints)
    q = constraints.quadruplets
    closer, farther = X[q[:, 0]] - X[q[:, 1]], X[q[:, 2]] - X[q[:, 3]]
    M = cp.Variable((4, 4), PSD=True)
    n = len(q)
    ab = cp.hstack([cp.quad_form(a, M) for a in closer])
    cd = cp.hstack([cp.quad_form(b, M) for b in farther])
    # [√ab − √cd]²₊ = excess² / (√ab + √cd)², with (√ab + √cd)² = ab + cd + 2√(ab·cd).
    excess, bound = cp.Variable(n, nonneg=True), cp.Variable(n)
    rules = [excess >= ab - cd] + [
        bound[i] <= ab[i] + cd[i] + 2 * cp.geo_mean(cp.hstack([ab[i], cd[i]]))
        for i in range(n)]
    loss = sum(cp.quad_over_lin(excess[i], bound[i]) for i in range(n)) / n
    optimum = cp.Problem(cp.Minimize(loss + cp.trace(M) - cp.log_det(M)), rules).solve(
        solver="CLARABEL")
    assert model.objective_ == pytest.approx(optimum, rel=1e-6)
    assert np.linalg.eigvalsh(model.get_mahalanobis_matrix()).min() > 0
    # The default stopping rule (L-BFGS, tol=1e-6) stops within 1e-6 of the optimum too.
    assert LSML().fit(X, constraints=constraints).objective_ == pytest.approx(optimum, rel=1e-6)


def test_gradient_matches_finite_differences(problem):
    X, _, constraints = problem
    q = constraints.quadruplets
    objective = LSMLObjective(X[q[:, 0]] - X[q[:, 1]], X[q[:, 2]] - X[q[:, 3]],
                              np.diag([1.0, 2.0, 0.5, 1.5]))
    rng = np.random.RandomState(0)
    A = rng.randn(4, 4)
    M = A @ A.T + 0.5 * np.eye(4)
    direction = rng.randn(4, 4)
    direction = direction + direction.T
    h = 1e-6
    numeric = (objective.value(M + h * direction) - objective.value(M - h * direction)) / 2 / h
    gradient = objective.gradient(M, objective.evaluate(M)[1])
    assert np.vdot(gradient, direction) == pytest.approx(numeric, rel=1e-6)


def test_labels_prior_and_bad_priors():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = LSML(random_state=0).fit(X, y)
    assert np.isfinite(model.components_).all()
    assert LSML(prior="covariance", random_state=0).fit(X, y).n_iter_ >= 1
    with pytest.raises(ValueError, match="positive-definite prior"):
        LSML(prior=np.zeros((13, 13))).fit(X, y)
    wide = np.random.RandomState(0).randn(10, 20)
    with pytest.warns(UserWarning, match="covariance of X is singular"):
        model = LSML(prior="covariance", random_state=0).fit(wide, [0, 1] * 5)
    assert np.isfinite(model.components_).all()


def test_quadruplet_constraints_validate_and_draw_from_labels():
    assert QuadrupletConstraints([[0.0, 1.0, 2.0, 3.0]]).quadruplets.dtype == np.intp
    with pytest.raises(ValueError, match=r"shape \(n, 4\)"):
        QuadrupletConstraints([[0, 1, 2]])
    with pytest.raises(ValueError, match="non-negative"):
        QuadrupletConstraints([[0, 1, -2, 3]])
    with pytest.raises(TypeError, match="integer row indices"):
        QuadrupletConstraints([[0, 1.5, 2, 3]])
    with pytest.raises(ValueError, match=r"row 1, \[2, 1, 1, 2\], compares a pair"):
        QuadrupletConstraints([[0, 1, 2, 3], [2, 1, 1, 2]])
    y = np.repeat([0, 1, 2], 10)
    drawn = QuadrupletConstraints.from_labels(None, y, n_constraints=50, random_state=0)
    q = drawn.quadruplets
    assert len(q) == 50
    assert np.all(y[q[:, 0]] == y[q[:, 1]]) and np.all(y[q[:, 2]] != y[q[:, 3]])
    with pytest.raises(ValueError, match="X has only 30 rows"):
        LSML().fit(np.random.RandomState(0).randn(30, 2),
                   constraints=QuadrupletConstraints([[0, 1, 2, 40]]))


def test_quadruplets_classifier_orders_the_pairs_it_learned():
    X, y = load_iris(return_X_y=True)
    quadruplets = X[QuadrupletConstraints.from_labels(X, y, random_state=0).quadruplets]
    model = QuadrupletsClassifier(LSML()).fit(quadruplets[::2])
    Z = model.learner_.transform(quadruplets.reshape(-1, 4)).reshape(len(quadruplets), 4, -1)
    expected = (np.linalg.norm(Z[:, 2] - Z[:, 3], axis=1)
                - np.linalg.norm(Z[:, 0] - Z[:, 1], axis=1))
    assert np.allclose(model.decision_function(quadruplets), expected)
    assert model.score(quadruplets[1::2]) == np.mean(expected[1::2] > 0) > 0.9
    swapped = quadruplets[:, [2, 3, 0, 1]]
    assert np.array_equal(model.predict(swapped), -model.predict(quadruplets))
    with pytest.raises(TypeError, match="wrap it in PairsClassifier"):
        QuadrupletsClassifier(MMC()).fit(quadruplets)
    with pytest.raises(TypeError, match="wrap it in QuadrupletsClassifier"):
        TripletsClassifier(LSML()).fit(quadruplets[:, :3])
    with pytest.raises(ValueError, match="looks like quadruplets of points"):
        LSML().fit(quadruplets)
