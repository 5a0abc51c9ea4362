"""Ctrl-C during ``fit`` and the ``partial_fit`` contract, over every exported estimator.

Ctrl-C is simulated by a ``KeyboardInterrupt`` raised from a function the learner's
loop calls, in its second call: after one complete pass (cycle, iteration). Where the
learner can roll back, the real call runs first, so the interrupt lands on a state the
interrupted pass has already changed, the case a half-updated matrix would come from.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import RegressorMixin, is_regressor
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

import psdmetric._bregman._definite_boost
import psdmetric._bregman._logdet
import psdmetric._boost._column_generation
import psdmetric._boost._master_lp
import psdmetric._bregman._von_neumann
import psdmetric._convex._lsml
import psdmetric._convex._mmc
import psdmetric._large_margin._lmnn
import psdmetric._regression._mlkr
from psdmetric import (LMNN, LSML, MLKR, MMC, DefiniteBoost, LogDet, PairConstraints,
                       PSDBoost, VonNeumann)
from test_common import ESTIMATORS

# The searches stop on Ctrl-C rather than keep a partial fit (tests/test_cv.py).
ESTIMATORS = [E for E in ESTIMATORS if not E.__name__.endswith("CV")]
ids = [Estimator.__name__ for Estimator in ESTIMATORS]
# Learners whose passes run through the iteration driver, which keeps the last complete
# pass on Ctrl-C (not the closed forms RCA and LFDA: no max_iter; nor SDML, whose max_iter is
# that of scikit-learn's graphical lasso).
# A learner with output_iter (SCML) counts updates in max_iter, so max_iter=1 is no pass.
DRIVEN = [E for E in ESTIMATORS if "max_iter" in E().get_params() and E.__name__ != "SDML"
          and "output_iter" not in E().get_params()]
driven_ids = [Estimator.__name__ for Estimator in DRIVEN]
ONLINE = [Estimator for Estimator in ESTIMATORS if hasattr(Estimator, "partial_fit")]
online_ids = [Estimator.__name__ for Estimator in ONLINE]
ONLINE_METRIC_LEARNERS = [E for E in ONLINE if hasattr(E, "get_mahalanobis_matrix")]

# The call each batch learner's loop makes once per cycle / iteration; the interrupt
# comes after that call has run, as a real Ctrl-C during a compiled sweep does (every
# learner keeps a copy of the last counted pass to go back to). The online learners
# (all with ``_one_pass``) are interrupted as their second pass returns.
BATCH_LOOP_CALLS = {
    LogDet: (psdmetric._bregman._logdet, "logdet_sweep", True),
    VonNeumann: (psdmetric._bregman._von_neumann, "von_neumann_sweep", True),
    DefiniteBoost: (psdmetric._bregman._definite_boost, "definite_boost_steps", True),
    PSDBoost: (psdmetric._boost._master_lp.RestrictedMaster, "solve", True),
    LMNN: (psdmetric._large_margin._lmnn._LabelRounds, "round", True),
    MMC: (psdmetric._convex._mmc._ProjectedAscent, "round", True),
    LSML: (psdmetric._convex._lsml._QuasiNewton, "round", True),
    MLKR: (psdmetric._regression._mlkr._Rounds, "round", True),
}


def loop_call(Estimator):
    if hasattr(Estimator, "_one_pass"):
        return Estimator, "_one_pass", True
    if Estimator not in BATCH_LOOP_CALLS:
        pytest.fail(f"Say in BATCH_LOOP_CALLS which call {Estimator.__name__}'s loop makes.")
    return BATCH_LOOP_CALLS[Estimator]


def interrupt(monkeypatch, owner, name, *, at, runs_first):
    """Make ``owner.name`` raise KeyboardInterrupt from its call number ``at`` on."""
    real = getattr(owner, name)
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(None)
        if len(calls) < at or runs_first:
            result = real(*args, **kwargs)
        if len(calls) >= at:
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(owner, name, interrupted)
    return calls


def problem(Estimator):
    """Data, fit arguments and parameters on which every learner makes several passes."""
    rng = np.random.RandomState(0)
    y = np.arange(60) % 3
    X = rng.randn(3, 4)[y] + 0.6 * rng.randn(60, 4)
    if issubclass(Estimator, RegressorMixin):
        # tol=0: the passes go on to max_iter.
        return np.abs(X), {"y": np.abs(X) @ [0.4, 0.3, 0.2, 0.1]}, {"tol": 0.0}
    if Estimator is DefiniteBoost:
        # Hard constraints with bounds met by a hidden trace-one metric: several cycles.
        root = rng.randn(4, 4)
        hidden = root @ root.T / np.trace(root @ root.T)
        pairs = np.array([rng.choice(60, 2, replace=False) for _ in range(12)])
        Z = X[pairs[:, 0]] - X[pairs[:, 1]]
        labels = np.where(np.arange(12) % 2 == 0, 1, -1)
        bounds = np.einsum("ij,jk,ik->i", Z, hidden, Z) * (1 + 0.05 * labels)
        return X, {"constraints": PairConstraints(pairs, labels, bounds=bounds)}, {
            "random_state": 0, "gamma": np.inf}
    return X, {"y": y}, {"random_state": 0}


def quiet_fit(model, X, fit_args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, **fit_args)


def fit(Estimator, X, fit_args, **params):
    return quiet_fit(Estimator(**params), X, fit_args)


def learned(model):
    return model.coef_ if is_regressor(model) else model.get_mahalanobis_matrix()


def assert_usable(model, X):
    if is_regressor(model):
        assert np.all(np.isfinite(model.coef_)) and np.all(model.coef_ > 0)
        assert np.all(np.isfinite(model.predict(X)))
        return
    assert np.all(np.isfinite(model.components_))
    M = model.get_mahalanobis_matrix()
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() >= -1e-12 * np.abs(M).max()
    assert np.all(np.isfinite(model.transform(X)))


@pytest.mark.parametrize("Estimator", DRIVEN, ids=driven_ids)
def test_ctrl_c_during_fit_keeps_the_last_complete_pass_and_warns(Estimator, monkeypatch):
    X, fit_args, params = problem(Estimator)
    owner, name, runs_first = loop_call(Estimator)
    calls = interrupt(monkeypatch, owner, name, at=2, runs_first=runs_first)
    model = Estimator(**params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert model.fit(X, **fit_args) is model
    assert len(calls) == 2
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert len(messages) == 1 and "interrupted by the user" in messages[0], messages
    assert model.n_iter_ == 1
    assert_usable(model, X)
    monkeypatch.undo()
    # Exactly the model of one complete pass: nothing of the interrupted one is kept.
    one_pass = fit(Estimator, X, fit_args, max_iter=1, **params)
    assert np.array_equal(learned(model), learned(one_pass))
    # A later fit is the uninterrupted fit.
    expected = learned(fit(Estimator, X, fit_args, **params))
    assert np.array_equal(learned(quiet_fit(model, X, fit_args)), expected)


def test_ctrl_c_while_psdboost_prices_keeps_that_iterations_lp_and_its_bounds(monkeypatch):
    X, fit_args, params = problem(PSDBoost)
    interrupt(monkeypatch, psdmetric._boost._column_generation.ColumnGeneration, "price", at=3,
              runs_first=False)
    with pytest.warns(ConvergenceWarning, match="interrupted by the user after 3 complete iter"):
        model = PSDBoost(**params).fit(X, **fit_args)
    monkeypatch.undo()
    reference = fit(PSDBoost, X, fit_args, max_iter=3, **params)
    assert model.n_iter_ == len(model.dual_objective_) == len(model.max_eigenvalue_) == 3
    assert np.array_equal(model.components_, reference.components_)
    assert np.array_equal(model.dual_objective_, reference.dual_objective_)
    # The third pricing never ran: the bound is the best of the first two, still valid.
    assert model.max_eigenvalue_[2] == reference.max_eigenvalue_[1]
    assert model.max_eigenvalue_[2] >= model.dual_objective_[2]
    assert_usable(model, X)


@pytest.mark.parametrize("Estimator", ONLINE, ids=online_ids)
def test_ctrl_c_before_a_complete_pass_undoes_the_call_and_propagates(Estimator,
                                                                      monkeypatch):
    X, fit_args, params = problem(Estimator)
    model = fit(Estimator, X, fit_args, max_iter=2, **params)
    before, n_iter = learned(model).copy(), model.n_iter_
    interrupt(monkeypatch, Estimator, "_one_pass", at=1, runs_first=True)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X[:, :3], **fit_args)
    with pytest.raises(KeyboardInterrupt):
        model.partial_fit(X, **fit_args)
    fresh = Estimator(**params)
    with pytest.raises(KeyboardInterrupt):
        fresh.partial_fit(X, **fit_args)
    monkeypatch.undo()
    assert model.n_features_in_ == 4 and model.n_iter_ == n_iter
    assert np.array_equal(learned(model), before)
    assert_usable(model, X)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    # The undone chunk left no trace: learning goes on as if it had never been seen.
    reference = fit(Estimator, X, fit_args, max_iter=2, **params).partial_fit(X, **fit_args)
    assert np.array_equal(learned(model.partial_fit(X, **fit_args)), learned(reference))
    assert np.array_equal(learned(fresh.partial_fit(X, **fit_args)),
                          learned(Estimator(**params).partial_fit(X, **fit_args)))


@pytest.mark.parametrize("Estimator", ONLINE, ids=online_ids)
def test_partial_fit_with_another_feature_count_names_both_counts(Estimator):
    X, fit_args, params = problem(Estimator)
    model = Estimator(**params).partial_fit(X, **fit_args)
    before = learned(model).copy()
    message = f"X has 3 features, but {Estimator.__name__} is expecting 4 features"
    with pytest.raises(ValueError, match=message):
        model.partial_fit(X[:, :3], **fit_args)
    assert model.n_iter_ == 1 and np.array_equal(learned(model), before)


@pytest.mark.parametrize("Estimator", ONLINE_METRIC_LEARNERS,
                         ids=[E.__name__ for E in ONLINE_METRIC_LEARNERS])
def test_partial_fit_takes_classes_never_seen_before_as_chunk_local_labels(Estimator):
    """Labels are compared only within a chunk (documented in psdmetric._online._base)."""
    X, fit_args, params = problem(Estimator)
    y = np.arange(60) % 2
    first, second = slice(0, 30), slice(30, 60)
    seen = Estimator(**params).partial_fit(X[first], y[first])
    new = Estimator(**params).partial_fit(X[first], y[first])
    seen.partial_fit(X[second], y[second])
    # Classes of another type and value, in the same order: the same pairs.
    new.partial_fit(X[second], np.array(["new-a", "new-b"])[y[second]])
    assert np.array_equal(learned(new), learned(seen))
    assert new.n_iter_ == 2
    assert_usable(new, X)
