"""LogDetCV on the development suite against metric-learn 0.7.0 and scikit-learn's NCA.

Protocol (shared with ``bench_suite.py``): each suite set (``load_suite``, n ≤ 2,000)
is split by ``StratifiedKFold(5, shuffle=True, random_state=0)``; a ``StandardScaler``
is fitted on the training fold, then the learner, then ``KNeighborsClassifier(5)`` in
the learned space gives the test error. ``LogDetCV(random_state=0)`` runs with its
defaults (its own inner 5-fold search over γ and the pair scheme), except that sets
with more than ``MAX_RANK`` features get ``n_components=MAX_RANK`` (a rank-64 metric in
the leading principal directions): a full-rank LogDet costs O(d²) per projection.
The reference learners (metric-learn ``ITML_Supervised``, ``LMNN``, ``NCA`` and scikit-learn's
``NeighborhoodComponentsAnalysis``, defaults, ``random_state=0``) run through
``_anchors.run_anchor``; every reference fold is cached as one JSON file in
``ANCHOR_CACHE`` and reused by every suite benchmark, LogDetCV folds in ``CV_CACHE``.

    python bench/bench_cv.py                     # writes docs/benchmarks/cv.{json,md,png}
    python bench/bench_cv.py --datasets iris wine --out /tmp/cv
    python bench/bench_cv.py --cached-references    # no reference fits: only cached folds
    python bench/bench_cv.py --quick             # iris and wine, to a scratch directory
"""

import hashlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from _datasets import SUITE
from _folds import (ANCHORS, N_SPLITS, anchor_fold, anchor_path, fitted_rank,
                    over_budget_path, scaled_fold, suite_data)
from _harness import Case, knn_error, main, read_json, write_json
from _render.cv import MAX_RANK
from _reporting import mean_and_standard_error
from psdmetric import LogDetCV

CV_CACHE = Path("/tmp/psdmetric_cv_cache")
# Change whenever a change to psdmetric changes what LogDetCV fits: cached folds go stale.
CV_CODE = 8


def cv_learner(n_features):
    n_components = MAX_RANK if n_features > MAX_RANK else None
    return LogDetCV(n_components=n_components, random_state=0)


def cv_fold(name, fold):
    """One outer fold of LogDetCV, from ``CV_CACHE`` or fitted and cached."""
    X_train, X_test, y_train, y_test = scaled_fold(name, fold)
    learner = cv_learner(X_train.shape[1])
    digest = hashlib.sha1(repr((sorted(learner.get_params().items()), CV_CODE)).encode())
    path = CV_CACHE / f"{name}__{fold}__LogDetCV__{digest.hexdigest()[:12]}.json"
    cached = read_json(path)
    if cached is not None:
        return cached
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wall, cpu = time.perf_counter(), time.process_time()
        learner.fit(X_train, y_train)
        fit_seconds, fit_cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    record = {
        "error": knn_error(learner.transform(X_train), y_train,
                           learner.transform(X_test), y_test),
        "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
        "rank": fitted_rank(learner.get_mahalanobis_matrix()),
        "best_params": learner.best_params_, "best_score": learner.best_score_,
        "warnings": sorted({f"{w.category.__name__}: {w.message}"[:160] for w in caught})[:3],
    }
    write_json(path, record)
    return record


def reference_fold(name, fold, method, timeout, cached_only):
    """One reference fold from ``ANCHOR_CACHE``, or fitted (and cached) unless ``cached_only``.

    ``None`` when it is not cached and not fitted (cached only, marked over budget by the
    suite benchmark, or killed after ``timeout`` seconds) or when its fit raised.
    """
    if cached_only or over_budget_path(name, method).exists():
        record = read_json(anchor_path(name, fold, method))
    else:
        record = anchor_fold(name, fold, method, timeout=timeout)
    return None if record is not None and record["error"] is None else record


def summarise(name, records):
    """Per-set comparison: LogDetCV against the best reference learner, on its folds."""
    cv, anchors, euclidean = records["LogDetCV"], records["references"], records["Euclidean"]
    complete = {method: folds for method, folds in anchors.items()
                if any(f is not None for f in folds)}
    row = {"data": name, "Euclidean": mean_and_standard_error(euclidean),
           "LogDetCV": mean_and_standard_error([r["error"] for r in cv])}
    for method, folds in anchors.items():
        errors = [f["error"] for f in folds if f is not None]
        row[method] = {"folds": len(errors), "error": mean_and_standard_error(errors)}
    if not complete:
        row["best_reference"] = None
        return row
    best = min(complete, key=lambda m: mean_and_standard_error(
        [f["error"] for f in complete[m] if f is not None])[0])
    on = [i for i, f in enumerate(complete[best]) if f is not None]
    best_mean, best_se = mean_and_standard_error([complete[best][i]["error"] for i in on])
    ours = float(np.mean([cv[i]["error"] for i in on]))
    row.update(best_reference=best, best_reference_folds=len(on), best_reference_error=best_mean,
               best_reference_se=best_se, cv_error_on_those_folds=ours,
               within_one_se=bool(ours <= best_mean + (0.0 if np.isnan(best_se) else best_se)),
               strictly_better=bool(ours < best_mean))
    lmnn = [i for i, f in enumerate(anchors["LMNN"]) if f is not None]
    if lmnn:
        for unit in ("fit_seconds", "fit_cpu_seconds"):
            row[f"lmnn_{unit}"] = float(np.mean([anchors["LMNN"][i][unit] for i in lmnn]))
            row[f"cv_{unit}"] = float(np.mean([cv[i][unit] for i in lmnn]))
            row[f"time_ratio_{unit}"] = row[f"cv_{unit}"] / row[f"lmnn_{unit}"]
    return row


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=list(SUITE), choices=SUITE)
    parser.add_argument("--anchor-timeout", type=float, default=900.0,
                        help="seconds before a reference fold that is not cached is killed")


def records(datasets, anchor_timeout, cached_only):
    """Every set's LogDetCV, Euclidean and reference folds."""
    found = {}
    for name in datasets:
        X, y, folds = suite_data(name)
        found[name] = {"shape": [*X.shape, int(len(np.unique(y)))], "LogDetCV": [],
                       "Euclidean": []}
        for fold in range(len(folds)):
            found[name]["LogDetCV"].append(cv_fold(name, fold))
            X_train, X_test, y_train, y_test = scaled_fold(name, fold)
            found[name]["Euclidean"].append(knn_error(X_train, y_train, X_test, y_test))
            print(f"{name} fold {fold}: LogDetCV {found[name]['LogDetCV'][-1]}", flush=True)
    # References last: the suite benchmark may have cached them meanwhile.
    for name in datasets:
        found[name]["references"] = {}
        for method in ANCHORS:
            cell = []
            for fold in range(N_SPLITS):
                # After a fold that was not cached and could not be fitted, fit no more.
                fit = not cached_only and (not cell or cell[-1] is not None)
                cell.append(reference_fold(name, fold, method, anchor_timeout,
                                           cached_only=not fit))
            found[name]["references"][method] = cell
        print(f"{name}: references done", flush=True)
    return found


def cases(args):
    return [Case("records", protocol=records,
                 params={"datasets": args.datasets, "anchor_timeout": args.anchor_timeout,
                         "cached_only": args.cached_references},
                 quick={"datasets": ["iris", "wine"]})]


def rows(results, args=None):
    results["rows"] = [summarise(name, records) for name, records in results["records"].items()]


if __name__ == "__main__":
    sys.exit(main("cv", cases, add_arguments=add_arguments, finish=rows))
