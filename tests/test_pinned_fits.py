"""Fitted matrices pinned for fixed inputs: a refactoring must not change any result.

Every learner is fitted on explicit constraints (so that neither the drawing of pairs
from labels nor a default value enters) and a few iterations, and its fitted arrays
are compared with the values stored in ``data/pinned_fits.json``. After a deliberate
change of results, regenerate that file with ``python tests/test_pinned_fits.py``.
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning

from psdmetric import (
    MEG,
    POLA,
    BurgRegressor,
    DefiniteBoost,
    DistanceTargets,
    KernelPOLA,
    LogDet,
    OnlineLogDet,
    PairConstraints,
    VonNeumann,
)

PINNED = Path(__file__).parent / "data" / "pinned_fits.json"


def problem():
    rng = np.random.RandomState(0)
    y = np.arange(40) % 3
    X = rng.randn(3, 4)[y] + 0.7 * rng.randn(40, 4)
    pairs = np.array([rng.choice(40, 2, replace=False) for _ in range(60)])
    labels = np.where(y[pairs[:, 0]] == y[pairs[:, 1]], 1, -1)
    Z = X[pairs[:, 0]] - X[pairs[:, 1]]
    lengths = np.einsum("ij,ij->i", Z, Z)
    targets = np.where(labels == 1, 0.5, 1.5) * lengths / X.shape[1]
    # Bounds met by a hidden trace-one metric, so that DefiniteBoost's problem is feasible.
    root = rng.randn(4, 4)
    hidden = root @ root.T / np.trace(root @ root.T)
    distances = np.einsum("ij,jk,ik->i", Z, hidden, Z)
    trace_one = PairConstraints(pairs, labels, bounds=distances * (1 + 0.05 * labels))
    return X, PairConstraints(pairs, labels), DistanceTargets(pairs, targets), trace_one


def fits():
    """The pinned fits: name -> fitted estimator."""
    X, pairs, targets, trace_one = problem()
    regression_X = np.abs(X)
    common = {"random_state": 0, "max_iter": 5}
    learners = {
        "LogDet": LogDet(bounds=(2.0, 8.0), gamma=1.0, tol=0.0, **common),
        "VonNeumann": VonNeumann(bounds=(2.0, 8.0), gamma=1.0, tol=0.0, **common),
        "DefiniteBoost": DefiniteBoost(gamma=np.inf, tol=0.0, dual_correction=True, **common),
        "DefiniteBoost-exact": DefiniteBoost(gamma=np.inf, tol=0.0, projection="exact",
                                             **common),
        "MEG": MEG(eta=0.5, tol=0.0, **common),
        "OnlineLogDet": OnlineLogDet(eta=0.1, scale="auto", tol=0.0, **common),
        "POLA": POLA(gamma=0.5, init="zero", beta=0.0, initial_threshold=1.0, tol=0.0,
                     **common),
        # A kernel width that keeps the feature-space basis well conditioned: its
        # eigenvectors then agree to rounding across LAPACK builds.
        "KernelPOLA": KernelPOLA(kernel="rbf", kernel_params={"gamma": 4.0}, init="identity",
                                 gamma=0.5, beta=0.0, initial_threshold=1.0,
                                 random_state=0, max_iter=2),
    }
    fitted = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, learner in learners.items():
            constraints = (targets if isinstance(learner, (MEG, OnlineLogDet)) else
                           trace_one if isinstance(learner, DefiniteBoost) else pairs)
            scale = 0.25 if type(learner) is POLA else 1.0
            if isinstance(learner, KernelPOLA):  # a small basis keeps the pinned file small
                constraints = PairConstraints(pairs.pairs[:6], pairs.labels[:6])
            fitted[name] = learner.fit(X * scale, constraints=constraints)
        fitted["BurgRegressor"] = BurgRegressor(eta=1.0, max_iter=5, tol=0.0).fit(
            regression_X, regression_X @ [0.4, 0.3, 0.2, 0.1])
    return fitted


def pinned_arrays(model):
    names = ["components_", "coef_", "embedding_", "dual_coef_", "threshold_"]
    arrays = {name: np.asarray(getattr(model, name)) for name in names if hasattr(model, name)}
    arrays["n_iter_"] = np.asarray(model.n_iter_)
    return arrays


@pytest.fixture(scope="module")
def fitted():
    return fits()


@pytest.mark.parametrize("name", ["LogDet", "VonNeumann", "DefiniteBoost",
                                  "DefiniteBoost-exact", "MEG", "OnlineLogDet", "POLA",
                                  "KernelPOLA", "BurgRegressor"])
def test_fitted_arrays_equal_the_pinned_values(fitted, name):
    expected = json.loads(PINNED.read_text())[name]
    actual = pinned_arrays(fitted[name])
    assert sorted(actual) == sorted(expected)
    for attribute, values in expected.items():
        assert_allclose(actual[attribute], np.array(values), rtol=1e-12, atol=1e-14,
                        err_msg=f"{name}.{attribute}")


if __name__ == "__main__":
    pins = {name: {attribute: value.tolist() for attribute, value in pinned_arrays(model).items()}
            for name, model in fits().items()}
    lines = [f"{json.dumps(name)}: {json.dumps(values)}" for name, values in pins.items()]
    PINNED.write_text("{\n" + ",\n".join(lines) + "\n}\n")
