"""MMC (Xing, Ng, Jordan & Russell, 2002): the optimum against cvxpy, derivatives, projections."""

import cvxpy as cp
import numpy as np
import pytest
from scipy import linalg
from scipy.sparse.linalg import aslinearoperator
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import MMC, PairConstraints, pairs_from_labels
from psdmetric._convex import _mmc as mmc
from psdmetric._convex._mmc import (_DiagonalNewton, _ProjectedAscent, _spread,
                                    diagonal_objective)
from psdmetric._core import leading_eigenpairs, project_trace_bounded
from psdmetric._core._projections import _simplex_shift


@pytest.fixture(scope="module")
def problem():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :5]
    constraints = pairs_from_labels(y, 60, 0)
    differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    return X, constraints, differences[constraints.labels == 1], differences[
        constraints.labels == -1]


def test_full_mmc_reaches_the_convex_optimum(problem):
    X, constraints, similar, dissimilar = problem
    model = MMC().fit(X, constraints=constraints)
    M = cp.Variable((5, 5), PSD=True)
    spread = cp.sum(cp.hstack([cp.sqrt(cp.quad_form(v, M)) for v in dissimilar]))
    optimum = cp.Problem(cp.Maximize(spread),
                         [cp.trace(similar.T @ similar @ M) <= 1]).solve(solver="CLARABEL")
    learned = model.get_mahalanobis_matrix()
    assert model.objective_ == pytest.approx(optimum, rel=1e-5)
    # The learned metric is feasible and attains its reported objective.
    assert np.einsum("ij,jk,ik->", similar, learned, similar) <= 1 + 1e-6
    assert np.sqrt(np.einsum("ij,jk,ik->i", dissimilar, learned, dissimilar)).sum() == \
        pytest.approx(model.objective_, rel=1e-6)
    assert np.linalg.eigvalsh(learned).min() >= -1e-12
    # The stopping test is a duality gap: a looser tol still bounds the shortfall.
    for tol in (1e-1, 1e-2, 1e-3):
        loose = MMC(tol=tol).fit(X, constraints=constraints)
        assert optimum - tol * loose.objective_ <= loose.objective_ <= optimum * (1 + 1e-7)


def test_diagonal_mmc_reaches_the_convex_optimum(problem):
    X, constraints, similar, dissimilar = problem
    model = MMC(diagonal=True, diagonal_c=2.0).fit(X, constraints=constraints)
    w = cp.Variable(5, nonneg=True)
    objective = (similar**2).sum(0) @ w - 2.0 * cp.log(cp.sum(cp.sqrt((dissimilar**2) @ w)))
    optimum = cp.Problem(cp.Minimize(objective)).solve(solver="CLARABEL")
    M = model.get_mahalanobis_matrix()
    assert model.objective_ == pytest.approx(optimum, rel=1e-7, abs=1e-7)
    assert np.allclose(M, np.diag(np.diag(M)), atol=1e-12) and np.diag(M).min() >= 0


def test_gradients_match_finite_differences(problem):
    _, _, similar, dissimilar = problem
    rng = np.random.RandomState(0)
    ascent = _ProjectedAscent(similar, dissimilar)
    D = ascent.dissimilar
    A = rng.randn(5, 5)
    N = A @ A.T + np.eye(5)
    direction = rng.randn(5, 5)
    direction = direction + direction.T

    def spread(M):
        return _spread(np.einsum("ij,jk,ik->i", D, M, D))

    gradient = ascent._gradient(spread(N)[1])
    h = 1e-6
    numeric = (spread(N + h * direction)[0] - spread(N - h * direction)[0]) / 2 / h
    assert np.vdot(gradient, direction) == pytest.approx(numeric, rel=1e-6)
    # Above _IMPLICIT_FEATURES the same gradient acts through products with the pairs.
    ascent.implicit = True
    implicit = ascent._gradient(spread(N)[1])
    assert np.allclose(implicit @ np.eye(5), gradient, rtol=1e-13, atol=1e-12)
    assert np.allclose(implicit @ direction[:, 0], gradient @ direction[:, 0], rtol=1e-13)

    newton = _DiagonalNewton(similar, dissimilar, 1.5)
    w = rng.rand(5) + 0.5
    first, hessian = newton.derivatives(w)
    step = np.eye(5) * h
    f = [diagonal_objective(similar, dissimilar, w + s, 1.5) -
         diagonal_objective(similar, dissimilar, w - s, 1.5) for s in step]
    assert np.allclose(first, np.array(f) / 2 / h, rtol=1e-6)
    g = [(newton.derivatives(w + s)[0] - newton.derivatives(w - s)[0]) / 2 / h for s in step]
    assert np.allclose(hessian, np.array(g), rtol=1e-5, atol=1e-8)


