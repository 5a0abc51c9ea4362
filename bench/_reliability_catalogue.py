"""The bad-input and fault catalogue of ``bench_reliability.py``: cases and their verdicts.

Every case acts on an estimator fitted once on good data (so that a failed refit can
be checked to leave that model whole) and ends in one of three verdicts:

- ``clear``: a ``ValueError``/``TypeError``/``NotFittedError`` (or ``KeyboardInterrupt``
  when the case injects one) raised by psdmetric's or scikit-learn's own checks, with
  the estimator as it was before the call;
- ``correct``: the call returned and the result is sound (a finite, symmetric PSD
  metric that is not silently zero; finite predictions; equal repeated fits);
- ``defect``: anything else — a silent wrong result, a half-fitted estimator after an
  error, or an exception from deep inside NumPy/SciPy/compiled code.
"""

import traceback
import warnings
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.exceptions import NotFittedError

import psdmetric
from psdmetric import DistanceTargets, PairConstraints, TripletConstraints

PACKAGE = Path(psdmetric.__file__).resolve().parent
CATEGORIES = ("bad data", "bad constraints", "bad parameters", "online misuse",
              "interruption and failed fits", "determinism and threads",
              "numerical soundness")
_CLEAR_TYPES = (ValueError, TypeError, NotFittedError)
# Parameter values tried on every parameter: wrong types, signs, non-finite, extremes.
BAD_VALUES = {"minus one": -1, "zero": 0, "NaN": np.nan, "infinity": np.inf,
              "a string": "bogus", "None": None, "1e300": 1e300, "a list": [1, 2]}


