"""MLKR (Weinberger & Tesauro, 2007): the loss against a dense oracle, its gradient against
finite differences, the row blocks, the driver's promises, and what it learns."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import KNeighborsRegressor

from psdmetric import MLKR
from psdmetric._core import principal_axes
from psdmetric._regression import _objective
from psdmetric._regression._objective import mlkr_loss


def dense_loss(L, X, y):
    """Σ_i (ŷ_i − y_i)², ŷ_i = Σ_(j≠i) p_ij y_j, p_ij ∝ exp(−‖L(x_i − x_j)‖²) (eq. 3)."""
    Z = X @ L.T
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    K = np.exp(-D)
    np.fill_diagonal(K, 0.0)
    predictions = K @ y / K.sum(axis=1)
    return ((predictions - y) ** 2).sum()


def problem(seed=0, n=40, d=5, rows=3):
    rng = np.random.RandomState(seed)
    return rng.randn(rows, d) * 0.5, rng.randn(n, d), rng.randn(n)


def test_loss_equals_the_dense_formula():
    L, X, y = problem()
    assert mlkr_loss(L, X, y)[0] == pytest.approx(dense_loss(L, X, y), rel=1e-12)


def test_gradient_equals_finite_differences():
    L, X, y = problem(1)
    gradient = mlkr_loss(L, X, y)[1]
    numeric = np.zeros_like(L)
    step = 1e-6
    for index in np.ndindex(L.shape):
        E = np.zeros_like(L)
        E[index] = step
        numeric[index] = (dense_loss(L + E, X, y) - dense_loss(L - E, X, y)) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("block_rows, chunk_rows", [(57, 5), (10, 3)])
def test_row_blocks_and_chunks_give_the_same_loss_and_gradient(
        monkeypatch, block_rows, chunk_rows):
    """57 rows: W whole (its symmetry used), in chunks of 5; 10: blocks of 10 rows, in
    chunks of 3 (neither divides 57)."""
    L, X, y = problem(2, n=57)
    whole = mlkr_loss(L, X, y)
    monkeypatch.setattr(_objective, "_BLOCK_ENTRIES", 57 * block_rows)
    monkeypatch.setattr(_objective, "_CHUNK_ENTRIES", 57 * chunk_rows)
    blocked = mlkr_loss(L, X, y)
    assert blocked[0] == pytest.approx(whole[0], rel=1e-13)
    assert blocked[0] == pytest.approx(dense_loss(L, X, y), rel=1e-12)
    np.testing.assert_allclose(blocked[1], whole[1], rtol=1e-12, atol=1e-14)


def numpy_weights(Z, norms, y, rows):
    """The NumPy version of ``_mlkr_kernels``: ``W`` for the rows ``rows`` and their loss;
    exponents raised to ``_FLOOR``, weights under ``_SMALLEST`` and entries of W under
    ``_FLUSH`` zeroed."""
    block = 2.0 * (Z[rows] @ Z.T)
    block -= norms[rows, None]
    block -= norms[None, :]
    np.minimum(block, 0.0, out=block)
    diagonal = np.arange(block.shape[0]), rows.start + np.arange(block.shape[0])
    block[diagonal] = -np.inf
    block -= block.max(axis=1, keepdims=True)
    np.maximum(block, -700.0, out=block)
    block = np.exp(block)
    block[block < 1e-260] = 0.0
    block /= block.sum(axis=1, keepdims=True)
    predicted = block @ y
    errors = predicted - y[rows]
    block *= y[None, :] - predicted[:, None]
    block *= errors[:, None]
    block[np.abs(block) < 1e-250] = 0.0
    return block, errors @ errors


@pytest.mark.parametrize("spread", [0.3, 30.0])
def test_kernels_equal_their_numpy_version(spread):
    """At spread 30 most weights fall under the floor and many W entries under the flush."""
    from psdmetric._regression._mlkr_kernels import kernel_exponents, kernel_weights

    rng = np.random.RandomState(3)
    Z, y = spread * rng.randn(70, 3), np.round(rng.rand(70) * 2)
    norms = np.einsum("ij,ij->i", Z, Z)
    rows = slice(20, 45)
    expected, expected_loss = numpy_weights(Z, norms, y, rows)
    if spread > 1:
        assert (expected == 0).mean() > 0.5
    block, column_sums = Z[rows] @ Z.T, np.ones(70)
    kernel_exponents(block, norms, rows.start)
    np.exp(block, out=block)
    loss = kernel_weights(block, y, rows.start, column_sums)
    np.testing.assert_allclose(block, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(column_sums, 1.0 + expected.sum(axis=0), rtol=1e-12)
    assert loss == pytest.approx(expected_loss, rel=1e-12)


def test_symmetric_kernels_equal_numpy():
    """The Gram product's lower triangle, its rows mirrored above the diagonal, W + Wᵀ
    folded left of the diagonal block, and the accumulating GEMM on strided views."""
    from psdmetric._regression._mlkr_kernels import (add_product, fold_rows, gram_lower,
                                                     mirror_rows)

    rng = np.random.RandomState(5)
    Z, n = rng.randn(150, 4), 150
    block = np.full((n, n), np.nan)
    gram_lower(Z, block)
    lower = np.tril_indices(n)
    # SYRK and GEMM sum in different orders: each entry within the dot product's bound
    # (a multiple of eps times Σ_k |z_ik z_jk|), not relative to an entry near zero.
    bound = 1e-13 * (np.abs(Z) @ np.abs(Z).T)[lower]
    assert np.all(np.abs(block[lower] - (Z @ Z.T)[lower]) <= bound)
    assert np.isnan(block[np.triu_indices(n, 1)]).all()
    mirror_rows(block, 20, 90)  # 70 columns past the chunk's first row: two tiles
    np.testing.assert_array_equal(block[20:90], np.tril(block, -1).T[20:90]
                                  + np.tril(block)[20:90])

    W = rng.randn(n, n)
    folded = W.copy()
    fold_rows(folded, 70, 140)
    S = W + W.T
    np.testing.assert_array_equal(folded[70:140, :140], S[70:140, :140])
    np.testing.assert_array_equal(folded[70:140, 140:], W[70:140, 140:])
    np.testing.assert_array_equal(folded[:70], W[:70])  # their W right of the diagonal
    np.testing.assert_array_equal(folded[140:], W[140:])

    out = rng.randn(70, 6)
    a, b = W[10:80, 5:50], rng.randn(45, 6)
    expected, bound = out + a @ b, 1e-13 * (np.abs(out) + np.abs(a) @ np.abs(b))
    add_product(out, a, b, False)
    assert np.all(np.abs(out - expected) <= bound)
    c = W[10:80, 60:66]
    expected, bound = out[:45] + a.T @ c, 1e-13 * (np.abs(out[:45]) + np.abs(a.T) @ np.abs(c))
    add_product(out[:45], a, c, True)
    assert np.all(np.abs(out[:45] - expected) <= bound)
    with pytest.raises(ValueError, match="shapes"):
        add_product(out, a, b, True)


def irrelevant_features(n=300, noise=8, seed=0):
    """y depends on 2 features; ``noise`` more features of the same scale are irrelevant."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 2 + noise)
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.randn(n)
    return X, y


