"""SDML (Qi, Tang, Zha, Chua & Zhang, 2009): the graphical-lasso problem, rank-deficient data."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy import linalg
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import PairConstraints, SDML, pairs_from_labels
from psdmetric._convex._sdml import pair_matrix


def test_sdml_solves_its_penalised_log_det_problem():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :4]
    constraints = pairs_from_labels(y, 40, 0)
    model = SDML(0.002, alpha=0.05, tol=1e-8).fit(X, constraints=constraints)
    assert model.shift_ == 0.0
    C = np.eye(4) + 0.002 * pair_matrix(X, constraints)
    weights = np.sqrt(np.outer(np.diag(C), np.diag(C)))
    np.fill_diagonal(weights, 0.0)
    M = cp.Variable((4, 4), PSD=True)
    objective = cp.trace(M @ C) - cp.log_det(M) + 0.05 * cp.sum(cp.multiply(weights,
                                                                            cp.abs(M)))
    optimum = cp.Problem(cp.Minimize(objective)).solve(solver="CLARABEL")
    learned = model.get_mahalanobis_matrix()
    reached = (np.vdot(learned, C) - np.linalg.slogdet(learned)[1]
               + 0.05 * np.sum(weights * np.abs(learned)))
    assert reached == pytest.approx(optimum, rel=1e-7)
    # The objective is flat along the off-diagonal entries: they agree to 1e-4.
    assert np.allclose(learned, M.value, atol=1e-4)


def test_rank_deficient_data_give_a_finite_psd_metric_with_a_warning():
    rng = np.random.RandomState(0)
    X, y = rng.randn(12, 30), np.repeat([0, 1, 2], 4)      # d > n
    with pytest.warns(UserWarning, match="not positive definite") as record:
        model = SDML(0.5, prior="covariance", random_state=0).fit(X, y)
    assert any("covariance of X is singular" in str(w.message) for w in record)
    M = model.get_mahalanobis_matrix()
    assert np.isfinite(M).all() and np.linalg.eigvalsh(M).min() > 0
    assert model.shift_ > 0


def test_bad_input_is_refused():
    X, y = load_wine(return_X_y=True)
    with pytest.raises(ValueError, match=r"1 feature\(s\)"):
        SDML().fit(X[:, :1], y)
    with pytest.raises(ValueError, match="must have shape"):
        SDML(prior=np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match="balance_param"):
        SDML(balance_param=-1.0).fit(X, y)


@pytest.mark.parametrize("prior", ["identity", "covariance"])
def test_auto_balance_keeps_C_definite_with_the_pairs_weight_asked(prior):
    rng = np.random.RandomState(0)
    X, y = rng.randn(12, 30), np.repeat([0, 1, 2], 4)      # d > n: C = I + 0.5 P is not
    X = X * np.logspace(-3, 3, 30)                          # definite, at any scale
    constraints = pairs_from_labels(y, 40, 0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = SDML(pair_weight=0.7, prior=prior, alpha=1e-3, tol=1e-8).fit(
            X, constraints=constraints)
    assert not any("not positive definite" in str(w.message) for w in record)
    assert model.shift_ == 0.0
    # The learned precision's inverse is close to C (small alpha): M₀^½ C M₀^½ has
    # eigenvalues within 1 ± 0.7 and reaches one of the two ends.
    prior_metric = np.eye(30) if prior == "identity" else None
    if prior_metric is None:
        covariance = np.cov(X, rowvar=False)
        covariance += 1e-3 * np.linalg.eigvalsh(covariance).mean() * np.eye(30)
        prior_metric = np.linalg.inv(covariance)
    root = np.real(linalg.sqrtm(prior_metric))
    C = np.linalg.inv(model.get_mahalanobis_matrix())
    values = np.linalg.eigvalsh(root @ C @ root)
    assert values.min() > 0.3 - 0.05 and values.max() < 1.7 + 0.05
    assert max(1 - values.min(), values.max() - 1) == pytest.approx(0.7, abs=0.05)


def test_pairs_of_equal_rows_leave_the_prior_with_a_warning():
    X = np.repeat(np.arange(8.0).reshape(4, 2), 2, axis=0)
    pairs = PairConstraints(np.array([[0, 1], [2, 3], [4, 5]]), np.array([1, -1, 1]))
    with pytest.warns(UserWarning, match="equal values"):
        model = SDML(alpha=0.0).fit(X, constraints=pairs)
    assert np.allclose(model.get_mahalanobis_matrix(), np.eye(2))