def data(n_samples=60, n_features=5, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(n_samples, n_features), np.arange(n_samples) % 3


def _raised_in_own_checks(error):
    """The innermost frame raising ``error`` is Python code of psdmetric or scikit-learn."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return True
    where = frames[-1].filename
    return where.endswith(".py") and ("sklearn" in where or where.startswith(str(PACKAGE))
                                      or "bench" in where)


def _state(estimator):
    return {name: (value.copy() if isinstance(value, np.ndarray) else value)
            for name, value in vars(estimator).items()}


def _same_state(estimator, state):
    now = vars(estimator)
    if set(now) != set(state):
        return False
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            if not (isinstance(now[name], np.ndarray) and now[name].shape == value.shape
                    and np.array_equal(now[name], value, equal_nan=True)):
                return False
        elif now[name] is not value and not _equal_scalars(now[name], value):
            return False
    return True


def _equal_scalars(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects without a boolean equality
        return False


def verdict(estimator, action, *, check=None, injected=False, params=None):
    """Run ``action(estimator)`` and judge it; return ``(verdict, detail)``.

    ``params`` are set first (the user's ``set_params``); ``injected``: the case raises
    the error or Ctrl-C itself, so only the state after it is judged.
    """
    estimator.set_params(**(params or {}))
    before = _state(estimator)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = action(estimator)
        except KeyboardInterrupt as error:
            if not injected:
                raise
            return _judge_error(estimator, before, error, injected=True)
        except Exception as error:  # noqa: BLE001 - every error is judged
            return _judge_error(estimator, before, error, injected=injected)
    messages = [str(w.message) for w in caught
                if not issubclass(w.category, (DeprecationWarning, RuntimeWarning))]
    problem = (check or sound)(estimator, result, messages)
    return ("defect", problem) if problem else ("correct", "; ".join(messages)[:200])


def _judge_error(estimator, before, error, injected=False):
    detail = f"{type(error).__name__}: {str(error)[:300]}"
    if not _same_state(estimator, before):
        return "defect", "half-fitted after " + detail
    if injected:
        return "clear", detail
    if isinstance(error, _CLEAR_TYPES) and _raised_in_own_checks(error):
        return "clear", detail
    return "defect", "raised from deep inside: " + detail


def sound(estimator, result, messages):
    """Why the fitted ``estimator`` is unsound, or None."""
    if hasattr(estimator, "get_mahalanobis_matrix") and hasattr(estimator, "components_"):
        return _unsound_metric(estimator, messages)
    if hasattr(estimator, "learner_"):
        inner = estimator.learner_
        inner = getattr(inner, "estimator", inner)
        threshold = getattr(estimator, "threshold_", 0.0)
        if not np.isfinite(threshold):
            return f"threshold_ is {threshold}"
        return _unsound_metric(inner, messages) if hasattr(inner, "components_") else None
    if hasattr(estimator, "coef_"):
        coef = estimator.coef_
        sound_weights = np.all(np.isfinite(coef)) and np.all(coef > 0)
        return None if sound_weights else "coef_ not finite positive"
    if hasattr(estimator, "embedding_"):
        return None if np.all(np.isfinite(estimator.embedding_)) else "embedding_ not finite"
    return None


def _unsound_metric(estimator, messages):
    L = estimator.components_
    if not np.all(np.isfinite(L)):
        return f"components_ has {np.sum(~np.isfinite(L))} non-finite entries"
    M = L.T @ L
    if not np.all(np.isfinite(M)):
        return "the metric LᵀL overflows float64"
    scale = max(np.abs(M).max(), np.finfo(float).tiny)
    # On M / scale: LAPACK's eigvalsh does not converge on entries near 1e-300.
    if np.linalg.eigvalsh((M + M.T) / (2 * scale)).min() < -1e-9:
        return "metric not PSD"
    if not np.any(L) and not messages:
        return "all-zero metric without a warning"
    return None


# --------------------------------------------------------------------------------------
# How each kind of estimator is fitted: labels learners, the tuple classifiers, BurgRegressor.

def kind_of(estimator):
    if isinstance(estimator, psdmetric.PairsClassifier):
        return "pairs-classifier"
    if isinstance(estimator, psdmetric.TripletsClassifier):
        return "triplets-classifier"
    if isinstance(estimator, psdmetric.QuadrupletsClassifier):
        return "quadruplets-classifier"
    if isinstance(estimator, psdmetric.BurgRegressor):
        return "regressor"
    return getattr(estimator, "_constraint_kind", "labels")


def good_fit_args(kind, X, y):
    """``(args, kwargs)`` of a good ``fit`` on samples ``X`` with classes ``y``."""
    if kind == "pairs-classifier":
        index = np.random.RandomState(1).randint(0, len(X), (len(X), 2))
        return (X[index], np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)), {}
    if kind == "triplets-classifier":
        return (X[triplet_rows(y)],), {}
    if kind == "quadruplets-classifier":
        rows = triplet_rows(y)
        return (X[np.column_stack([rows[:, :2], rows[:, [0, 2]]])],), {}
    if kind == "regressor":
        Xp = np.abs(X) + 0.1
        return (Xp, Xp @ np.arange(1.0, X.shape[1] + 1)), {}
    return (X, y), {}


def triplet_rows(y):
    rng = np.random.RandomState(2)
    rows = []
    for anchor in range(len(y)):
        same = np.flatnonzero((y == y[anchor]) & (np.arange(len(y)) != anchor))
        other = np.flatnonzero(y != y[anchor])
        rows.append([anchor, rng.choice(same), rng.choice(other)])
    return np.array(rows)


def samples_of(kind, X):
    """What ``transform``/``predict`` takes for this kind, built from samples ``X``."""
    if kind == "pairs-classifier":
        return X[np.arange(len(X) // 2 * 2).reshape(-1, 2)]
    if kind == "triplets-classifier":
        return X[np.arange(len(X) // 3 * 3).reshape(-1, 3)]
    if kind == "quadruplets-classifier":
        return X[np.arange(len(X) // 4 * 4).reshape(-1, 4)]
    return np.abs(X) + 0.1 if kind == "regressor" else X


def fit_on(kind, X, y, **extra):
    """An action fitting on samples ``X`` and labels ``y`` the way ``kind`` takes them."""
    args, kwargs = good_fit_args(kind, X, y)

    def action(estimator):
        return estimator.fit(*args, **kwargs, **extra)
    return action


def fit_raw(*args, **kwargs):
    def action(estimator):
        return estimator.fit(*args, **kwargs)
    return action


def constraints_for(kind, rows=None, labels=None, bounds=None):
    rows = np.array(rows if rows is not None else [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]])
    labels = np.array(labels if labels is not None else [1, -1, 1, -1][:len(rows)])
    if kind == "pairs":
        return PairConstraints(rows[:, :2], labels, bounds)
    if kind == "targets":
        return DistanceTargets(rows[:, :2], np.where(labels == 1, 0.5, 4.0)
                               if bounds is None else bounds, labels)
    return TripletConstraints(rows)


# --------------------------------------------------------------------------------------
# Cases on the input: data, constraints, parameters.

def bad_data(kind):
    X, y = data()
    args, _ = good_fit_args(kind, X, y)
    first = args[0]
    target = args[1] if len(args) > 1 else None

    def with_first(values, target=target):
        return fit_raw(values, target) if target is not None or not kind.endswith(
            "classifier") else fit_raw(values)

    def nan_cell(values):
        values = np.array(values, dtype=float)
        values.flat[7] = np.nan
        return values

    def inf_cell(values):
        values = np.array(values, dtype=float)
        values.flat[3] = np.inf
        return values

    cases = [
        ("NaN in one cell", with_first(nan_cell(first))),
        ("infinity in one cell", with_first(inf_cell(first))),
        ("strings", with_first(np.full(first.shape, "a"))),
        ("complex numbers", with_first(first + 1j)),
        ("sparse matrix", with_first(sparse.csr_matrix(first.reshape(len(first), -1)))),
        ("no rows", with_first(first[:0], target[:0] if target is not None else None)),
        ("one row", with_first(first[:1], target[:1] if target is not None else None)),
        ("nested lists", with_first(first.tolist())),
        ("float16", with_first(first.astype(np.float16))),
        ("float32", with_first(first.astype(np.float32))),
        ("integers", with_first(np.round(first * 10).astype(np.int64))),
        ("object dtype of numbers", with_first(first.astype(object))),
    ]
    if kind in ("pairs", "targets", "triplets", "labels", "regressor"):
        cases += [
            ("no columns", fit_raw(first[:, :0], target)),
            ("3-D array", fit_raw(X[np.arange(60).reshape(30, 2)], y[:30])),
            ("read-only X", fit_raw(_read_only(first), target)),
            ("Fortran-ordered X", fit_raw(np.asfortranarray(first), target)),
            ("pandas DataFrame", fit_raw(_frame(first), target)),
        ]
    if target is not None:
        cases += [
            ("y one short", fit_raw(first, target[:-1])),
            ("y None", fit_raw(first, None)),
            ("y as a column", fit_raw(first, target.reshape(-1, 1))),
            ("y with NaN", fit_raw(first, np.where(np.arange(len(target)) == 3, np.nan,
                                                   target.astype(float)))),
        ]
    if kind in ("pairs", "targets", "triplets", "labels"):
        cases += [
            ("y continuous", fit_raw(X, np.linspace(0, 1, len(X)))),
            ("y one class", fit_raw(X, np.zeros(len(X), dtype=int))),
            ("y strings", fit_raw(X, np.array(["a", "b", "c"])[y])),
            ("y one sample per class", fit_raw(X[:6], np.arange(6))),
            ("all rows equal", fit_raw(np.ones((60, 5)), y)),
            ("one constant column", fit_raw(np.column_stack([X[:, :4], np.ones(60)]), y)),
            ("more features than samples", fit_raw(*data(12, 40))),
        ]
    return cases


def _read_only(values):
    values = np.array(values)
    values.setflags(write=False)
    return values


def _frame(values):
    import pandas as pd
    return pd.DataFrame(values, columns=[f"f{i}" for i in range(values.shape[1])])


def bad_constraints(kind):
    X, _ = data()
    width = 3 if kind == "triplets" else 2
    bad_rows = [[0, 1, 2], [3, 99, 5]]
    cases = [
        ("row beyond X", lambda: constraints_for(kind, bad_rows, [1, -1])),
        ("negative row", lambda: constraints_for(kind, [[0, 1, 2], [-3, 4, 5]], [1, -1])),
        ("float rows", lambda: constraints_for(kind, np.array([[0.5, 1, 2], [3, 4, 5]]), [1, -1])),
        ("no constraints", lambda: constraints_for(kind, np.zeros((0, 3), dtype=int), [])),
        ("wrong width", lambda: constraints_for(kind, np.zeros((2, 1), dtype=int), [1, -1])),
        ("only equal points", lambda: constraints_for(kind, [[0, 0, 0], [1, 1, 1]], [1, -1])),
        ("the wrong constraint type",
         lambda: (TripletConstraints([[0, 1, 2]]) if kind != "triplets"
                  else PairConstraints([[0, 1]], [1]))),
        ("a plain array", lambda: np.array([[0, 1], [2, 3]])),
        ("constraints and y together", lambda: constraints_for(kind)),
    ]
    if width == 2:
        cases += [
            ("contradicting labels",
             lambda: constraints_for(kind, [[0, 1, 2], [1, 0, 2]], [1, -1])),
            ("labels not ±1", lambda: constraints_for(kind, [[0, 1, 2], [3, 4, 5]], [1, 2])),
            ("NaN bounds", lambda: constraints_for(kind, [[0, 1, 2], [3, 4, 5]], [1, -1],
                                                   [np.nan, 1.0])),
            ("zero bounds", lambda: constraints_for(kind, [[0, 1, 2], [3, 4, 5]], [1, -1],
                                                    [0.0, 1.0])),
            ("negative bounds", lambda: constraints_for(kind, [[0, 1, 2], [3, 4, 5]], [1, -1],
                                                        [-1.0, 1.0])),
        ]

    def action_of(name, make):
        def action(estimator):
            constraints = make()  # a refusal here is the user's own call failing clearly
            y = data()[1] if name == "constraints and y together" else None
            return estimator.fit(X, y, constraints=constraints)
        return action
    return [(name, action_of(name, make)) for name, make in cases]


def bad_parameters(estimator, kind):
    X, y = data()
    cases = []
    for parameter in sorted(estimator.get_params(deep=False)):
        if parameter == "verbose":
            continue  # printing is not learning; its validation is scikit-learn's
        for label, value in BAD_VALUES.items():
            cases.append((f"{parameter} = {label}", fit_on(kind, X, y),
                          {"params": {parameter: value}}))
    return cases
