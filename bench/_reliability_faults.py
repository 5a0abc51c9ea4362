"""The reliability catalogue's cases on behaviour: misuse, faults, determinism, numerics.

See ``_reliability_catalogue`` for the verdicts; each function returns the cases of one
category as ``(name, action, options)``.
"""

import pickle

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

import psdmetric
from psdmetric import PairConstraints
from _reliability_catalogue import data, fit_on, good_fit_args, kind_of, samples_of, sound


def misuse(estimator, kind):
    X, y = data()
    X8 = data(n_features=8, seed=3)[0]
    cases = []

    def unfitted(call):
        def action(fitted):
            return call(clone(fitted))
        return action

    probe = samples_of(kind, X)
    for method in ("transform", "predict", "get_mahalanobis_matrix", "decision_function",
                   "pair_predict", "pair_distance"):
        if not hasattr(estimator, method):
            continue
        takes_pairs = method.startswith("pair_") and kind not in ("pairs-classifier",)
        argument = X[np.arange(10).reshape(5, 2)] if takes_pairs else probe
        cases.append((f"{method} before fit",
                      unfitted(lambda e, m=method, a=argument: getattr(e, m)()
                               if m == "get_mahalanobis_matrix" else getattr(e, m)(a)),
                      {"check": _must_not_return}))
        if method != "get_mahalanobis_matrix":
            wrong = samples_of(kind, X8) if not takes_pairs else X8[np.arange(10).reshape(5, 2)]
            cases.append((f"{method} with other features",
                          lambda e, m=method, a=wrong: getattr(e, m)(a),
                          {"check": _must_not_return}))
    if hasattr(estimator, "partial_fit"):
        args, _ = good_fit_args(kind, X, y)
        chunk = [a[:12] for a in args]
        cases += [
            ("partial_fit with other features",
             lambda e: e.partial_fit(samples_of(kind, X8)[:12], *chunk[1:]), {}),
            ("partial_fit with NaN", lambda e: e.partial_fit(
                np.where(np.arange(60).reshape(12, 5) == 7, np.nan, chunk[0]), *chunk[1:]), {}),
            ("partial_fit on an empty chunk", lambda e: e.partial_fit(
                chunk[0][:0], *[a[:0] for a in chunk[1:]]), {}),
            ("partial_fit on one row", lambda e: e.partial_fit(
                chunk[0][:1], *[a[:1] for a in chunk[1:]]), {}),
            ("partial_fit chunk after chunk",
             lambda e: [e.partial_fit(*[a[i:i + 4] for a in args])
                        for i in range(0, 60, 4)][-1], {}),
            ("fit after partial_fit", lambda e: e.partial_fit(*chunk).fit(*args), {}),
        ]
    return cases


def _must_not_return(estimator, result, messages):
    return "returned instead of refusing"


def faults(kind):
    X, y = data(n_features=4, seed=5)
    refit = fit_on(kind, X, y)

    def failing_round(after, error):
        def action(estimator):
            real = psdmetric._core._driver.Round.__init__
            calls = []

            def injected(self, *args, **kwargs):
                calls.append(None)
                if len(calls) > after:
                    raise error
                real(self, *args, **kwargs)
            psdmetric._core._driver.Round.__init__ = injected
            try:
                return refit(estimator)
            finally:
                psdmetric._core._driver.Round.__init__ = real
        return action

    def failing_validation(error):
        def action(estimator):
            def injected(*args, **kwargs):
                raise error
            target = psdmetric._core._guards
            real = target.check_scale
            target.check_scale = injected
            psdmetric._core._base.check_scale = injected
            try:
                return refit(estimator)
            finally:
                target.check_scale = real
                psdmetric._core._base.check_scale = real
        return action

    injected = {"injected": True}
    return [
        ("error in the first round", failing_round(0, FloatingPointError("round 1")), injected),
        ("error in the second round", failing_round(1, FloatingPointError("round 2")), injected),
        ("MemoryError in a round", failing_round(1, MemoryError()), injected),
        ("Ctrl-C in the first round", failing_round(0, KeyboardInterrupt()), injected),
        ("Ctrl-C in the third round", failing_round(2, KeyboardInterrupt()), injected),
        ("Ctrl-C during validation", failing_validation(KeyboardInterrupt()), injected),
        ("error during validation", failing_validation(RuntimeError("validation")), injected),
    ]


