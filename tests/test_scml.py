"""SCML (Shi, Bellet & Sha, 2014): the compiled updates, the weights against cvxpy, the bases."""

import cvxpy as cp
import numpy as np
import pytest
from scipy import linalg
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import SCML, TripletConstraints
from psdmetric._convex._scml_basis import (
    _discriminant_directions,
    knn_triplets,
    lda_basis,
    triplet_difference_basis,
)
from psdmetric._convex._scml_kernels import triplet_updates, weighted_distances


def reference_updates(rows, draws, weights, mean, squares, count, beta, gamma, delta):
    """The NumPy updates (metric-learn's ``_fit`` loop) the compiled loop must match."""
    for batch in draws:
        block = rows[batch]
        gradient = block[1.0 + block @ weights > 0].sum(axis=0) / len(batch)
        count += 1
        mean += (gradient - mean) / count
        squares += gradient**2
        weights[:] = -count / (gamma * (delta + np.sqrt(squares))) * np.minimum(mean + beta, 0)
    return count


def test_compiled_updates_match_the_numpy_updates():
    rng = np.random.RandomState(0)
    projections, triplets = rng.randn(30, 7), rng.randint(30, size=(50, 3)).astype(np.intp)
    rows = ((projections[triplets[:, 0]] - projections[triplets[:, 1]])**2
            - (projections[triplets[:, 0]] - projections[triplets[:, 2]])**2)
    draws = rng.randint(50, size=(200, 5)).astype(np.intp)
    state = [np.zeros(7), np.zeros(7), np.zeros(7)]
    expected = [np.zeros(7), np.zeros(7), np.zeros(7)]
    count = triplet_updates(projections, triplets, draws, *state, 0.0, beta=1e-3, gamma=0.1,
                            delta=1e-3)
    reference = reference_updates(rows, draws, *expected, 0.0, 1e-3, 0.1, 1e-3)
    assert count == reference == 200
    for got, want in zip(state, expected):
        assert np.allclose(got, want, rtol=1e-12, atol=1e-14)


def test_compiled_distances_and_the_objective_match_dense_rows():
    rng = np.random.RandomState(1)
    X, y = rng.randn(40, 4), np.repeat([0, 1], 20)
    basis, weights = rng.randn(9, 4), np.maximum(rng.randn(9), 0)
    pairs = rng.randint(40, size=(25, 2)).astype(np.intp)
    P = X @ basis.T
    assert np.allclose(weighted_distances(P, pairs, weights),
                       ((P[pairs[:, 0]] - P[pairs[:, 1]])**2) @ weights, rtol=1e-12)
    model = SCML(0.01, basis=basis, max_iter=500, output_iter=100, random_state=0).fit(X, y)
    t = knn_triplets(X, y, 3, 10)
    deltas = (P[t[:, 0]] - P[t[:, 1]])**2 - (P[t[:, 0]] - P[t[:, 2]])**2
    dense = np.maximum(1 + deltas @ model.weights_, 0).mean() + 0.01 * model.weights_.sum()
    assert model.objective_ == pytest.approx(dense, rel=1e-12)


def test_weights_approach_the_convex_optimum_on_a_tiny_problem():
    rng = np.random.RandomState(0)
    X = rng.randn(12, 2)
    triplets = np.array([[i, (i + 1) % 12, (i + 5) % 12] for i in range(12)])
    basis = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    model = SCML(0.01, basis=basis, gamma=0.05, max_iter=40000, output_iter=2000, tol=0,
                 n_iter_no_change=20, random_state=0).fit(
                     X, constraints=TripletConstraints(triplets))
    P = X @ basis.T
    deltas = (P[triplets[:, 0]] - P[triplets[:, 1]])**2 - (P[triplets[:, 0]] - P[triplets[:, 2]])**2
    w = cp.Variable(3, nonneg=True)
    optimum = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 + deltas @ w)) / 12 + 0.01 * cp.sum(w))
                         ).solve(solver="CLARABEL")
    reached = np.maximum(1 + deltas @ model.weights_, 0).mean() + 0.01 * model.weights_.sum()
    assert model.objective_ == pytest.approx(reached, rel=1e-12)
    # A stochastic method: 40,000 updates get within 1% of the optimum.
    assert optimum <= reached <= optimum * 1.01
    assert np.allclose(model.get_mahalanobis_matrix(), (basis.T * model.weights_) @ basis)


