"""Divergences: closed forms, invariances and the low-rank (range-space) definition."""

import numpy as np
import pytest
from scipy import linalg

from psdmetric import logdet_divergence, von_neumann_divergence


def random_spd(n, seed):
    A = np.random.RandomState(seed).randn(n, n)
    return A @ A.T + n * np.eye(n)


def test_logdet_matches_its_formula_and_is_congruence_invariant():
    X, Y = random_spd(4, 0), random_spd(4, 1)
    ratio = X @ linalg.inv(Y)
    expected = np.trace(ratio) - np.log(linalg.det(ratio)) - 4
    assert logdet_divergence(X, Y) == pytest.approx(expected, rel=1e-10)
    M = np.random.RandomState(2).randn(4, 4)
    assert logdet_divergence(M.T @ X @ M, M.T @ Y @ M) == pytest.approx(expected, rel=1e-8)
    assert logdet_divergence(3 * X, 3 * Y) == pytest.approx(expected, rel=1e-10)
    assert logdet_divergence(X, X) == pytest.approx(0, abs=1e-12)


def test_von_neumann_matches_matrix_functions():
    X, Y = random_spd(4, 3), random_spd(4, 4)
    expected = np.trace(X @ linalg.logm(X) - X @ linalg.logm(Y) - X + Y).real
    assert von_neumann_divergence(X, Y) == pytest.approx(expected, rel=1e-9)
    assert von_neumann_divergence(Y, Y) == pytest.approx(0, abs=1e-10)
    assert von_neumann_divergence(X, Y) > 0


def test_low_rank_definitions_follow_the_range_of_the_second_argument():
    basis = linalg.qr(np.random.RandomState(5).randn(5, 5))[0][:, :2]
    Y = basis @ np.diag([2.0, 1.0]) @ basis.T
    X = basis @ np.diag([1.0, 3.0]) @ basis.T
    reduced_ld = logdet_divergence(basis.T @ X @ basis, basis.T @ Y @ basis)
    assert logdet_divergence(X, Y) == pytest.approx(reduced_ld, rel=1e-10)
    reduced_vn = von_neumann_divergence(basis.T @ X @ basis, basis.T @ Y @ basis)
    assert von_neumann_divergence(X, Y) == pytest.approx(reduced_vn, rel=1e-10)
    outside = X + np.outer(np.ones(5), np.ones(5))
    assert logdet_divergence(outside, Y) == np.inf
    assert von_neumann_divergence(outside, Y) == np.inf
    # LogDet needs equal ranges; von Neumann only range(X) ⊆ range(Y).
    smaller = 2.0 * np.outer(basis[:, 0], basis[:, 0])
    assert logdet_divergence(smaller, Y) == np.inf
    assert np.isfinite(von_neumann_divergence(smaller, Y))
