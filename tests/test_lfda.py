"""LFDA's local scatters (one product of weight rows built class by class) and its two
eigen-drivers (bisection for a few components, divide and conquer for more) against the
dense n × n oracle of Sugiyama (2007)."""

import numpy as np
import pytest
from scipy import linalg

from psdmetric import LFDA
from psdmetric._closed_form import _lfda
from psdmetric._core._principal import span_coordinates
from test_closed_form import lfda_scatters_oracle, relative_difference


def unequal_classes(seed=0):
    """Three classes of 5, 15 and 40 samples in 8 features, the largest in two clusters."""
    rng = np.random.RandomState(seed)
    y = np.repeat([0, 1, 2], [5, 15, 40])
    centres = 2.0 * rng.randn(4, 8)
    X = centres[np.where((y == 2) & (np.arange(60) % 2 == 0), 3, y)] + rng.randn(60, 8)
    return X, y


@pytest.mark.parametrize("block_entries", [1 << 22, 100])
def test_local_scatters_equal_the_dense_oracle(monkeypatch, block_entries):
    """One block per class, and blocks of two rows (the class of 40 in 20 blocks)."""
    X, y = unequal_classes()
    monkeypatch.setattr(_lfda, "_BLOCK_ENTRIES", block_entries)
    between, within = _lfda.local_scatters(X, y, 7)
    S_b, S_w = lfda_scatters_oracle(X, y, 7)
    assert relative_difference(within, S_w) < 1e-12
    assert relative_difference(between, S_b) < 1e-12


def test_every_component_equals_the_dense_oracle():
    X, y = unequal_classes(1)
    S_b, S_w = lfda_scatters_oracle(X, y, 7)
    values, vectors = linalg.eigh(S_b, S_w)
    model = LFDA(k=7).fit(X, y)
    np.testing.assert_allclose(model.eigenvalues_, values[::-1], rtol=1e-10)
    oracle = (vectors * values) @ vectors.T
    assert relative_difference(model.get_mahalanobis_matrix(), oracle) < 1e-10


@pytest.mark.parametrize("embedding_type", ["weighted", "plain"])
@pytest.mark.parametrize("rows", [1, 3])
def test_fewer_components_are_the_leading_rows_of_all(embedding_type, rows):
    """1 of 8 by bisection, 3 of 8 by divide and conquer: the first rows of all 8."""
    X, y = unequal_classes(2)
    every = LFDA(embedding_type=embedding_type).fit(X, y)
    few = LFDA(n_components=rows, embedding_type=embedding_type).fit(X, y)
    np.testing.assert_allclose(few.eigenvalues_, every.eigenvalues_[:rows], rtol=1e-10)
    np.testing.assert_allclose(few.components_, every.components_[:rows], rtol=1e-8,
                               atol=1e-10 * np.abs(every.components_[:rows]).max())


def test_constant_features_get_no_weight_and_change_nothing():
    """Constant columns are set aside before the span is sought: the fit on the others
    is the fit without them, and n_components counts the dimensions that vary."""
    X, y = unequal_classes(3)
    wider = np.insert(X, [0, 5], [3.0, -1.0], axis=1)
    varying = np.r_[1:6, 7:10]
    model, plain = LFDA().fit(wider, y), LFDA().fit(X, y)
    assert not model.components_[:, [0, 6]].any()
    np.testing.assert_array_equal(model.components_[:, varying], plain.components_)
    np.testing.assert_array_equal(model.eigenvalues_, plain.eigenvalues_)
    with pytest.raises(ValueError, match=r"n_components=9 exceeds the 8 dimensions the rows "
                                         r"of X span \(of 10 features"):
        LFDA(n_components=9).fit(wider, y)


def test_auto_is_lfda_on_the_leading_axes_above_100_features():
    rng = np.random.RandomState(0)
    y = np.repeat([0, 1, 2], 60)
    X = rng.randn(180, 130) + 3.0 * rng.randn(3, 130)[y]
    axes = linalg.eigh(np.cov(X, rowvar=False), subset_by_index=(130 - _lfda.AUTO_AXES,
                                                                 129))[1]
    auto = LFDA().fit(X, y)
    on_axes = LFDA(n_components=None).fit(X @ axes, y)
    assert auto.components_.shape == (_lfda.AUTO_AXES, 130)
    # The same metric: L on the axes, mapped back (the axes' order and signs cancel).
    np.testing.assert_allclose(auto.get_mahalanobis_matrix(),
                               axes @ on_axes.get_mahalanobis_matrix() @ axes.T,
                               rtol=0, atol=1e-9 * np.abs(auto.get_mahalanobis_matrix()).max())
    # Nothing is learned across the axes.
    across = linalg.null_space(axes.T)
    assert np.abs(auto.components_ @ across).max() < 1e-10


def test_auto_is_every_feature_up_to_100_features():
    X, y = unequal_classes()
    np.testing.assert_array_equal(LFDA().fit(X, y).components_,
                                  LFDA(n_components=None).fit(X, y).components_)


