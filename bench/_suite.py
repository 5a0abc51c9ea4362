"""The suite protocol every suite benchmark shares: data, folds, one fold's fit, caches.

A (data set, fold) is ``load_suite(name)`` split by
``StratifiedKFold(5, shuffle=True, random_state=0)``; the training fold fits a
``StandardScaler``, the learner is fitted on the scaled training fold, and
``KNeighborsClassifier(5)`` in the learned space gives the test error. Each fold's
result is a small dict (``error``, ``fit_seconds``, ``fit_cpu_seconds``, ``rank``,
``n_iter``, ``warnings``) cached as one JSON file, so that reruns and other benchmarks
reuse it:

- anchors (metric-learn 0.7.0 and scikit-learn through ``_anchors.run_anchor``) in
  ``ANCHOR_CACHE/{set}__{fold}__{method}.json``, ``method`` one of ``ANCHORS``' keys;
- psdmetric learners in ``LEARNER_CACHE/{set}__{fold}__{learner}__{digest}.json``,
  ``digest`` a hash of the learner's parameters and of ``LEARNER_CODE``.
"""

import functools
import hashlib
import json
import os
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from _anchors import AnchorFitError, run_anchor
from _datasets import load_suite
from _reporting import jsonable

N_SPLITS = 5
N_NEIGHBORS = 5
ANCHOR_CACHE = Path("/tmp/anchor_cache")
LEARNER_CACHE = Path("/tmp/psdmetric_suite_cache")
# A learner's entry changes whenever its code changes what it fits: its cached folds go stale.
LEARNER_CODE = {
    "DefiniteBoost": "slack-3",
    "KernelPOLA": "pola-5",
    "LogDet": "span-1",
    "LogDetCV": "cv-4-span-1",
    "MEG": "online-4",
    "OnlineLogDet": "online-5",
    "POLA": "pola-4",
    "PSDBoost": "psdboost-4",
    "VonNeumann": "lanczos-4",
    "VonNeumannCV": "cv-4-lanczos-4",
}

# Cache name: (table row, "module:Class"), every anchor with its defaults and seed 0.
ANCHORS = {
    "ITML_Supervised": ("metric-learn ITML_Supervised", "metric_learn:ITML_Supervised"),
    "LMNN": ("metric-learn LMNN", "metric_learn:LMNN"),
    "NCA": ("metric-learn NCA", "metric_learn:NCA"),
    "sklearn_NCA": ("scikit-learn NCA",
                    "sklearn.neighbors:NeighborhoodComponentsAnalysis"),
}
# A metric with fewer eigenvalues above this fraction of the largest has lost rank.
RANK_TOLERANCE = 1e-6


@functools.lru_cache(maxsize=None)
def suite_data(name):
    """``(X, y, folds)`` of a suite data set under the protocol's folds."""
    X, y = load_suite(name)
    folds = tuple(StratifiedKFold(N_SPLITS, shuffle=True, random_state=0).split(X, y))
    return X, y, folds


def scaled_fold(name, fold):
    """The StandardScaler step, fitted on the training fold: ``Xtr, Xte, ytr, yte``."""
    X, y, folds = suite_data(name)
    train, test = folds[fold]
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), scaler.transform(X[test]), y[train], y[test]


def knn_error(Z_train, y_train, Z_test, y_test):
    """Test error of ``KNeighborsClassifier(5)`` in the learned space."""
    model = KNeighborsClassifier(N_NEIGHBORS).fit(Z_train, y_train)
    return float(1.0 - model.score(Z_test, y_test))


def fitted_rank(metric):
    """Eigenvalues of the Mahalanobis matrix above ``RANK_TOLERANCE`` × the largest."""
    eigenvalues = np.linalg.eigvalsh(np.asarray(metric, dtype=float))
    return int(np.sum(eigenvalues > RANK_TOLERANCE * max(eigenvalues.max(), 0.0)))


def read_json(path):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None


