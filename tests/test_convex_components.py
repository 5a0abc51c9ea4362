"""MMC, LSML and SCML with n_components: learned on the leading principal axes of X."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from psdmetric import LSML, MMC, SCML
from psdmetric._core import principal_axes

LEARNERS = [MMC(max_iter=30, random_state=0), LSML(max_iter=30, random_state=0),
            SCML(max_iter=500, random_state=0)]


@pytest.fixture(scope="module")
def wide():
    # 120 features (digits' 64 and 56 of their products), above the "auto" cap of 100.
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    X = np.hstack([X, X[:, 8:64] * X[:, :56] / 16.0])
    return (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1.0), y


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda e: type(e).__name__)
def test_auto_learns_on_the_leading_principal_axes(learner, wide):
    X, y = wide
    auto = clone(learner).set_params(n_components="auto").fit(X, y)
    axes = principal_axes(X, 100)
    reduced = clone(learner).set_params(n_components=None).fit(X @ axes, y)
    # Same metric as a fit on the projected data, mapped back: L = L_axes Pᵀ.
    assert auto.components_.shape[1] == X.shape[1]
    assert np.allclose(auto.get_mahalanobis_matrix(),
                       axes @ reduced.get_mahalanobis_matrix() @ axes.T, rtol=1e-9,
                       atol=1e-12 * np.abs(auto.get_mahalanobis_matrix()).max())
    # Nothing is learned across the axes: directions orthogonal to them have distance 0.
    outside = np.linalg.qr(np.hstack([axes, np.random.RandomState(0).randn(120, 1)]))[0][:, -1]
    assert np.linalg.norm(auto.components_ @ outside) < 1e-10 * np.linalg.norm(auto.components_)


@pytest.mark.parametrize("learner", LEARNERS, ids=lambda e: type(e).__name__)
def test_all_features_and_errors_name_n_components(learner, wide):
    X, y = wide
    full = clone(learner).set_params(n_components=None).fit(X[:, :90], y)
    auto = clone(learner).set_params(n_components="auto").fit(X[:, :90], y)
    # Up to 100 features "auto" is every feature.
    assert np.array_equal(full.components_, auto.components_)
    with pytest.raises(ValueError, match="n_components=130 cannot exceed"):
        clone(learner).set_params(n_components=130).fit(X, y)