def determinism(kind):
    X, y = data(seed=7)
    args, kwargs = good_fit_args(kind, X, y)

    def repeated(estimator):
        first = clone(estimator).fit(*args, **kwargs)
        second = clone(estimator).fit(*args, **kwargs)
        return _outputs(first, kind, X), _outputs(second, kind, X)

    def threads(estimator):
        with threadpool_limits(1):
            one = clone(estimator).fit(*args, **kwargs)
        with threadpool_limits(2):
            two = clone(estimator).fit(*args, **kwargs)
        return _outputs(one, kind, X), _outputs(two, kind, X)

    def pickled(estimator):
        fitted = estimator.fit(*args, **kwargs)
        return _outputs(fitted, kind, X), _outputs(pickle.loads(pickle.dumps(fitted)), kind, X)

    def refit_same(estimator):
        fitted = estimator.fit(*args, **kwargs)
        before = _outputs(fitted, kind, X)
        return before, _outputs(fitted.fit(*args, **kwargs), kind, X)

    equal = {"check": _pair_equal}
    return [("same seed twice", repeated, equal), ("one or two threads", threads, equal),
            ("pickle round trip", pickled, equal), ("refit in place", refit_same, equal)]


def _outputs(estimator, kind, X):
    probe = samples_of(kind, X)
    if hasattr(estimator, "transform") and kind not in ("pairs-classifier",
                                                        "triplets-classifier",
                                                        "quadruplets-classifier"):
        return estimator.transform(probe)
    if hasattr(estimator, "decision_function"):
        return estimator.decision_function(probe)
    return estimator.predict(probe)


def _pair_equal(estimator, result, messages):
    first, second = result
    return None if np.array_equal(first, second) else "outputs differ"


def numerics(kind):
    X, y = data(seed=11)
    cases = []
    for exponent in (-300, -200, -150, -100, -50, -10, 10, 50, 100, 150, 200, 300):
        cases.append((f"X × 1e{exponent}", fit_on(kind, X * 10.0**exponent, y), {}))
    for noise in (1e-14, 1e-12, 1e-10, 1e-8, 1e-6):
        rng = np.random.RandomState(82)
        near = np.repeat(rng.randn(20, 5), 3, 0) + noise * rng.randn(60, 5)
        cases.append((f"near-duplicates, noise {noise:g}", fit_on(kind, near, y), {}))
    collinear = np.column_stack([X, X[:, 0] * 2, X[:, 1] - X[:, 2]])
    cases += [
        ("collinear features", fit_on(kind, collinear, y), {}),
        ("column scales 1e-8 to 1e8", fit_on(kind, X * np.logspace(-8, 8, 5), y), {}),
        ("exact duplicates", fit_on(kind, np.repeat(X[:20], 3, 0), y), {}),
        ("float32 stays float32", _float32(kind, X, y), {"check": _is_float32}),
    ]
    if kind == "pairs":
        Xi = X[:8].copy()
        Xi[3] = Xi[2] + Xi[1] - Xi[0]
        infeasible = PairConstraints([[0, 1], [2, 3], [4, 5], [6, 7]], [1, -1, 1, -1])
        cases.append(("gamma=inf on infeasible pairs",
                      _infeasible(Xi, infeasible), {"check": _warned("infeasible")}))
    return cases


def _float32(kind, X, y):
    def action(estimator):
        fitted = fit_on(kind, X.astype(np.float32), y)(estimator)
        return _outputs(fitted, kind, X.astype(np.float32))
    return action


def _is_float32(estimator, result, messages):
    if kind_of(estimator) in ("pairs-classifier", "triplets-classifier",
                              "quadruplets-classifier", "regressor"):
        return None if np.all(np.isfinite(result)) else "non-finite output"
    return None if result.dtype == np.float32 else f"transform returned {result.dtype}"


def _infeasible(X, constraints):
    def action(estimator):
        if "bounds" in estimator.get_params():
            estimator.set_params(gamma=np.inf, bounds=(1.0, 2.0))
        return estimator.fit(X, constraints=constraints)
    return action


def _warned(word):
    def check(estimator, result, messages):
        if "bounds" not in estimator.get_params():
            return sound(estimator, result, messages)
        return None if any(word in message for message in messages) else "no warning"
    return check