def write_json(path, value):
    """Write through a temporary name and ``os.replace``: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(value))
    os.replace(temporary, path)


def anchor_path(name, fold, method):
    return ANCHOR_CACHE / f"{name}__{fold}__{method}.json"


def anchor_fold(name, fold, method, timeout=None):
    """One anchor fold, from the cache or fitted (and cached); ``None`` on a timeout.

    A fold whose fit raised is cached as ``{"error": None, "failed": message}``: the
    anchors are deterministic, so a rerun would raise again.
    """
    path = anchor_path(name, fold, method)
    cached = read_json(path)
    if cached is not None:
        return cached
    X_train, X_test, y_train, y_test = scaled_fold(name, fold)
    try:
        result = run_anchor(ANCHORS[method][1], X_train, y_train,
                            params={"random_state": 0}, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    except AnchorFitError as exc:
        record = {"error": None, "failed": str(exc)[:300]}
        write_json(path, record)
        return record
    record = {
        "error": knn_error(result.transform(X_train), y_train,
                           result.transform(X_test), y_test),
        "fit_seconds": result.fit_seconds, "fit_cpu_seconds": result.fit_cpu_seconds,
        "rank": fitted_rank(result.metric), "n_iter": result.n_iter,
        "warnings": sorted(set(result.warnings))[:3], "versions": result.versions,
    }
    write_json(path, record)
    return record


def over_budget_path(name, method):
    return ANCHOR_CACHE / f"{name}__{method}__over_budget.json"


def anchor_cell(name, method, budget, fit=True):
    """Every fold of an anchor on a data set within ``budget`` seconds of fitting.

    A fold starts only if one as long as the slowest so far would end within the
    budget, and is killed at what is left of it; a cell that ran out is marked in the
    cache so that reruns do not retry it. A fold whose fit raised ends the cell. With
    ``fit=False`` only cached folds are read. Returns the fold records it has, in
    order, the failed one last.
    """
    if not fit:
        folds = [read_json(anchor_path(name, fold, method)) for fold in range(N_SPLITS)]
        folds = folds[:next((i for i, r in enumerate(folds) if r is None), N_SPLITS)]
        return folds[:next((i + 1 for i, r in enumerate(folds) if r["error"] is None),
                           N_SPLITS)]
    records, spent, slowest = [], 0.0, 0.0
    marker = read_json(over_budget_path(name, method))
    for fold in range(N_SPLITS):
        cached = read_json(anchor_path(name, fold, method))
        if cached is None:
            if marker is not None or spent + slowest > budget:
                break
            start = time.perf_counter()
            cached = anchor_fold(name, fold, method, timeout=max(budget - spent, 1.0))
            seconds = time.perf_counter() - start
            spent, slowest = spent + seconds, max(slowest, seconds)
            if cached is None:
                write_json(over_budget_path(name, method),
                           {"budget_seconds": budget, "folds_done": len(records)})
                break
        records.append(cached)
        if cached["error"] is None:
            return records
    if len(records) < N_SPLITS and marker is None and read_json(
            over_budget_path(name, method)) is None:
        write_json(over_budget_path(name, method),
                   {"budget_seconds": budget, "folds_done": len(records)})
    return records


def learner_digest(estimator):
    """Hash of the estimator's class, parameters and its ``LEARNER_CODE`` entry."""
    text = repr((type(estimator).__name__, sorted(estimator.get_params(deep=False).items(),
                                                  key=lambda item: item[0]),
                 LEARNER_CODE.get(type(estimator).__name__)))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def learner_path(name, fold, estimator):
    return (LEARNER_CACHE / f"{name}__{fold}__{type(estimator).__name__}__"
            f"{learner_digest(estimator)}.json")


def learner_fold(name, fold, estimator):
    """One psdmetric fold (a clone of ``estimator`` is fitted), from the cache or fitted."""
    from sklearn.base import clone

    path = learner_path(name, fold, estimator)
    cached = read_json(path)
    if cached is not None:
        return cached
    X_train, X_test, y_train, y_test = scaled_fold(name, fold)
    learner = clone(estimator)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            learner.fit(X_train, y_train)
        except Exception as exc:  # reported in the table, never dropped
            return {"error": None, "failed": f"{type(exc).__name__}: {exc}"[:300]}
        fit_seconds, fit_cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    record = {
        "error": knn_error(learner.transform(X_train), y_train,
                           learner.transform(X_test), y_test),
        "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
        "rank": fitted_rank(learner.get_mahalanobis_matrix()),
        "n_iter": jsonable(getattr(learner, "n_iter_", None)),
        "warnings": sorted({f"{w.category.__name__}: {w.message}"[:160] for w in caught})[:3],
    }
    write_json(path, record)
    return record
