"""RCA's n_components="auto": above 100 features, RCA on the leading principal axes of X
(at most ``AUTO_AXES``, and no more than the ``p − c`` the chunklets can estimate);
at most 100 features, exactly RCA on every feature."""

import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import RCA
from psdmetric._closed_form._rca import AUTO_AXES
from psdmetric._core import one_blas_thread, principal_axes


def wide(n_samples, n_features=150, n_classes=4, seed=0):
    """Classes apart along a few directions, in many features of correlated noise."""
    rng = np.random.RandomState(seed)
    y = np.arange(n_samples) % n_classes
    mixing = rng.randn(n_features, n_features) / np.sqrt(n_features)
    X = rng.randn(n_samples, n_features) @ mixing + 3.0 * rng.randn(n_classes, n_features)[y]
    return X, y


def on_axes(X, chunks, dimension):
    """RCA on every feature of X projected on its ``dimension`` leading axes, mapped back.

    On one BLAS thread, as RCA's fit: a threaded eigensolver rounds differently (5e-15 in
    the axes, 2e-11 relative in the map on 24 rows, with an AMD EPYC's OpenBLAS).
    """
    with one_blas_thread():
        axes = principal_axes(X, dimension)
        projected = X @ axes
    return RCA(n_components=None).fit(projected, chunks=chunks).components_ @ axes.T


@pytest.mark.parametrize("n_samples, dimension", [(300, AUTO_AXES), (24, 12)])
def test_auto_is_rca_on_the_leading_axes(n_samples, dimension):
    """300 rows in 150 chunklets: the cap; 24 rows in 12 pairs: p − c = 12 axes."""
    X, y = wide(n_samples)
    chunks = np.arange(n_samples) // 2
    model = RCA().fit(X, chunks=chunks)
    assert model.components_.shape == (dimension, X.shape[1])
    np.testing.assert_allclose(model.components_, on_axes(X, chunks, dimension),
                               rtol=1e-12, atol=1e-12 * np.abs(model.components_).max())
    # Nothing across the axes: the metric is zero on their orthogonal complement.
    axes = principal_axes(X, dimension)
    across = np.linalg.qr(np.c_[axes, np.random.RandomState(1).randn(X.shape[1], 3)])[0][
        :, dimension:]
    M = model.get_mahalanobis_matrix()
    assert np.abs(across.T @ M @ across).max() < 1e-10 * np.abs(M).max()
    # Inside them, M inverts the within-chunklet covariance of the projected rows.
    Z = X @ axes
    centred = Z - (Z[0::2] + Z[1::2]).repeat(2, axis=0) / 2
    within = centred.T @ centred / n_samples
    np.testing.assert_allclose(axes.T @ M @ axes @ within, np.eye(dimension), atol=1e-8)


def test_auto_draws_the_chunklets_from_labels_first():
    X, y = wide(300)
    model = RCA(random_state=0).fit(X, y)
    chunks = model.chunklets_
    np.testing.assert_allclose(model.components_, on_axes(X, chunks, AUTO_AXES),
                               rtol=1e-12, atol=1e-12 * np.abs(model.components_).max())


@pytest.mark.parametrize("n_features", [13, 100])
def test_auto_is_every_feature_up_to_100_features(n_features):
    if n_features == 13:
        X, y = load_wine(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    else:
        X, y = wide(400, n_features)
    auto, every = RCA(random_state=0).fit(X, y), RCA(None, random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.components_, every.components_)
    assert auto.components_.shape == (n_features, n_features)


def test_a_chosen_dimension_the_chunklets_cannot_estimate_is_an_error():
    X, _ = wide(24)
    chunks = np.arange(24) // 2
    with pytest.raises(ValueError, match=r"rank 12 \(from 24 samples in 12 chunklet.*"
                                         r"below the 23 dimensions .* n_components <= 12"):
        RCA(n_components=None).fit(X, chunks=chunks)
    # 23 directions of variance, 12 within chunklets: 11 flat ones come first.
    for rows, flat in ((2, "2 or more"), (13, "11")):
        with pytest.raises(ValueError, match=r"\(from 24 samples in 12 chunklet\(s\)\) is "
                                             rf"zero along {flat} direction"):
            RCA(n_components=rows).fit(X, chunks=chunks)
    # Two chunklets of two rows: "auto" learns on the p − c = 2 axes they estimate.
    chunks = np.r_[0, 0, 1, 1, np.full(20, -1)]
    np.testing.assert_allclose(RCA().fit(X, chunks=chunks).components_,
                               on_axes(X, chunks, 2), rtol=1e-12)
