"""The suite protocol: data, folds, one fold's fit, its cache, and a (method, set) cell.

A (data set, fold) is ``load_suite(name)`` split by
``StratifiedKFold(5, shuffle=True, random_state=0)``; the training fold fits a
``StandardScaler`` (a ``PowerTransformer`` for a name ``"<set>@power"``), the learner is
fitted on the scaled training fold, and ``KNeighborsClassifier(5)`` in the learned space
gives the test error. Each fold's result is a small dict (``error``, ``fit_seconds``,
``fit_cpu_seconds``, ``rank``, ``n_iter``, ``warnings``) cached as one JSON file, so
that reruns and other benchmarks reuse it:

- anchors (metric-learn 0.7.0 and scikit-learn through ``_anchors.run_anchor``) in
  ``ANCHOR_CACHE/{set}__{fold}__{method}.json``, ``method`` one of ``ANCHORS``' keys;
- psdmetric learners in ``LEARNER_CACHE/{set}__{fold}__{learner}__{digest}.json``,
  ``digest`` a hash of the learner's parameters and of ``LEARNER_CODE``.

``kfold_cell(dataset, learner, budget)`` gathers the folds of one (method, data set)
cell within a time budget: the ``"kfold_knn"`` protocol of ``_harness``.
"""

import functools
import hashlib
import math
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import PowerTransformer, StandardScaler

from _anchors import AnchorFitError, run_anchor
from _datasets import load_suite
from _reporting import (jsonable, knn_error, mean_and_standard_error, read_json,
                        run_with_time_limit, utc_text, write_json)

N_SPLITS = 5
N_NEIGHBORS = 5
ANCHOR_CACHE = Path("/tmp/anchor_cache")
LEARNER_CACHE = Path("/tmp/psdmetric_suite_cache")
# A learner's entry changes whenever its code changes what it fits: its cached folds go stale.
# "sampler-1": random pairs stop drawing once the labels' distinct pairs run out, which
# changes the draws that run out: the CV learners' random pairs on ais, LSML's quadruplets.
LEARNER_CODE = {
    "DefiniteBoost": "slack-3",
    "KernelPOLA": "pola-9",
    "LFDA": "auto-50-k20-span-3",
    "LMNN": "lbfgs-6-kernel-1",
    "LogDet": "span-1",
    "LogDetCV": "cv-7-span-1-sampler-1",
    "LSML": "sampler-1",
    "MEG": "targets-1",
    "MLKR": "symmetric-4-steps-15",
    "MMC": "spg-2-syrk-1",
    "OnlineLogDet": "online-5",
    "POLA": "pola-9",
    "PSDBoost": "psdboost-5",
    "RCA": "auto-25-span-3",
    "SCML": "no-change-1",
    "SDML": "auto-balance-1",
    "VonNeumann": "lanczos-4",
    "VonNeumannCV": "cv-8-lanczos-4-sampler-1",
}

# A data set name ending in "@power" has the same folds scaled by scikit-learn's
# PowerTransformer (Yeo-Johnson, then standardised) in place of the StandardScaler.
SCALERS = {"": StandardScaler, "power": PowerTransformer}

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
    """The scaling step, fitted on the training fold: ``Xtr, Xte, ytr, yte``.

    ``StandardScaler``, or ``PowerTransformer`` for ``"<set>@power"``.
    """
    dataset, _, scaling = name.partition("@")
    X, y, folds = suite_data(dataset)
    train, test = folds[fold]
    scaler = SCALERS[scaling]().fit(X[train])
    return scaler.transform(X[train]), scaler.transform(X[test]), y[train], y[test]


