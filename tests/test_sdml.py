"""SDML (Qi, Tang, Zha, Chua & Zhang, 2009): the graphical-lasso problem, rank-deficient data."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler

from psdmetric import SDML, pairs_from_labels
from psdmetric._convex._sdml import sdml_matrix


def test_sdml_solves_its_penalised_log_det_problem():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:, :4]
    constraints = pairs_from_labels(y, 40, 0)
    model = SDML(0.002, alpha=0.05, tol=1e-8).fit(X, constraints=constraints)
    assert model.shift_ == 0.0
    C = sdml_matrix(X, constraints, np.eye(4), 0.002)
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
        model = SDML(prior="covariance", random_state=0).fit(X, y)
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
