"""The diagonal-plus-rank-one eigen update: compiled kernel vs NumPy reference vs LAPACK."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from psdmetric._core import rank_one_eigen_update

EPS = np.finfo(float).eps


def reference_eigen_update(q, w, rho):
    """Plain NumPy eigendecomposition of ``diag(q) + rho w wᵀ``, the kernel's algorithm.

    Deflation of negligible components and of equal poles (Givens rotations), roots of
    the secular equation by bisection relative to the nearer pole, eigenvectors from
    Löwner's recomputed weights (Gu–Eisenstat). Returns ascending eigenvalues and U.
    """
    n = len(q)
    order = np.argsort(q, kind="stable")
    q, w = np.asarray(q, float)[order], np.asarray(w, float)[order]
    basis = np.eye(n)
    norm = np.linalg.norm(w)
    if norm == 0 or rho == 0:
        return q, basis[np.argsort(order)]
    z, t = w / norm, rho * norm**2
    sign = 1.0 if t > 0 else -1.0
    if sign < 0:  # solve −(−diag(q) + |t| z zᵀ) with the poles reflected
        q, z, basis = -q[::-1], z[::-1], basis[:, ::-1]
    t = abs(t)
    d, z = q.copy(), z.copy()
    tol_z = 8 * EPS * max(np.abs(d).max(), t)
    tol_d = 8 * EPS * np.abs(d).max()
    keep, previous = [], None
    for j in range(n):
        if t * abs(z[j]) <= tol_z:
            continue
        if previous is not None:
            radius = np.hypot(z[j], z[previous])
            c, s = z[j] / radius, -z[previous] / radius
            if abs((d[j] - d[previous]) * c * s) <= tol_d:
                rotation = np.array([[c, -s], [s, c]])
                basis[:, [previous, j]] = basis[:, [previous, j]] @ rotation
                block = rotation.T @ np.diag(d[[previous, j]]) @ rotation
                d[previous], d[j] = block[0, 0], block[1, 1]
                z[previous], z[j] = 0.0, radius
                previous = j
                continue
            keep.append(previous)
        previous = j
    if previous is not None:
        keep.append(previous)
    keep = np.array(keep, dtype=int)
    p, y2 = d[keep], z[keep] ** 2
    k = len(keep)

    def secular(origin, tau):  # 1/ρ + Σ y²/(p − λ) with p − λ = (p − p_origin) − τ
        return 1 / t + (y2[:, None] / ((p[:, None] - p[origin][None, :]) - tau)).sum(0)

    # Bisection per root, relative to the nearer pole of its interval.
    upper_end = np.append(np.diff(p), t * y2.sum())
    mid = upper_end / 2
    at_mid = secular(np.arange(k), mid)
    left_half = (at_mid >= 0) | (np.arange(k) == k - 1)
    origin = np.where(left_half, np.arange(k), np.arange(k) + 1)
    lo = np.where(left_half, 0.0, -mid)
    hi = np.where(left_half, np.where(np.arange(k) == k - 1, upper_end, mid), 0.0)
    for _ in range(250):
        tau = (lo + hi) / 2
        negative = secular(origin, tau) < 0
        lo, hi = np.where(negative, tau, lo), np.where(negative, hi, tau)
    tau = (lo + hi) / 2
    delta = (p[:, None] - p[origin][None, :]) - tau  # p_j − λ_i, exact
    loewner = np.array([-delta[j, j] * np.prod(delta[j, np.arange(k) != j]
                                               / (p[j] - p[np.arange(k) != j]))
                        for j in range(k)])
    w_hat = np.sign(z[keep]) * np.sqrt(np.abs(loewner))
    vectors = w_hat[:, None] / delta
    vectors /= np.linalg.norm(vectors, axis=0)
    values = np.append(p[origin] + tau, np.delete(d, keep))
    columns = np.hstack([basis[:, keep] @ vectors, np.delete(basis, keep, axis=1)])
    values = sign * values
    ascending = np.argsort(values, kind="stable")
    U = np.empty((n, n))
    U[order] = columns[:, ascending]
    return values[ascending], U


def assert_eigensystem_of(M, theta, U, tol=1e-10):
    """theta, U diagonalise M like LAPACK: eigenvalues, and each cluster's projector."""
    scale = max(np.abs(M).max(), np.finfo(float).tiny)
    expected, V = np.linalg.eigh(M)
    assert_allclose(theta, expected, rtol=0, atol=tol * scale)
    assert_allclose(U.T @ U, np.eye(len(M)), rtol=0, atol=tol)
    # Eigenvectors are unique up to sign for a simple eigenvalue and up to a rotation
    # within a cluster: compare the spectral projectors cluster by cluster. A gap of
    # 1e-4 ‖M‖ determines a projector to ~eps / 1e-4 (Davis–Kahan), well inside tol.
    breaks = np.flatnonzero(np.diff(expected) > 1e-4 * scale) + 1
    for cluster in np.split(np.arange(len(M)), breaks):
        assert_allclose(U[:, cluster] @ U[:, cluster].T, V[:, cluster] @ V[:, cluster].T,
                        rtol=0, atol=tol)


