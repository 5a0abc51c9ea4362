"""Constraint screening in the cyclic driver: the compiled screen against NumPy, the
stopping rule, screened-out constraints are exact no-ops of the kernels, and screened
fits reach the fixed point of full sweeps."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import linalg
from sklearn.base import clone

import psdmetric._bregman._definite_boost as definite_boost_module
import psdmetric._bregman._logdet as logdet_module
import psdmetric._bregman._von_neumann as von_neumann_module
from psdmetric import DefiniteBoost, LogDet, PairConstraints, VonNeumann
from psdmetric._bregman._logdet_kernels import logdet_sweep
from psdmetric._bregman._von_neumann_kernels import von_neumann_sweep
from psdmetric._core import (
    cyclic_projections,
    pair_squared_distances,
    paired_rows,
    screen_violations,
)
from psdmetric._core._cyclic import SCREEN_MARGIN


def reference_pair_squared_distances(F, pairs):
    """NumPy gold standard of the compiled screen."""
    differences = F[pairs[:, 0]] - F[pairs[:, 1]]
    return np.einsum("ij,ij->i", differences, differences)


@pytest.mark.parametrize("rank", [1, 7, 8, 19, 64])
def test_pair_squared_distances_equal_numpy_reference(rank):
    """Below, at and past the kernel's eight partial sums, and several rounds of them."""
    rng = np.random.RandomState(0)
    F = rng.randn(30, rank)
    pairs = rng.randint(0, 30, size=(200, 2)).astype(np.intp)
    assert_allclose(pair_squared_distances(F, pairs),
                    reference_pair_squared_distances(F, pairs), rtol=1e-13)
    assert pair_squared_distances(F, pairs[:0]).shape == (0,)
    with pytest.raises(ValueError, match="rows of F"):
        pair_squared_distances(F, np.array([[0, 30]], dtype=np.intp))


def test_paired_rows_give_the_same_distances_from_fewer_rows():
    rng = np.random.RandomState(1)
    F = rng.randn(50, 4)
    pairs = rng.choice([3, 7, 8, 20, 41], size=(12, 2)).astype(np.intp)
    rows, local = paired_rows(F, pairs)
    assert rows.shape == (len(np.unique(pairs)), 4)
    assert_array_equal(pair_squared_distances(rows, local), pair_squared_distances(F, pairs))


def test_kernels_reject_orders_outside_the_constraints():
    F = np.eye(2)
    pairs = np.array([[0, 1]], dtype=np.intp)
    one = np.ones(1)
    outside = np.array([1], dtype=np.intp)
    with pytest.raises(ValueError, match="order"):
        logdet_sweep(F, pairs, one, one.copy(), np.zeros(1), np.eye(2, order="F"), 1.0, 0.0,
                     outside)
    with pytest.raises(ValueError, match="order"):
        von_neumann_sweep(F, pairs, one, one.copy(), np.zeros(1), np.zeros(1), np.zeros(2),
                          np.eye(2, order="F"), outside)


def run_driver(screens, dual, on_sweep=lambda order: None):
    """The driver on scripted screens; returns its cycle count and the orders swept."""
    screens, orders = iter(screens), []

    def sweep(order):
        orders.append(sorted(order.tolist()))
        on_sweep(order)
        return 0

    n_iter = cyclic_projections(sweep, dual, (), tol=1e-3, max_iter=10, verbose=0,
                                name="test", random_state=np.random.RandomState(0),
                                screen=lambda: next(screens))
    return n_iter, orders


def test_a_violated_skipped_constraint_blocks_convergence_and_is_swept_next():
    satisfied = np.full(3, -1.0)
    violated_first = np.array([0.5, -1.0, -1.0])
    n_iter, orders = run_driver([satisfied, violated_first, satisfied], np.zeros(3))
    # Cycle 1 sweeps nothing (dual change 0) but the screen after it finds pair 0
    # violated, so only cycle 2, which swept it, may stop.
    assert (n_iter, orders) == (2, [[], [0]])


def test_satisfied_constraints_with_a_dual_are_swept_and_margin_ones_too():
    dual = np.array([0.0, 2.0, 0.0, 0.0])
    screen = np.array([-1.0, -1.0, -0.1 * SCREEN_MARGIN, -1.0])

    def release(order):
        dual[1] = 0.0

    n_iter, orders = run_driver([screen, screen, screen], dual, release)
    assert orders == [[1, 2], [2]] and n_iter == 2


