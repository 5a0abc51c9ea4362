"""Model selection on pair data: GridSearchCV(PairsClassifier(LogDet())) vs metric-learn's ITML.

For each data set (digits, wine, breast_cancer; ``load_suite``), the samples are split
in half, stratified; a ``StandardScaler`` is fitted on the training half. Pairs are
drawn by ``pairs_from_labels`` among the training samples (ITML's 40·c² random pairs,
half similar, half dissimilar) and, as many, among the test samples. Both libraries
then do the same model selection on the training pairs: the slack weight ``gamma``
over ``GAMMAS``, 3-fold stratified cross-validation over pairs (the same folds),
ROC AUC of the negative learned distance, refit of the best ``gamma`` on all
training pairs, and ROC AUC on the test pairs.

- psdmetric: ``GridSearchCV(PairsClassifier(LogDet(random_state=0), preprocessor=X),
  {"learner__gamma": GAMMAS}, scoring="roc_auc")`` on index pairs.
- metric-learn 0.7.0: ``ITML(gamma=g, preprocessor=X)`` on the same index pairs, one
  fit per fold and ``gamma`` and one refit, through ``bench/_anchors.py`` (each fit in
  metric-learn's own virtual environment; its fold AUCs computed here from the
  learned transform).

Fit time is the sum of the wall (and CPU) times of every ``fit`` call of the search,
cross-validation fits and refit, timed inside the process that fits: for ITML this
leaves out the worker process's start-up and data transfer; for psdmetric it is
``GridSearchCV``'s own ``mean_fit_time × folds`` summed plus ``refit_time_``. The
whole ``GridSearchCV.fit`` (with scoring) is reported beside it. One thread for BLAS
on both sides.

Run ``python bench/bench_pairs.py`` (a few minutes); ``--quick`` uses iris and wine
with a two-value grid and writes to a scratch directory.
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _datasets import load_suite  # noqa: E402
from _harness import Case, main, run_anchor  # noqa: E402
from _render.pairs import N_FOLDS  # noqa: E402

from psdmetric import LogDet, PairsClassifier, pairs_from_labels  # noqa: E402

DATASETS = ("digits", "wine", "breast_cancer")
QUICK_DATASETS = ("iris", "wine")
GAMMAS = (0.01, 0.1, 1.0, 10.0, 100.0)
QUICK_GAMMAS = (0.1, 1.0)
TARGET_SPEEDUP = 10.0


def pair_data(name):
    """Scaled training and test samples and their labelled index pairs."""
    X, y = load_suite(name)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X_train)
    n_pairs = 40 * len(np.unique(y)) ** 2
    train = pairs_from_labels(y_train, n_pairs, random_state=0)
    test = pairs_from_labels(y_test, n_pairs, random_state=1)
    return (scaler.transform(X_train), train.pairs, train.labels,
            scaler.transform(X_test), test.pairs, test.labels)


def negative_distance_auc(components, X, pairs, labels):
    embedded = X @ components.T
    distances = np.linalg.norm(embedded[pairs[:, 0]] - embedded[pairs[:, 1]], axis=1)
    return roc_auc_score(labels, -distances)


def run_psdmetric(X, pairs, labels, X_test, test_pairs, test_labels, folds, gammas):
    search = GridSearchCV(
        PairsClassifier(LogDet(random_state=0), preprocessor=X),
        {"learner__gamma": list(gammas)}, cv=folds, scoring="roc_auc")
    wall, cpu = time.perf_counter(), time.process_time()
    search.fit(pairs, labels)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    fit_seconds = float(np.sum(search.cv_results_["mean_fit_time"]) * len(folds)
                        + search.refit_time_)
    # GridSearchCV times fits by wall clock only: time the same (deterministic) fits
    # again for their CPU time.
    fit_cpu_seconds = 0.0
    for gamma in gammas:
        for train, _ in [*folds, (np.arange(len(pairs)), None)]:
            cpu_start = time.process_time()
            PairsClassifier(LogDet(gamma=gamma, random_state=0), preprocessor=X).fit(
                pairs[train], labels[train])
            fit_cpu_seconds += time.process_time() - cpu_start
    best = search.best_estimator_
    test_auc = negative_distance_auc(best.learner_.components_, X_test, test_pairs,
                                     test_labels)
    return {"best_gamma": search.best_params_["learner__gamma"],
            "cv_auc": list(search.cv_results_["mean_test_score"]),
            "test_auc": test_auc, "fit_seconds": fit_seconds,
            "fit_cpu_seconds": fit_cpu_seconds,
            "search_seconds": wall, "search_cpu_seconds": cpu}


def run_itml(X, pairs, labels, X_test, test_pairs, test_labels, folds, gammas):
    fit_seconds = fit_cpu_seconds = 0.0
    cv_auc = []
    for gamma in gammas:
        scores = []
        for train, validation in folds:
            result = run_anchor("metric_learn:ITML", X, pairs=pairs[train],
                                pair_labels=labels[train], params={"gamma": gamma})
            fit_seconds += result.fit_seconds
            fit_cpu_seconds += result.fit_cpu_seconds
            scores.append(negative_distance_auc(result.components, X, pairs[validation],
                                                labels[validation]))
        cv_auc.append(float(np.mean(scores)))
    # GridSearchCV's rule: the first of the best mean scores.
    best_gamma = gammas[int(np.argmax(cv_auc))]
    result = run_anchor("metric_learn:ITML", X, pairs=pairs, pair_labels=labels,
                        params={"gamma": best_gamma})
    fit_seconds += result.fit_seconds
    fit_cpu_seconds += result.fit_cpu_seconds
    return {"best_gamma": best_gamma, "cv_auc": cv_auc,
            "test_auc": negative_distance_auc(result.components, X_test, test_pairs,
                                              test_labels),
            "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
            "versions": result.versions}


def pair_row(name, gammas):
    """Both libraries' grid search on ``name``'s pairs."""
    with threadpool_limits(1):
        X, pairs, labels, X_test, test_pairs, test_labels = pair_data(name)
        folds = list(StratifiedKFold(N_FOLDS, shuffle=True, random_state=0).split(
            pairs, labels))
        data = (X, pairs, labels, X_test, test_pairs, test_labels, folds, gammas)
        ours, theirs = run_psdmetric(*data), run_itml(*data)
    row = {"name": name, "n_samples_train": len(X), "n_features": X.shape[1],
           "n_train_pairs": len(pairs), "n_test_pairs": len(test_pairs),
           "psdmetric": ours, "itml": theirs,
           "wall_ratio": theirs["fit_seconds"] / ours["fit_seconds"],
           "cpu_ratio": theirs["fit_cpu_seconds"] / ours["fit_cpu_seconds"]}
    row["auc_at_least_itml"] = ours["test_auc"] >= theirs["test_auc"]
    row["ten_times_faster"] = row["wall_ratio"] >= TARGET_SPEEDUP
    print(f"{name}: AUC {ours['test_auc']:.4f} vs {theirs['test_auc']:.4f}, fit "
          f"{ours['fit_seconds']:.2f} s vs {theirs['fit_seconds']:.2f} s "
          f"({row['wall_ratio']:.1f}x wall, {row['cpu_ratio']:.1f}x CPU)", flush=True)
    return row


def cases(args):
    datasets = QUICK_DATASETS if args.quick else DATASETS
    return [Case(name, protocol=pair_row, params={"name": name, "gammas": GAMMAS},
                 quick={"gammas": QUICK_GAMMAS}, into="datasets") for name in datasets]


if __name__ == "__main__":
    sys.exit(main("pairs", cases, setup=lambda args: {
        "gammas": list(QUICK_GAMMAS if args.quick else GAMMAS), "n_folds": N_FOLDS,
        "datasets": []}))