def test_psd_projection_with_a_trace_bound_is_the_nearest_point():
    rng = np.random.RandomState(1)
    for trace in (0.5, 3.0, 100.0):
        B = rng.randn(4, 4)
        B = B + B.T
        A = cp.Variable((4, 4), PSD=True)
        cp.Problem(cp.Minimize(cp.sum_squares(A - B)), [cp.trace(A) <= trace]).solve(
            solver="CLARABEL")
        values, vectors = project_trace_bounded(B, trace)
        projected = (vectors * values) @ vectors.T
        assert np.allclose(projected, A.value, atol=1e-6)
        assert values.min() > 0 and values.sum() <= trace + 1e-12


@pytest.mark.parametrize("rank", [1, 3, 12])
def test_lanczos_projection_matches_the_dense_one(rank):
    # Low rank plus a PSD bulk, as MMC's N + step·G: Lanczos on products must give the
    # projection a full eigendecomposition gives, from a rank hint that may be too low.
    rng = np.random.RandomState(rank)
    low = rng.randn(120, rank)
    bulk = rng.randn(120, 300) / 30
    B = low @ low.T + bulk @ bulk.T
    values, vectors = linalg.eigh(B)
    expected = (vectors * np.maximum(values - _simplex_shift(values, 1.0), 0)) @ vectors.T
    for operator in (B, aslinearoperator(B)):
        kept, axes = project_trace_bounded(operator, 1.0, rank=1)
        assert np.allclose((axes * kept) @ axes.T, expected, rtol=0, atol=1e-12)
        assert kept.sum() == pytest.approx(1.0, rel=1e-12)
    top = leading_eigenpairs(aslinearoperator(B), 1)[0][0]
    assert top == pytest.approx(values[-1], rel=1e-13)


def test_implicit_mmc_takes_the_dense_path(monkeypatch):
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    constraints = pairs_from_labels(y, 60, 0)
    dense = MMC(tol=1e-3).fit(X, constraints=constraints)
    monkeypatch.setattr(mmc, "_IMPLICIT_FEATURES", 0)
    implicit = MMC(tol=1e-3).fit(X, constraints=constraints)
    assert implicit.n_iter_ == dense.n_iter_
    assert np.allclose(implicit.get_mahalanobis_matrix(), dense.get_mahalanobis_matrix(),
                       rtol=1e-9, atol=1e-12)


def test_labels_give_a_psd_metric_and_bad_pairs_are_refused():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    model = MMC(random_state=0).fit(X, y)
    assert np.isfinite(model.components_).all()
    assert np.linalg.eigvalsh(model.get_mahalanobis_matrix()).min() >= -1e-10
    only_similar = PairConstraints([[0, 1], [2, 3]], [1, 1])
    with pytest.raises(ValueError, match="needs a dissimilar pair"):
        MMC().fit(X, constraints=only_similar)
    with pytest.raises(ValueError, match="X has only 178 rows"):
        MMC().fit(X, constraints=PairConstraints([[0, 500], [2, 3]], [1, -1]))