def random_problem(seed, n_samples=60, n_features=5, n_pairs=150):
    """Pairs labelled by a hidden metric, bounds between; a duplicated row gives
    zero-length pairs (skipped by the kernels)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n_samples, n_features)
    X[1] = X[2] = X[0]
    hidden = rng.randn(n_features, n_features)
    pairs = np.array([rng.choice(np.arange(3, n_samples), 2, replace=False)
                      for _ in range(n_pairs)])
    pairs[:2] = [[0, 1], [0, 2]]
    distances = np.sum(((X[pairs[:, 0]] - X[pairs[:, 1]]) @ hidden.T) ** 2, axis=1)
    labels = np.where(distances <= np.median(distances), 1, -1)
    labels[1] = -1
    return X, PairConstraints(pairs, labels)


def logdet_state_after(X, constraints, cycles, gamma=1.0):
    direction = constraints.labels.astype(float)
    target = np.where(direction > 0, 2.0, 12.0)
    dual, B = np.zeros(len(target)), np.eye(X.shape[1], order="F")
    rng = np.random.RandomState(0)
    for _ in range(cycles):
        logdet_sweep(X, constraints.pairs, direction, target, dual, B, gamma / (gamma + 1),
                     1 / gamma, rng.permutation(len(target)).astype(np.intp))
    return direction, target, dual, B


@pytest.mark.parametrize("learner", ["LogDet", "VonNeumann"])
@pytest.mark.parametrize("cycles", [0, 1, 3])
def test_screened_out_constraints_are_exact_no_ops_of_the_kernels(learner, cycles):
    X, constraints = random_problem(seed=cycles)
    pairs = constraints.pairs
    if learner == "LogDet":
        direction, target, dual, B = logdet_state_after(X, constraints, cycles)
        violation = screen_violations(X @ B, pairs, direction, target)

        def project(c):
            logdet_sweep(X, pairs, direction, target, dual, B, 0.5, 1.0,
                         np.array([c], dtype=np.intp))
        state = (target, dual, B)
    else:
        direction = constraints.labels.astype(float)
        target = np.where(direction > 0, 2.0, 12.0)
        slack, dual = target / 1.0, np.zeros(len(target))
        Q, W = np.zeros(X.shape[1]), np.eye(X.shape[1], order="F")
        rng = np.random.RandomState(0)
        for _ in range(cycles):
            von_neumann_sweep(X, pairs, direction, target, slack, dual, Q, W,
                              rng.permutation(len(target)).astype(np.intp))
        violation = screen_violations((X @ W) * np.exp(Q / 2), pairs, direction, target)

        def project(c):
            von_neumann_sweep(X, pairs, direction, target, slack, dual, Q, W,
                              np.array([c], dtype=np.intp))
        state = (target, dual, Q, W)
    screened_out = np.flatnonzero((dual == 0) & (violation <= -SCREEN_MARGIN))
    assert len(screened_out) > 10
    # The zero-length similar pair is screened out, the dissimilar one kept (and skipped).
    assert 0 in screened_out and 1 not in screened_out
    for c in screened_out:
        before = [array.copy() for array in state]
        project(c)
        for array, saved in zip(state, before):
            assert_array_equal(array, saved)


def screened_and_full(module, estimator, X, constraints, monkeypatch):
    """Fit ``estimator`` with screening, then with full sweeps; count the constraints swept."""
    real = module.cyclic_projections
    swept = {"screened": 0, "full": 0}

    def counting(sweep, *args, screen=None, **kwargs):
        def counted(order):
            swept["screened" if screen is not None else "full"] += len(order)
            return sweep(order)
        return real(counted, *args, screen=screen, **kwargs)

    def full(*args, screen=None, **kwargs):
        return counting(*args, **kwargs)

    monkeypatch.setattr(module, "cyclic_projections", counting)
    screened = clone(estimator).fit(X, constraints=constraints)
    monkeypatch.setattr(module, "cyclic_projections", full)
    return screened, clone(estimator).fit(X, constraints=constraints), swept


def logdet_objective(A, xi, xi0, gamma):
    """``D_ld(A, I) + γ D_ld(ξ, ξ₀)`` (Kulis, Sustik & Dhillon (2009), §6.2.1)."""
    ratio = xi / xi0
    return (np.trace(A) - np.linalg.slogdet(A)[1] - len(A)
            + gamma * np.sum(ratio - np.log(ratio) - 1))


@pytest.mark.parametrize("tol", [1e-4, 1e-10])
@pytest.mark.parametrize("module, learner, problem", [
    (logdet_module, LogDet, dict(seed=5, n_samples=120, n_features=6, n_pairs=1500)),
    (von_neumann_module, VonNeumann, dict(seed=6, n_samples=80, n_features=4, n_pairs=400)),
])
def test_screened_fit_reaches_the_unscreened_optimum(monkeypatch, module, learner, problem, tol):
    X, constraints = random_problem(**problem)
    estimator = learner(gamma=1.0, bounds=(2.0, 12.0), tol=tol, max_iter=100_000,
                        random_state=0)
    screened, full, swept = screened_and_full(module, estimator, X, constraints, monkeypatch)
    assert swept["screened"] < 0.8 * swept["full"]  # a third of the pairs end inactive
    # Both stop within tol of the same optimum: the matrices agree to ~tol.
    M, M_full = screened.get_mahalanobis_matrix(), full.get_mahalanobis_matrix()
    assert linalg.norm(M - M_full) <= 10 * tol * linalg.norm(M_full)
    if learner is LogDet:
        xi0 = np.where(constraints.labels == 1, 2.0, 12.0)
        objectives = [
            logdet_objective(model.get_mahalanobis_matrix(),
                             1 / (1 / xi0 - constraints.labels * model.dual_coef_), xi0, 1.0)
            for model in (screened, full)
        ]
        assert objectives[0] == pytest.approx(objectives[1], rel=10 * tol)


def test_screened_exact_definite_boost_reaches_the_unscreened_optimum(monkeypatch):
    rng = np.random.RandomState(7)
    X = rng.randn(60, 4)
    pairs = np.array([rng.choice(60, 2, replace=False) for _ in range(300)])
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    root = rng.randn(4, 4)
    hidden = root @ root.T / np.trace(root @ root.T)
    distances = np.einsum("ij,jk,ik->i", Z, hidden, Z)
    labels = np.where(distances <= np.median(distances), 1, -1)
    # Bounds a hidden trace-one metric meets: the problem is feasible.
    constraints = PairConstraints(pairs, labels, bounds=distances * (1 + 0.05 * labels))
    estimator = DefiniteBoost(projection="exact", gamma=np.inf, tol=1e-10, max_iter=100_000,
                              random_state=0)
    screened, full, swept = screened_and_full(definite_boost_module, estimator, X, constraints,
                                              monkeypatch)
    assert swept["screened"] < swept["full"]
    W, W_full = screened.get_mahalanobis_matrix(), full.get_mahalanobis_matrix()
    assert linalg.norm(W - W_full) <= 1e-8 * linalg.norm(W_full)
