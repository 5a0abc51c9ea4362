"""PSDBoost's defaults chosen by leave-one-data-set-out over the development suite.

For every suite set (``_datasets.SUITE``, at most 2,000 rows) and every candidate
setting, a stratified 5-fold cross-validation (``random_state=0``) of
``StandardScaler → PSDBoost → KNeighborsClassifier(5)`` gives the test error, the
fitted rank and the fit time (wall and CPU). A setting is (ν, rank fraction, tol,
shrinkage): ``C = 1 / (ν n_triplets)``, ``min_rank = ⌈fraction · n_features⌉`` (at
most 32), triplets from ``triplets_from_labels`` with 3 target neighbours, at most
5,000.

Leave-one-data-set-out: a setting's score on a set is the mean over the folds of
``log((error + ε) / (Euclidean error + ε))``, as for the other learners'
(``bench_defaults``); for each set, the setting with the best mean score on the
*other* sets is chosen and scored on the held-out set; the table reports those
held-out scores. The default is the setting chosen on all sets.
Euclidean errors and, when present, the anchors of ``/tmp/anchor_cache`` (written by
``bench_suite.py``) are shown for reference.

Every fold result is appended to ``<out>/psdboost_defaults_folds.jsonl`` and reused,
so an interrupted run resumes.

    python bench/bench_psdboost_defaults.py              # docs/benchmarks/psdboost_defaults.*
    python bench/bench_psdboost_defaults.py --datasets iris wine --out /tmp/psdb
"""

import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _datasets import SUITE, load_suite
from _harness import Case, main
from _render.psdboost_defaults import MAX_RANK, MAX_TRIPLETS, N_NEIGHBORS
from _reporting import log_error_ratio, mean_and_standard_error
from psdmetric import PSDBoost, triplets_from_labels

# (ν, rank fraction, tol, shrinkage): the SDP as printed at three tolerances, then the
# Euclidean share of the trace at the middle one, then the best of those at the others.
SETTINGS = ([(nu, fraction, tol, 0.0) for nu in (0.3, 0.5) for fraction in (0.25, 0.5)
             for tol in (1e-2, 3e-2, 1e-1)]
            + [(nu, fraction, 3e-2, shrinkage) for nu in (0.3, 0.5)
               for fraction in (0.25, 0.5) for shrinkage in (0.05, 0.1, 0.25)]
            + [(0.3, 0.25, tol, 0.05) for tol in (1e-2, 1e-1)])
ANCHORS = ("ITML_Supervised", "LMNN", "NCA")
ANCHOR_CACHE = Path("/tmp/anchor_cache")