def random_case(rng, n):
    return rng.randn(n) * rng.choice([1e-3, 1.0, 1e3]), rng.randn(n)


@pytest.mark.parametrize("seed", range(20))
def test_random_updates_match_eigh_and_reference(seed):
    rng = np.random.RandomState(seed)
    n = rng.randint(1, 60)
    q, w = random_case(rng, n)
    rho = rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-6, 4)
    M = np.diag(q) + rho * np.outer(w, w)
    theta, U = rank_one_eigen_update(q, w, rho)
    assert_eigensystem_of(M, theta, U)
    expected_theta, expected_U = reference_eigen_update(q, w, rho)
    scale = np.abs(M).max()
    assert_allclose(theta, expected_theta, rtol=0, atol=1e-12 * scale)
    assert_eigensystem_of(M, expected_theta, expected_U)


def _hard_cases():
    rng = np.random.RandomState(100)
    q, w = rng.randn(30), rng.randn(30)
    repeated = np.repeat(rng.randn(6), 5)
    clustered = np.sort(np.concatenate([1 + 1e-12 * rng.randn(10), rng.randn(20)]))
    tiny_w = w.copy()
    tiny_w[::3] = 0.0
    tiny_w[1::3] *= 1e-16
    cases = {
        "repeated q": (repeated, w),
        "clustered q": (clustered, w),
        "all q equal": (np.full(30, 0.7), w),
        "zero and tiny w": (q, tiny_w),
        "single nonzero w": (q, np.eye(30)[7]),
        "w of 1e-150": (q, 1e-150 * w),
        "q spread 1e±8": (np.sort(rng.randn(30) * 10.0 ** rng.uniform(-8, 8, 30)), w),
        "log-eigenvalues near -700": (np.sort(-700 + rng.randn(30)), w),
        "r = 1": (np.array([0.3]), np.array([2.0])),
        "r = 2 equal q": (np.array([0.3, 0.3]), np.array([1.0, -2.0])),
        "r = 150": (np.sort(rng.randn(150)), rng.randn(150)),
    }
    for name, (q_case, w_case) in cases.items():
        for rho in (1e-12, -1e-12, 0.5, -0.5, 1e8, -1e8):
            yield pytest.param(q_case, w_case, rho, id=f"{name}, rho={rho:g}")


@pytest.mark.parametrize("q, w, rho", list(_hard_cases()))
def test_hard_cases_match_eigh(q, w, rho):
    M = np.diag(q) + rho * np.outer(w, w)
    theta, U = rank_one_eigen_update(q, w, rho)
    assert np.all(np.isfinite(theta)) and np.all(np.isfinite(U))
    assert_eigensystem_of(M, theta, U)


def test_unsorted_q_and_zero_rho_are_handled():
    q = np.array([3.0, -1.0, 2.0, 2.0, 0.5])
    w = np.array([1.0, 2.0, -1.0, 0.5, 0.0])
    assert_eigensystem_of(np.diag(q) + 2.0 * np.outer(w, w), *rank_one_eigen_update(q, w, 2.0))
    theta, U = rank_one_eigen_update(q, w, 0.0)
    assert_allclose(theta, np.sort(q))
    assert_allclose(np.abs(U), np.eye(5)[:, np.argsort(q, kind="stable")])


def test_length_mismatch_is_rejected():
    with pytest.raises(ValueError, match="same length"):
        rank_one_eigen_update(np.zeros(3), np.zeros(2), 1.0)