@pytest.mark.parametrize("ratio", [1e-3, 1e-7, 1e-9, 1e-11, 1e-13, 0.0])
def test_cheap_rank_check_clears_only_scatters_of_full_rank(ratio):
    """The Cholesky condition estimate clears a scatter only if its spectrum would, and
    clears every well-conditioned one (which then skips the spectrum), giving its
    lower Cholesky factor."""
    rng = np.random.RandomState(0)
    vectors = linalg.qr(rng.randn(30, 30))[0]
    values = np.r_[np.geomspace(1.0, max(ratio, 1e-3), 29), ratio]
    scatter = (vectors * values) @ vectors.T
    factor = _lfda._factor_if_clearly_full_rank(scatter)
    assert factor is None or _lfda._numerical_rank(scatter) == 30
    assert (factor is not None) == (ratio >= 1e-7)
    if factor is not None:
        np.testing.assert_allclose(factor @ factor.T, scatter, rtol=0, atol=1e-14)
        assert not np.triu(factor, 1).any()


def test_generalised_eigenpairs_from_the_factor_equal_scipys_eigh():
    rng = np.random.RandomState(0)
    A, B = rng.randn(40, 40), rng.randn(40, 40)
    between, within = A @ A.T, B @ B.T + np.eye(40)
    # sygvd of −S_b: the same LAPACK steps, whose increasing order is λ's decreasing one.
    expected_values, expected_vectors = linalg.eigh(-between, within, driver="gvd")
    expected_values = -expected_values
    # It overwrites between.
    values, vectors = _lfda._generalised_eigenpairs(between, linalg.cholesky(within,
                                                                             lower=True))
    assert np.all(np.diff(values) <= 0)
    np.testing.assert_allclose(values, expected_values, rtol=1e-12)
    # Eigenvectors up to sign: vᵀ S_w v = 1 fixes their scale.
    signs = np.sign(np.sum(vectors * expected_vectors, axis=0))
    np.testing.assert_allclose(vectors * signs, expected_vectors, rtol=1e-9, atol=1e-12)


def test_a_direction_of_small_scale_is_not_a_singular_scatter():
    """X' = X A with A's last column x₁ + x₂ + 10⁻⁵ x₅ (a feature almost the sum of two
    others) turns the scatters into Aᵀ S A and the eigenvectors into A⁻¹ v: the same
    eigenvalues, the same map. S_w' is 10⁻¹¹ of its largest along that direction, but
    not relative to the mixture S_b' + S_w', so it is not refused (it used to be)."""
    rng = np.random.RandomState(0)
    B, W = rng.randn(5, 5), rng.randn(5, 5)
    between, within = B @ B.T, W @ W.T + np.eye(5)
    A = np.eye(5)
    A[0, 4] = A[1, 4] = 1.0
    A[4, 4] = 1e-5
    components, values = _lfda.lfda_components(between.copy(), within.copy(), 5, "weighted")
    sheared, sheared_values = _lfda.lfda_components(A.T @ between @ A, A.T @ within @ A, 5,
                                                    "weighted")
    # The generalised eigensolver loses S_w's condition number times the rounding error.
    rtol = 10 * np.finfo(float).eps * np.linalg.cond(A.T @ within @ A)
    np.testing.assert_allclose(sheared_values, values, rtol=rtol)
    mapped = sheared @ A.T
    signs = np.sign(np.sum(mapped * components, axis=1, keepdims=True))
    np.testing.assert_allclose(mapped * signs, components, rtol=0,
                               atol=rtol * np.abs(components).max())


def test_singular_local_within_scatter_is_refused_with_its_rank():
    """Six classes of 3 samples span 15 dimensions; their within-class scatter, 12."""
    rng = np.random.RandomState(0)
    y = np.repeat(np.arange(6), 3)
    X = rng.randn(18, 15) + 5.0 * rng.randn(6, 15)[y]
    with pytest.raises(ValueError, match="local within-class scatter has rank 12, below "
                                         "the 15 dimensions the rows of X span"):
        LFDA().fit(X, y)


def test_dependent_features_give_the_fit_on_orthonormal_axes_of_the_span():
    """Two features that are combinations of the others: LFDA learns on 8 of the 10
    features (the other two written in them), its affinities from X's own distances, and
    finds the metric it finds on orthonormal axes of the span."""
    X, y = unequal_classes(2)
    wider = np.c_[X, X @ np.random.RandomState(1).randn(8, 2) / 3.0]
    assert span_coordinates(wider, orthonormal=False).axes is None  # the features serve
    axes = linalg.orth((wider - wider.mean(axis=0)).T)
    on_axes = LFDA(k=7).fit(wider @ axes, y)
    model = LFDA(k=7).fit(wider, y)
    np.testing.assert_allclose(model.eigenvalues_, on_axes.eigenvalues_, rtol=1e-9)
    expected = axes @ on_axes.get_mahalanobis_matrix() @ axes.T
    assert relative_difference(model.get_mahalanobis_matrix(), expected) < 1e-9