def test_knn_triplets_are_every_genuine_with_every_impostor():
    rng = np.random.RandomState(1)
    X, y = rng.randn(20, 3), np.repeat([0, 1], 10)
    triplets = knn_triplets(X, y, 2, 3)
    distances = ((X[:, None] - X[None]) ** 2).sum(-1)
    expected = set()
    for i in range(20):
        same = [j for j in np.argsort(distances[i]) if j != i and y[j] == y[i]][:2]
        other = [k for k in np.argsort(distances[i]) if y[k] != y[i]][:3]
        expected |= {(i, j, k) for j in same for k in other}
    assert set(map(tuple, triplets.tolist())) == expected and len(triplets) == 20 * 6


@pytest.mark.parametrize("n_features", [30, 3])
def test_discriminant_directions_are_the_generalised_eigenvectors(n_features):
    rng = np.random.RandomState(0)
    X, codes = rng.randn(40, n_features) * rng.rand(n_features), np.repeat(np.arange(4), 10)
    got = _discriminant_directions(X, codes, min(3, n_features))
    means = np.array([X[codes == c].mean(axis=0) for c in range(4)])
    centred, spread = X - means[codes], means - X.mean(axis=0)
    within = centred.T @ centred / 40
    within += 1e-3 * np.trace(within) / n_features * np.eye(n_features)
    dense = linalg.eigh(spread.T @ spread / 4, within)[1][:, ::-1][:, :len(got)].T
    cosines = (got * dense).sum(axis=1) / linalg.norm(got, axis=1) / linalg.norm(dense, axis=1)
    assert np.allclose(np.abs(cosines), 1, rtol=0, atol=1e-10)


def test_lda_basis_and_labels():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    basis = lda_basis(X, y, 40, np.random.RandomState(0))
    assert basis.shape == (40, 13) and np.allclose(np.linalg.norm(basis, axis=1), 1)
    model = SCML(random_state=0, max_iter=2000, output_iter=500).fit(X, y)
    assert model.basis_.shape == (min(20 * 13, 2 * 178 * 2 - 1), 13)
    assert np.all(model.weights_ >= 0) and np.count_nonzero(model.weights_) < len(model.weights_)
    assert np.linalg.eigvalsh(model.get_mahalanobis_matrix()).min() >= -1e-10


def test_bad_input_is_refused():
    X, y = load_wine(return_X_y=True)
    triplets = TripletConstraints([[0, 1, 100], [2, 3, 120]])
    with pytest.raises(ValueError, match="basis='lda' needs class labels"):
        SCML(basis="lda").fit(X, constraints=triplets)
    with pytest.raises(ValueError, match="only 2"):
        SCML().fit(X, constraints=triplets)
    with pytest.raises(ValueError, match="13 columns"):
        SCML(basis=np.eye(3)).fit(X, constraints=triplets)
    with pytest.raises(ValueError, match="output_iter=600 must be at most max_iter=500"):
        SCML(max_iter=500, output_iter=600).fit(X, y)


def test_triplet_difference_basis_is_scale_free():
    rng = np.random.RandomState(0)
    X = rng.randn(12, 3)
    triplets = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]])
    reference = triplet_difference_basis(X, triplets, 3, np.random.RandomState(1))
    # At 1e77 the scatters' product is 1e308: it overflowed before the differences were scaled.
    scaled = triplet_difference_basis(X * 1e77, triplets, 3, np.random.RandomState(1))
    assert np.all(np.isfinite(scaled))
    np.testing.assert_allclose(np.abs(scaled @ reference.T), np.eye(3), atol=1e-8)


def test_stops_after_n_iter_no_change_rounds_without_a_tol_improvement(monkeypatch):
    from psdmetric._convex import _scml
    # Objectives per round: 10, 9 (improves), 8.99 (better, but by less than tol = 1%),
    # 9.5, 8.5 (improves), then three rounds that do not: stop at the third of them.
    values = iter([10.0, 9.0, 8.99, 9.5, 8.5, 8.6, 8.45, 9.0, 7.0])
    monkeypatch.setattr(_scml._DualAveraging, "value", lambda self, weights: next(values))
    solver = _scml._DualAveraging(np.ones((4, 2)), np.array([[0, 1, 2], [1, 2, 3]]),
                                  0.0, 0.01, 1, (0.01, 3))
    rng = np.random.RandomState(0)
    flags = [solver.round(1, rng).converged for _ in range(8)]
    assert flags == [False] * 7 + [True]
    assert solver.best_value == 8.45