def fit_fold(X_train, y_train, X_test, y_test, setting):
    nu, fraction, tol, shrinkage = setting
    start, cpu = time.perf_counter(), time.process_time()
    triplets = triplets_from_labels(X_train, y_train, N_NEIGHBORS, MAX_TRIPLETS,
                                    random_state=0)
    n_triplets = len(triplets.triplets)
    min_rank = min(MAX_RANK, math.ceil(fraction * X_train.shape[1]))
    learner = PSDBoost(C=min(1.0, 1.0 / (nu * n_triplets)), min_rank=min_rank,
                       shrinkage=shrinkage, tol=tol, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        learner.fit(X_train, constraints=triplets)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    knn = KNeighborsClassifier(5).fit(learner.transform(X_train), y_train)
    eigenvalues = np.linalg.eigvalsh(learner.get_mahalanobis_matrix())
    return {
        "error": 1.0 - knn.score(learner.transform(X_test), y_test),
        "rank": int((eigenvalues > 1e-3 * eigenvalues.max()).sum()),
        "fit_seconds": seconds, "fit_cpu_seconds": cpu_seconds,
        "n_iter": learner.n_iter_, "n_triplets": n_triplets,
        "warnings": sorted({str(w.message)[:80] for w in caught}),
    }


def run_set(name, folds_file, done):
    X, y = load_suite(name)
    splits = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(X, y)
    for fold, (train, test) in enumerate(splits):
        scaler = StandardScaler().fit(X[train])
        X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
        jobs = [("euclidean", None)] + [("psdboost", s) for s in SETTINGS]
        for method, setting in jobs:
            key = (name, fold, method, None if setting is None else list(setting))
            if json.dumps(key) in done:
                continue
            if setting is None:
                knn = KNeighborsClassifier(5).fit(X_train, y[train])
                record = {"error": 1.0 - knn.score(X_test, y[test])}
            else:
                record = fit_fold(X_train, y[train], X_test, y[test], setting)
            record.update(set=name, fold=fold, method=method, setting=key[3],
                          n_samples=len(X), n_features=X.shape[1])
            print(json.dumps(record), flush=True)
            with open(folds_file, "a") as stream:
                stream.write(json.dumps(record) + "\n")
            done.add(json.dumps(key))


def anchor_errors(name):
    """Mean and standard error of each cached anchor over the five folds (if all there)."""
    found = {}
    for method in ANCHORS:
        errors = []
        for fold in range(5):
            path = ANCHOR_CACHE / f"{name}__{fold}__{method}.json"
            if path.exists():
                errors.append(json.loads(path.read_text()).get("error"))
        if len(errors) == 5 and all(e is not None for e in errors):
            found[method] = mean_and_standard_error(errors)
    return found


def summarise(records, names):
    def fold_errors(name, method, setting=None):
        rows = [r for r in records if r["set"] == name and r["method"] == method
                and (setting is None or r["setting"] == list(setting))]
        return sorted(rows, key=lambda r: r["fold"])

    scores = {}  # (set, setting) -> mean log error ratio against Euclidean
    for name in names:
        euclidean = [r["error"] for r in fold_errors(name, "euclidean")]
        for setting in SETTINGS:
            rows = fold_errors(name, "psdboost", setting)
            if len(rows) == 5:
                scores[name, setting] = log_error_ratio([r["error"] for r in rows],
                                                        euclidean)
    complete = [n for n in names if all((n, s) in scores for s in SETTINGS)]

    def choose(sets):
        return min(SETTINGS, key=lambda s: np.mean([scores[n, s] for n in sets]))

    table = []
    for name in complete:
        chosen = choose([n for n in complete if n != name])
        rows = fold_errors(name, "psdboost", chosen)
        euclidean = [r["error"] for r in fold_errors(name, "euclidean")]
        table.append({
            "set": name, "n_samples": rows[0]["n_samples"],
            "n_features": rows[0]["n_features"], "chosen": list(chosen),
            "error": mean_and_standard_error([r["error"] for r in rows]),
            "euclidean": mean_and_standard_error(euclidean),
            "ranks": [r["rank"] for r in rows],
            "fit_seconds": float(np.mean([r["fit_seconds"] for r in rows])),
            "fit_cpu_seconds": float(np.mean([r["fit_cpu_seconds"] for r in rows])),
            "n_iter": [r["n_iter"] for r in rows],
            "warnings": sorted({w for r in rows for w in r["warnings"]}),
            "references": anchor_errors(name),
        })
    overall = choose(complete) if complete else None
    mean_scores = {str(list(s)): float(np.mean([scores[n, s] for n in complete]))
                   for s in SETTINGS} if complete else {}
    return table, overall, mean_scores


def fold_records(datasets, folds_file):
    """Fit what ``folds_file`` lacks; the number of fold records it then holds."""
    records = read_records(folds_file)
    done = {json.dumps((r["set"], r["fold"], r["method"], r["setting"])) for r in records}
    with threadpool_limits(1):
        for name in datasets:
            run_set(name, folds_file, done)
    return len(read_records(folds_file))


def read_records(folds_file):
    if not folds_file.exists():
        return []
    return [json.loads(line) for line in folds_file.read_text().splitlines() if line]


def cases(args):
    args.out.mkdir(parents=True, exist_ok=True)
    return [Case("n_fold_records", protocol=fold_records,
                 params={"datasets": args.datasets,
                         "folds_file": args.out / "psdboost_defaults_folds.jsonl"})]


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=list(SUITE))


def summary(results, args):
    table, overall, mean_scores = summarise(
        read_records(args.out / "psdboost_defaults_folds.jsonl"), args.datasets)
    results.update(table=table, default=overall, mean_scores=mean_scores)


if __name__ == "__main__":
    sys.exit(main("psdboost_defaults", cases, add_arguments=add_arguments,
                  setup=lambda args: {"settings": SETTINGS}, finish=summary))