def fitted_rank(metric):
    """Eigenvalues of the Mahalanobis matrix above ``RANK_TOLERANCE`` × the largest."""
    eigenvalues = np.linalg.eigvalsh(np.asarray(metric, dtype=float))
    return int(np.sum(eigenvalues > RANK_TOLERANCE * max(eigenvalues.max(), 0.0)))


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
                           result.transform(X_test), y_test, N_NEIGHBORS),
        "fit_seconds": result.fit_seconds, "fit_cpu_seconds": result.fit_cpu_seconds,
        "rank": fitted_rank(result.metric), "n_iter": result.n_iter,
        "warnings": sorted(set(result.warnings))[:3], "versions": result.versions,
        "measured_at": utc_text(time.time()),
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
                           learner.transform(X_test), y_test, N_NEIGHBORS),
        "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
        "rank": fitted_rank(learner.get_mahalanobis_matrix()),
        "n_iter": jsonable(getattr(learner, "n_iter_", None)),
        "warnings": sorted({f"{w.category.__name__}: {w.message}"[:160] for w in caught})[:3],
    }
    write_json(path, record)
    return record


def learner_folds(dataset, estimator):
    """Child process: every fold of ``estimator`` (each cached as it finishes)."""
    return [learner_fold(dataset, fold, estimator) for fold in range(N_SPLITS)]


def euclidean_folds(dataset):
    """The folds of plain 5-NN on the scaled features (no learner)."""
    records = []
    for fold in range(N_SPLITS):
        X_train, X_test, y_train, y_test = scaled_fold(dataset, fold)
        records.append({"error": knn_error(X_train, y_train, X_test, y_test, N_NEIGHBORS),
                        "fit_seconds": 0.0, "fit_cpu_seconds": 0.0,
                        "rank": X_train.shape[1]})
    return records


def without_failures(records):
    """The finished folds, status "failed" with the first failure's message, or None."""
    failed = [r["failed"] for r in records if r["error"] is None]
    if failed:
        return [r for r in records if r["error"] is not None], "failed", failed[0]
    return None


def anchor_cell_status(dataset, method, budget, fit_anchors):
    """An anchor's fold records on ``dataset``, its status and a note."""
    records = anchor_cell(dataset, method, budget, fit=fit_anchors)
    failure = without_failures(records)
    if failure:
        return failure
    if len(records) < N_SPLITS:
        marker = read_json(over_budget_path(dataset, method))
        return records, "over budget", (f"{marker['budget_seconds']:.0f} s budget"
                                        if marker else "not run")
    return records, "ok", ""


def learner_cell_status(dataset, estimator, budget):
    """A psdmetric learner's fold records (fitted in a child killed after ``budget``)."""
    paths = [learner_path(dataset, fold, estimator) for fold in range(N_SPLITS)]
    cached = [read_json(path) for path in paths]
    if all(record is not None for record in cached):
        return cached, "ok", ""
    outcome, value = run_with_time_limit(learner_folds, (dataset, estimator), budget)
    if outcome == "ok":
        return without_failures(value) or (value, "ok", "")
    # Folds finished before the limit are in the cache.
    finished = [read_json(path) for path in paths]
    finished = finished[:next((i for i, r in enumerate(finished) if r is None), N_SPLITS)]
    return finished, "over budget" if outcome == "timeout" else "failed", value


def kfold_cell(dataset, learner, budget, fit_anchors=True):
    """One (method, data set) cell: ``{"folds", "status", "note"}`` and its summary.

    ``learner`` is ``None`` (Euclidean), an ``ANCHORS`` key, or a psdmetric estimator.
    """
    if learner is None:
        records, status, note = euclidean_folds(dataset), "ok", ""
    elif isinstance(learner, str):
        records, status, note = anchor_cell_status(dataset, learner, budget, fit_anchors)
    else:
        records, status, note = learner_cell_status(dataset, learner, budget)
    cell = {"folds": records, "status": status, "note": note,
            "n_folds_done": len(records)}
    cell["error_mean"], cell["error_se"] = mean_and_standard_error(
        [f["error"] for f in records])
    for key in ("fit_seconds", "fit_cpu_seconds"):
        cell[f"{key}_mean"] = (float(np.mean([f[key] for f in records])) if records
                               else math.nan)
    cell["rank_min"] = min((f["rank"] for f in records), default=None)
    return cell
