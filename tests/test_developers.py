"""The example learner of the developer guide (docs/developers.rst), tested.

It is written only with the shared pieces a new iterative learner needs: the
Mahalanobis base class, the constraint handling of ``_validate_fit`` and the iteration
driver. These tests hold it to what the driver promises every learner.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.base import _fit_context
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.estimator_checks import parametrize_with_checks

from psdmetric import MahalanobisMixin, PairConstraints
from psdmetric._core import ArrayCheckpoint, Round, iterate


class HingeMetric(MahalanobisMixin):
    """Projected gradient descent on the mean pair hinge loss ``max(0, y (d²_M − 1) + 1)``."""

    _parameter_constraints: dict = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, learning_rate=0.1, *, n_constraints=None, n_neighbors=None, tol=1e-3,
                 max_iter=100, verbose=0, random_state=None):
        self.learning_rate = learning_rate
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        Z = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
        labels = constraints.labels
        M = np.eye(X.shape[1])

        def one_round():
            losses = labels * (np.einsum("ij,jk,ik->i", Z, M, Z) - 1.0) + 1.0
            active = losses > 0
            gradient = (Z[active].T * labels[active]) @ Z[active] / len(Z)
            values, vectors = np.linalg.eigh(M - self.learning_rate * gradient)
            step = (vectors * np.maximum(values, 0.0)) @ vectors.T - M
            M[...] += step
            change = np.linalg.norm(step) / max(np.linalg.norm(M), np.finfo(float).tiny)
            return Round((np.maximum(losses, 0.0).mean(), change), converged=change <= self.tol)

        self.n_iter_ = iterate(one_round, ArrayCheckpoint(M), max_iter=self.max_iter,
                               verbose=self.verbose, name=type(self).__name__,
                               unit="iteration",
                               columns=(("hinge loss", ".4e"), ("change", ".2e")))
        values, vectors = np.linalg.eigh(M)
        self.components_ = np.sqrt(np.maximum(values, 0.0))[:, None] * vectors.T
        return self


def mean_hinge_loss(model, X, constraints):
    pairs = np.stack([X[constraints.pairs[:, 0]], X[constraints.pairs[:, 1]]], axis=1)
    squared = model.pair_distance(pairs, squared=True)
    return np.maximum(0.0, constraints.labels * (squared - 1.0) + 1.0).mean()


@parametrize_with_checks([HingeMetric(max_iter=20)])
def test_the_example_learner_is_a_scikit_learn_estimator(estimator, check):
    check(estimator)


def test_the_example_learner_lowers_the_hinge_loss_and_stops_on_tol():
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0) / 2
    model = HingeMetric(learning_rate=0.5, random_state=0, max_iter=1000).fit(X, y)
    constraints = PairConstraints.from_labels(X, y, random_state=0)
    start = HingeMetric(max_iter=1, learning_rate=1e-300).fit(X, constraints=constraints)
    assert np.allclose(start.get_mahalanobis_matrix(), np.eye(4))
    assert 1 < model.n_iter_ < 1000
    assert mean_hinge_loss(model, X, constraints) < 0.5 * mean_hinge_loss(start, X, constraints)
    assert np.linalg.eigvalsh(model.get_mahalanobis_matrix()).min() >= -1e-12


def test_the_driver_gives_the_example_learner_its_table_warning_and_ctrl_c(
        monkeypatch, capsys):
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=3 iterations"):
        HingeMetric(max_iter=3, tol=0.0, verbose=1, random_state=0).fit(X, y)
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "[HingeMetric]" and "hinge loss" in table[1] and len(table) == 6
    # Ctrl-C in the third round keeps the state of the second.
    real_eigh, calls = np.linalg.eigh, []

    def interrupted_eigh(matrix):
        calls.append(None)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_eigh(matrix)

    monkeypatch.setattr(np.linalg, "eigh", interrupted_eigh)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = HingeMetric(tol=0.0, random_state=0).fit(X, y)
    monkeypatch.undo()
    assert model.n_iter_ == 2
    assert any("interrupted by the user after 2 complete iterations" in str(w.message)
               for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        two = HingeMetric(max_iter=2, tol=0.0, random_state=0).fit(X, y)
    assert np.array_equal(model.components_, two.components_)
