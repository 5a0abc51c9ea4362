"""Reliability: a bad-input and fault catalogue run against every public estimator.

Every estimator class in ``psdmetric.__all__`` (so a learner added there is enrolled
without editing this file) meets the cases of ``_reliability_catalogue``: bad data,
bad constraints, bad parameters (eight wrong values for each parameter), online
misuse and calls before ``fit``, errors and Ctrl-C injected into a fit, determinism
across runs, threads and pickling, and numerical extremes (scales from 1e-300 to
1e300, near-duplicate points, collinear and badly scaled features, float32). Each case
starts from the estimator fitted on good data, so that a failed refit can be checked
to leave that model whole, and ends as a clear error, a correct result, or a defect.

    python bench/bench_reliability.py          # writes docs/benchmarks/reliability.{json,md}
    python bench/bench_reliability.py --quick  # LogDet and PairsClassifier only; scratch dir
"""

import contextlib
import inspect
import io
import pickle
import sys
import warnings

from sklearn.base import BaseEstimator

import psdmetric
from _harness import Case, main
from _reliability_catalogue import (CATEGORIES, bad_constraints, bad_data, bad_parameters,
                                    data, good_fit_args, kind_of, verdict)
from _reliability_faults import determinism, faults, misuse, numerics

# Small searches: the catalogue fits each estimator some hundred times.
SMALL = {"LogDetCV": {"gammas": (0.1, 1.0), "cv": 2},
         "VonNeumannCV": {"gammas": (0.1, 1.0), "cv": 2}}
META = {"PairsClassifier": lambda: psdmetric.PairsClassifier(psdmetric.LogDet(random_state=0)),
        "TripletsClassifier": lambda: psdmetric.TripletsClassifier(
            psdmetric.PSDBoost(random_state=0)),
        "QuadrupletsClassifier": lambda: psdmetric.QuadrupletsClassifier(
            psdmetric.LSML(random_state=0))}


def public_estimators():
    """Name and factory of every concrete estimator class psdmetric exports."""
    factories = {}
    for name in psdmetric.__all__:
        cls = getattr(psdmetric, name)
        if not (inspect.isclass(cls) and issubclass(cls, BaseEstimator)) or inspect.isabstract(
                cls) or cls is psdmetric.MahalanobisMixin:
            continue
        if name in META:
            factories[name] = META[name]
            continue
        if "learner" in inspect.signature(cls).parameters:
            continue  # a meta-estimator this catalogue has no tuples for yet: listed as not run
        params = dict(SMALL.get(name, {}))
        if "random_state" in cls().get_params():
            params["random_state"] = 0
        factories[name] = lambda cls=cls, params=params: cls(**params)
    return factories


def catalogue(estimator):
    """Every case that applies to ``estimator``: (category, name, action, options)."""
    kind = kind_of(estimator)
    cases = [("bad data", name, action, {}) for name, action in bad_data(kind)]
    if kind in ("pairs", "targets", "triplets"):
        cases += [("bad constraints", name, action, {})
                  for name, action in bad_constraints(kind)]
    for category, cases_of in (("bad parameters", lambda: bad_parameters(estimator, kind)),
                               ("online misuse", lambda: misuse(estimator, kind)),
                               ("interruption and failed fits", lambda: faults(kind)),
                               ("determinism and threads", lambda: determinism(kind)),
                               ("numerical soundness", lambda: numerics(kind))):
        cases += [(category, name, action, options) for name, action, options in cases_of()]
    return cases


def run_catalogue(name):
    """Counts per category and verdict, and every defect, for one estimator."""
    factory = public_estimators()[name]
    estimator = factory()
    X, y = data()
    args, kwargs = good_fit_args(kind_of(estimator), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = pickle.dumps(estimator.fit(*args, **kwargs))
    counts = {category: {"clear": 0, "correct": 0, "defect": 0} for category in CATEGORIES}
    defects = []
    for category, case, action, options in catalogue(estimator):
        subject = pickle.loads(fitted)
        with contextlib.redirect_stdout(io.StringIO()):
            outcome, detail = verdict(subject, action, **options)
        counts[category][outcome] += 1
        if outcome == "defect":
            defects.append({"category": category, "case": case, "detail": detail})
    return {"counts": counts, "defects": defects}


def cases(args):
    names = list(public_estimators())
    if args.quick:
        names = [name for name in names if name in ("LogDet", "PairsClassifier")]
    return [Case(name, protocol=run_catalogue, params={"name": name}, into="learners")
            for name in names]


def setup(args):
    exported = [name for name in psdmetric.__all__ if inspect.isclass(getattr(psdmetric, name))
                and issubclass(getattr(psdmetric, name), BaseEstimator)]
    not_run = sorted(set(exported) - set(public_estimators()) - {"MahalanobisMixin"})
    return {"learners": {}, "not_run": not_run}


def total_seconds(results, args=None):
    results["total_seconds"] = sum(seconds["wall"] for seconds in results["case_seconds"].values())


if __name__ == "__main__":
    sys.exit(main("reliability", cases, setup=setup, finish=total_seconds))