def test_the_loss_decreases_from_the_start():
    X, y = irrelevant_features(n=150)
    model = MLKR(init="identity", max_iter=5, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    start = mlkr_loss(np.eye(X.shape[1]), X, y)[0]
    assert model.objective_ < 0.5 * start
    assert model.objective_ == pytest.approx(mlkr_loss(model.components_, X, y)[0])


def test_mlkr_improves_knn_regression_over_euclidean():
    X, y = irrelevant_features()
    X_test, y_test = irrelevant_features(seed=1)
    model = MLKR(n_components=4, random_state=0).fit(X, y)

    def mse(Z, Z_test):
        prediction = KNeighborsRegressor(5).fit(Z, y).predict(Z_test)
        return np.mean((prediction - y_test) ** 2)

    euclidean = mse(X, X_test)
    learned = mse(model.transform(X), model.transform(X_test))
    assert learned < 0.5 * euclidean
    # The irrelevant features get little weight.
    weights = np.linalg.norm(model.components_, axis=0)
    assert weights[:2].min() > 3 * weights[2:].max()


def test_separable_classes_stop_once_fitted_to_double_precision():
    """On separated classes the loss falls by a constant ratio per round as L grows (the
    relative rule alone stops it after 27 rounds here); the fit stops at eps · Σ(y − ȳ)²."""
    rng = np.random.RandomState(0)
    y = np.arange(60) % 2
    X = 2.0 * y[:, None] + 0.5 * rng.randn(60, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = MLKR(max_iter=30).fit(X, y)
    exact = np.finfo(float).eps * np.sum((y - y.mean()) ** 2)
    assert model.objective_ <= exact < mlkr_loss(np.eye(2), X, y.astype(float))[0] * 1e-10
    assert model.n_iter_ <= 5  # 27 rounds under the relative rule alone


def test_driver_warns_at_max_iter_and_prints_the_table(capsys):
    X, y = irrelevant_features(n=100)
    with pytest.warns(ConvergenceWarning, match="MLKR did not converge in max_iter=2"):
        model = MLKR(max_iter=2, tol=0.0, verbose=1).fit(X, y)
    assert model.n_iter_ == 2
    out = capsys.readouterr().out
    assert "[MLKR]" in out and "loss" in out and "evaluations" in out


def test_continuous_targets_are_accepted_and_bad_input_named():
    X, y = irrelevant_features(n=50)
    assert MLKR(max_iter=3).fit(X, y * 1e-3 + 0.5).components_.shape == (10, 10)
    with pytest.raises(ValueError, match="NaN"):
        MLKR().fit(X, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match=r"init must be a finite array of shape \(3, 10\)"):
        MLKR(init=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="n_components=11 must be at most n_features=10"):
        MLKR(n_components=11).fit(X, y)
    with pytest.raises(ValueError, match="could not convert|numeric"):
        MLKR().fit(X, np.array(["a", "b"] * 25))


def test_pca_start_with_all_components_is_the_euclidean_metric():
    X, y = irrelevant_features(n=60)
    L = MLKR(max_iter=1)._initial_map(X)
    np.testing.assert_allclose(L.T @ L, np.eye(10), atol=1e-12)


def test_rounds_carry_the_curvature_memory():
    """Three rounds of 20 L-BFGS steps are one uninterrupted run of 60 steps."""
    from psdmetric._core import LBFGS
    from psdmetric._regression._mlkr import _STEPS_PER_ROUND, _Loss

    X, y = irrelevant_features(n=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MLKR(init="identity", max_iter=3, tol=0.0).fit(X, y)
    loss = _Loss(X, y)
    L = LBFGS().run(loss, np.eye(10), loss.value_and_gradient(np.eye(10)),
                    3 * _STEPS_PER_ROUND)[0]
    np.testing.assert_allclose(model.components_, L, rtol=1e-12, atol=1e-14)


def test_a_stationary_start_stalls_without_evaluating():
    """A zero gradient ends the run at once: no step, no NaN trial point, no warning."""
    from psdmetric._core import LBFGS

    class Flat:
        calls = 0

        def value_and_gradient(self, L):
            Flat.calls += 1
            return 1.0, np.zeros_like(L)

    flat, start = Flat(), np.eye(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        L, evaluation, stalled = LBFGS().run(flat, start, flat.value_and_gradient(start), 5)
    assert stalled and Flat.calls == 1
    np.testing.assert_array_equal(L, start)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_auto_learns_on_the_leading_principal_axes():
    # 120 features, above the "auto" cap of 100: the fit on X's 100 leading principal
    # axes, mapped back; an integer n_components keeps every feature.
    rng = np.random.RandomState(0)
    X = rng.randn(80, 120) @ rng.randn(120, 120) / 10
    y = X[:, 0] - X[:, 1] + 0.1 * rng.randn(80)
    auto = MLKR(max_iter=5).fit(X, y)
    axes = principal_axes(X, 100)
    reduced = MLKR(n_components=None, max_iter=5).fit(X @ axes, y)
    assert auto.components_.shape == (100, 120)
    assert np.allclose(auto.components_, reduced.components_ @ axes.T, rtol=1e-9,
                       atol=1e-12 * np.abs(auto.components_).max())
    assert MLKR(n_components=110, max_iter=1).fit(X, y).components_.shape == (110, 120)
