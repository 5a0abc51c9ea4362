"""k-NN error, fit time and fitted rank of every psdmetric learner's defaults on the suite.

The development suite (``_datasets.SUITE``: 14 data sets, n ≤ 2,000, d from 4 to 784,
2 to 32 classes) under the suite protocol (``_folds``): stratified 5-fold
cross-validation (shuffled, random_state 0) of ``StandardScaler`` → learner →
``KNeighborsClassifier(5)``. Methods: Euclidean (no learner); every metric learner
exported by psdmetric with its defaults (``random_state=0``); metric-learn 0.7.0's
``ITML_Supervised``, ``LMNN`` and ``NCA`` and scikit-learn's
``NeighborhoodComponentsAnalysis`` with their defaults (``random_state=0``), in their
own venv. Every fold is cached (``_folds``), so a rerun only fits what is missing.

Each (method, data set) cell has a budget: a psdmetric cell runs in a child process
killed after ``--budget`` seconds, a metric-learn or scikit-learn cell starts a fold
only if one as long as the slowest so far fits in the budget; a cell that did not
finish every fold says so.

    python bench/bench_suite.py            # writes docs/benchmarks/suite.{json,md,png}
    python bench/bench_suite.py --datasets iris wine --out /tmp/suite
    python bench/bench_suite.py --check    # the check sets: docs/benchmarks/check.*

``--check`` runs the same table on ``_datasets.CHECK_SETS``, six sets (d from 8 to 24,
2 to 10 classes) that no choice of a default has seen.
"""

import functools
import inspect
import sys

import numpy as np
from sklearn.base import BaseEstimator

import psdmetric
from _datasets import CHECK_SETS, SUITE
from _folds import ANCHORS, N_SPLITS, suite_data
from _harness import Case, kept_cells, main
from _render._text import se_or_zero
from _render.suite import CPU_TARGET_SECONDS, EUCLIDEAN, MAX_TARGET_FEATURES


def psdmetric_learners():
    """Metric learners exported by psdmetric: estimator classes with fit and transform."""
    return [name for name in psdmetric.__all__
            if inspect.isclass(candidate := getattr(psdmetric, name))
            and issubclass(candidate, BaseEstimator) and hasattr(candidate, "fit")
            and hasattr(candidate, "transform")]


def build(learner):
    """The learner with its defaults and ``random_state=0``."""
    estimator = getattr(psdmetric, learner)()
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator


def datasets(args):
    available = CHECK_SETS if args.check else SUITE
    unknown = sorted(set(args.datasets or ()) - set(available))
    if unknown:
        raise SystemExit(f"--datasets: {', '.join(unknown)} not among the "
                         f"{'check sets' if args.check else 'suite sets'} (add or drop --check)")
    return [d for d in available if args.datasets is None or d in args.datasets]


def cases(args):
    """Euclidean, every psdmetric learner and every reference library, on each set."""
    methods = ([(EUCLIDEAN, None, "none")]
               + [(name, functools.partial(build, name), "psdmetric")
                  for name in psdmetric_learners()]
               + [(row, key, "reference") for key, (row, _) in ANCHORS.items()])
    return [Case(method, learner, dataset, into="cells", labels={"family": family})
            for dataset in datasets(args) for method, learner, family in methods]


def setup(args):
    shapes = {}
    for dataset in datasets(args):
        X, y, _ = suite_data(dataset)
        shapes[dataset] = {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                           "n_classes": int(len(np.unique(y)))}
    return {"budget": args.budget, "datasets": datasets(args), "check": args.check,
            "learners": psdmetric_learners(),
            "cells": kept_cells(args, "check" if args.check else "suite"),
            "dataset_shapes": shapes}


def not_worse_than_euclidean(results, cells):
    found = {}
    for learner in results["learners"]:
        done = [d for d in results["datasets"]
                if cells[learner, d]["n_folds_done"] == N_SPLITS]
        wins = [d for d in done
                if cells[learner, d]["error_mean"] <= cells[EUCLIDEAN, d]["error_mean"] + 1e-12]
        found[learner] = {"not_worse": len(wins), "of": len(done),
                          "worse_on": sorted(set(done) - set(wins))}
    return found


def against_references(results, cells):
    anchors = [row for row, _ in ANCHORS.values()]
    against = []
    for d in results["datasets"]:
        # A reference over budget or failed is compared on the folds it finished (two or more).
        finished = [cells[a, d] for a in anchors if cells[a, d]["n_folds_done"] >= 2]
        if not finished:
            against.append({"dataset": d, "reason": "nothing finished two folds"})
            continue
        theirs = min(finished, key=lambda c: c["error_mean"])
        k = theirs["n_folds_done"]
        ours = [(float(np.mean([f["error"] for f in cells[m, d]["folds"][:k]])), m)
                for m in results["learners"] if cells[m, d]["n_folds_done"] >= k]
        if not ours:
            against.append({"dataset": d, "reason": f"no learner finished {k} folds"})
            continue
        error, best = min(ours)
        se = se_or_zero(theirs["error_se"])
        against.append({
            "dataset": d, "folds_compared": k, "best_psdmetric": best,
            "best_psdmetric_error": error,
            "best_reference": theirs["method"], "best_reference_error": theirs["error_mean"],
            "best_reference_se": se,
            "within_one_se": bool(error <= theirs["error_mean"] + se + 1e-12),
            "strictly_better": bool(error < theirs["error_mean"] - 1e-12),
        })
    return against


def targets(results, args=None):
    """Against Euclidean, against metric-learn and scikit-learn, fitted rank, CPU time."""
    cells = {(c["method"], c["dataset"]): c for c in results["cells"]}
    shapes = results["dataset_shapes"]
    ours = [c for c in results["cells"] if c["family"] == "psdmetric" and c["folds"]]
    slow = [{"method": c["method"], "dataset": c["dataset"],
             "max_fit_cpu_seconds": max(f["fit_cpu_seconds"] for f in c["folds"])}
            for c in ours if shapes[c["dataset"]]["n_features"] <= MAX_TARGET_FEATURES
            and any(f["fit_cpu_seconds"] >= CPU_TARGET_SECONDS for f in c["folds"])]
    low_rank = [{"method": c["method"], "dataset": c["dataset"], "rank": c["rank_min"],
                 "n_features": shapes[c["dataset"]]["n_features"]}
                for c in ours if c["rank_min"] < min(shapes[c["dataset"]]["n_features"],
                                                     shapes[c["dataset"]]["n_classes"])]
    results["targets"] = {
        "not_worse_than_euclidean": not_worse_than_euclidean(results, cells),
        "against_references": against_references(results, cells),
        "over_cpu_target": slow, "rank_below_classes": low_rank}


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", choices=SUITE + CHECK_SETS)
    parser.add_argument("--check", action="store_true",
                        help="run the check sets (default: the suite); writes check.*")


if __name__ == "__main__":
    sys.exit(main(lambda args: "check" if args.check else "suite", cases, "suite",
                  add_arguments=add_arguments, setup=setup, finish=targets))
