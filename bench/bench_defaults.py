"""Leave-one-data-set-out choice of every learner's defaults on the development suite.

For each learner a small grid of candidate settings (how pairs are drawn from the labels
and how many, slack, rates) is evaluated on every (data set, fold) of the suite under
the suite protocol (``_folds``: 5-fold stratified, ``StandardScaler`` → learner →
5-NN), each fold cached. A setting's score on a data set is the mean over the folds of
``log((error + ε) / (euclidean + ε))``, ε = 0.005: scale-free, 0 for a metric as good
as Euclidean, negative when better. For each held-out data set the setting with the
best mean score over the other data sets is chosen and scored on the held-out one; the
default is the setting chosen on all data sets. Every fold is fitted with three seeds
(``random_state`` 0, 1, 2: the order of the online learners' pairs, the cyclic order,
random pairs); a setting's score is the mean over the random seeds, and the held-out
count is reported for each seed, since one seed of an online learner can be a lucky draw. The
grid runs on the 12 suite sets with d ≤ 100 (the range the defaults must also fit fast
on); MNIST-5000 (d = 784) and the tissue gene expression set (d = 500) are left to the
suite table, where the chosen defaults are scored on them.

POLA, KernelPOLA, SCML and LSML must also fit fast with many classes (issue 37, T5:
every default fit under 2 s CPU at n ≤ 2,000, d ≤ 100, up to 30 classes): a setting is
eligible only if its largest fit CPU over the five training folds of ``synthetic30``
(2,000 × 100, 30 classes; ``bench_many_classes``' set and protocol, ``random_state=0``)
is under ``BUDGET_SECONDS``, and the held-out choices and the default are made among
the eligible settings only.

    python bench/bench_defaults.py            # writes docs/benchmarks/defaults.{json,md}
    python bench/bench_defaults.py --learners LogDet POLA --out /tmp/defaults
    python bench/bench_defaults.py --learners SDML --only SDML   # adds SDML to the page
"""

import math
import os
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

import psdmetric
from _datasets import SUITE
from _folds import N_SPLITS, learner_fold, learner_path, scaled_fold, suite_data
from _harness import Case, knn_error, main
from _render.defaults import SEEDS, setting_text
from _reporting import ERROR_RATIO_EPSILON as EPSILON
from _reporting import log_error_ratio, read_json, write_json
from bench_many_classes import load as load_many_classes

DATASETS = tuple(name for name in SUITE
                 if name not in ("mnist5000", "tissue_gene_expression"))

# Every setting names each knob it varies, so that it does not depend on the defaults.
_PAIRS = ({"n_neighbors": None}, {"n_neighbors": 1}, {"n_neighbors": 3})
_POLA_STOPS = ({"tol": 0.01, "max_iter": 50}, {"tol": 0.001, "max_iter": 200})
# Stops between those two, on the settings with one neighbour: they cost less accuracy
# than tol=0.01 where the CPU budget allows them.
_POLA_MIDDLE_STOPS = ({"tol": 0.007, "max_iter": 100}, {"tol": 0.005, "max_iter": 200})
GRIDS = {
    "LogDet": [{**pairs, "gamma": gamma} for gamma in (1.0, 0.1) for pairs in _PAIRS]
    + [{"n_neighbors": None, "gamma": 0.01}, {"n_neighbors": 3, "gamma": 0.01}],
    # Looser tolerances first: a tie (the same errors on every fold) goes to the first
    # setting, so to the one that stops the cycles soonest.
    "VonNeumann": [{"n_neighbors": 3, "gamma": 0.1, "tol": tol} for tol in (0.1, 0.03, 0.01)]
    + [{**pairs, "gamma": gamma, "tol": 1e-3} for gamma in (1.0, 0.1, 0.01)
       for pairs in ({"n_neighbors": None}, {"n_neighbors": 3})]
    + [{"n_neighbors": 3, "gamma": 0.01, "tol": 0.01}]
    + [{"n_neighbors": 2, "gamma": 0.1, "tol": tol} for tol in (0.01, 1e-3)],
    # gamma is the slack of the mean hinge loss over the pairs (the pull of all pairs).
    "DefiniteBoost": [{**pairs, "gamma": gamma, "dual_correction": True}
                      for gamma in (1.0, 3.0, 10.0, 30.0) for pairs in _PAIRS],
    "MEG": [{**pairs, "max_iter": 20, "tol": tol} for tol in (0.1, 0.03) for pairs in _PAIRS],
    "OnlineLogDet": [{**pairs, "eta": eta} for eta in (1.0, 0.3, 0.1, 0.01, 0.001)
                     for pairs in _PAIRS],
    # Neighbour pairs only: random pairs (40 n_classes² of them, each similar one a d³
    # projection) cannot fit in 2 s on many classes (26 s at 360 × 90, 15 classes).
    # Started from the identity, b₁ sets the margin's share of the median pair distance;
    # the stopping rule (tol, and the max_iter its passes need) is chosen with them.
    "POLA": [{"init": "identity", "n_neighbors": k, "initial_threshold": b, "gamma": gamma,
              **stop}
             for stop in _POLA_STOPS
             for b in (3.0, 10.0) for gamma in (1.0, 10.0) for k in (1, 3)]
    + [{"init": "identity", "n_neighbors": 1, "initial_threshold": 30.0, "gamma": gamma, **stop}
       for stop in _POLA_STOPS for gamma in (1.0, 10.0)]
    + [{"init": "identity", "n_neighbors": 1, "initial_threshold": b, "gamma": gamma, **stop}
       for stop in _POLA_MIDDLE_STOPS for b in (10.0, 30.0) for gamma in (1.0, 10.0)],
}
# POLA's grid, on the default linear kernel: the learner is POLA in feature space.
GRIDS["KernelPOLA"] = GRIDS["POLA"]
# SCML: AdaGrad's rate (metric-learn's is 0.005), the stochastic stopping rule and the
# mini-batch (metric-learn's is 10 triplets); n_iter_no_change=20 runs all of max_iter's
# 20 rounds (metric-learn's SCML does).
GRIDS["SCML"] = [{"gamma": gamma, "tol": tol, "n_iter_no_change": 5, "max_iter": 10000,
                  "batch_size": 10}
                 for tol in (1e-4, 1e-3, 1e-2, 3e-2) for gamma in (0.005, 0.01, 0.02, 0.05)] + [
    {"gamma": gamma, "tol": 1e-4, "n_iter_no_change": 20, "max_iter": 10000, "batch_size": 10}
    for gamma in (0.005, 0.01)] + [
    {"gamma": gamma, "tol": tol, "n_iter_no_change": 5, "max_iter": 40000, "batch_size": 10}
    for tol in (1e-3, 1e-2) for gamma in (0.01, 0.02)] + [
    {"gamma": gamma, "tol": 1e-3, "n_iter_no_change": 5, "max_iter": 40000,
     "batch_size": batch_size}
    for batch_size in (30, 100) for gamma in (0.01, 0.03)]
# MMC: the full matrix (metric-learn's default) or the diagonal one (Xing et al., 2002,
# §2.1), on random pairs (metric-learn's) or neighbour pairs.
GRIDS["MMC"] = [{"diagonal": diagonal, **pairs} for diagonal in (False, True)
                for pairs in _PAIRS]
# LSML: the prior (also the start) and the number of random quadruplets from labels
# (None: metric-learn's 20 n_classes²).
GRIDS["LSML"] = [{"prior": prior, "n_constraints": n} for prior in ("identity", "covariance")
                 for n in (None, 1000, 5000)]
# RCA: the chunklets' size (each class cut into groups of it; metric-learn's is 2).
GRIDS["RCA"] = [{"n_chunks": None, "chunk_size": size} for size in (2, 5, 10, 20)]
# SDML: the pairs' weight against the prior ("auto": C definite by construction), beside
# metric-learn's default (balance_param=0.5 on 40 n_classes² random pairs).
GRIDS["SDML"] = [{"balance_param": "auto", "pair_weight": weight, **pairs}
                 for weight in (0.3, 0.6, 0.9) for pairs in _PAIRS] + [
    {"balance_param": 0.5, "pair_weight": 0.9, "n_neighbors": None}]
# T5's budget, on the learners whose fit can pass it at many classes (their pairs and
# passes grow with the classes): the largest fold's fit CPU on BUDGET_SET.
BUDGETED = ("POLA", "KernelPOLA", "SCML", "LSML")
BUDGET_SET, BUDGET_SECONDS = "synthetic30", 2.0


def build(learner, setting, seed):
    estimator = getattr(psdmetric, learner)(**setting)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=seed)
    return estimator


def euclidean_errors(name):
    errors = []
    for fold in range(N_SPLITS):
        X_train, X_test, y_train, y_test = scaled_fold(name, fold)
        errors.append(knn_error(X_train, y_train, X_test, y_test))
    return errors


def evaluate(learner, setting, name, seed):
    """The folds of one (learner, setting, seed) on one data set (cached by ``_folds``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [learner_fold(name, fold, build(learner, setting, seed))
                for fold in range(N_SPLITS)]


def score(folds, euclidean):
    """Mean log error ratio against Euclidean over the folds; +inf if a fold failed."""
    if any(fold["error"] is None for fold in folds):
        return math.inf
    return log_error_ratio([f["error"] for f in folds], euclidean)


def budget_folds(learner, setting):
    """Fit CPU of ``setting`` (seed 0) per training fold of ``BUDGET_SET``, each cached.

    The folds are measured in order and stop at the first over ``BUDGET_SECONDS``:
    that fold already makes the setting ineligible.
    """
    X, y = load_many_classes(BUDGET_SET)
    records = []
    for fold, (train, _) in enumerate(
            StratifiedKFold(N_SPLITS, shuffle=True, random_state=0).split(X, y)):
        estimator = build(learner, setting, SEEDS[0])
        path = learner_path(BUDGET_SET, fold, estimator)
        record = read_json(path)
        if record is None:
            X_train = StandardScaler().fit_transform(X[train])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cpu = time.process_time()
                estimator.fit(X_train, y[train])
                cpu = time.process_time() - cpu
            record = {"fit_cpu_seconds": cpu, "n_iter": int(estimator.n_iter_),
                      "warned": bool(caught), "load_average": os.getloadavg()[0]}
            write_json(path, record)
        records.append(record)
        if record["fit_cpu_seconds"] >= BUDGET_SECONDS:
            break
    return records


def budget(learner, settings):
    """Per setting: its ``BUDGET_SET`` folds and whether it is eligible."""
    folds = [budget_folds(learner, setting) for setting in settings]
    for setting, records in zip(settings, folds):
        print(f"{learner:14s} {setting_text(setting):36s} {BUDGET_SET} largest fold "
              f"{max(r['fit_cpu_seconds'] for r in records):.2f} s", flush=True)
    return {"set": BUDGET_SET, "seconds": BUDGET_SECONDS, "n_folds": N_SPLITS, "folds": folds,
            "eligible": [len(records) == N_SPLITS
                         and max(r["fit_cpu_seconds"] for r in records) < BUDGET_SECONDS
                         for records in folds]}


def misclassified(test_sizes, errors):
    """Points misclassified over the folds: each fold's error times its size."""
    return int(sum(round(error * size) for error, size in zip(errors, test_sizes)))


def leave_one_out(scores, datasets, candidates=None):
    """For each held-out data set: the candidate setting (default: any) best on the others."""
    candidates = range(len(scores)) if candidates is None else candidates
    held_out = {}
    for name in datasets:
        others = [d for d in datasets if d != name]
        chosen = min(candidates, key=lambda s: np.mean([scores[s][d] for d in others]))
        held_out[name] = chosen
    return held_out


def fold_scores(learner, settings, datasets, euclidean):
    """Every (setting, data set, seed)'s folds, scored as they come."""
    folds = {}
    for index, setting in enumerate(settings):
        for name in datasets:
            for seed in SEEDS:
                start = time.perf_counter()
                folds[index, name, seed] = evaluate(learner, setting, name, seed)
                print(f"{learner:14s} {setting_text(setting):36s} {name:24s} seed {seed} "
                      f"{score(folds[index, name, seed], euclidean[name]):+.3f} "
                      f"[{time.perf_counter() - start:.1f} s]", flush=True)
    scores = [{name: float(np.mean([score(folds[s, name, seed], euclidean[name])
                                    for seed in SEEDS])) for name in datasets}
              for s in range(len(settings))]
    return folds, scores


def held_out_row(name, s, folds, scores, euclidean):
    """The setting chosen without ``name``, scored on it."""
    by_seed = [float(np.mean([f["error"] for f in folds[s, name, seed]])) for seed in SEEDS]
    first = [f["error"] for f in folds[s, name, SEEDS[0]]]
    euclidean_error = float(np.mean(euclidean[name]))
    test_sizes = [len(test) for _, test in suite_data(name)[2]]
    points = [misclassified(test_sizes, [f["error"] for f in folds[s, name, seed]])
              for seed in SEEDS]
    return {
        "chosen": s, "error": float(np.mean(by_seed)), "errors_by_seed": by_seed,
        "error_se": float(np.std(first, ddof=1) / np.sqrt(len(first))),
        "euclidean": euclidean_error, "score": scores[s][name],
        "not_worse_by_seed": [e <= euclidean_error + 1e-12 for e in by_seed],
        "misclassified_by_seed": points,
        "euclidean_misclassified": misclassified(test_sizes, euclidean[name]),
        "n_samples": sum(test_sizes)}


def choose(learner, results):
    """The grid of ``learner`` on every set, its held-out scores and its default."""
    settings, datasets, euclidean = GRIDS[learner], results["datasets"], results["euclidean"]
    folds, scores = fold_scores(learner, settings, datasets, euclidean)
    limits = budget(learner, settings) if learner in BUDGETED else None
    candidates = [s for s in range(len(settings)) if limits is None or limits["eligible"][s]]
    if not candidates:
        raise SystemExit(f"{learner}: no setting fits {BUDGET_SET} in {BUDGET_SECONDS} s")
    held_out = {name: held_out_row(name, s, folds, scores, euclidean)
                for name, s in leave_one_out(scores, datasets, candidates).items()}
    not_worse = [sum(r["not_worse_by_seed"][i] for r in held_out.values())
                 for i in range(len(SEEDS))]
    not_worse_by_count = [
        sum(r["misclassified_by_seed"][i] <= r["euclidean_misclassified"]
            for r in held_out.values()) for i in range(len(SEEDS))]
    cpu = [[np.mean([f.get("fit_cpu_seconds", math.nan)
                     for seed in SEEDS for f in folds[s, name, seed]])
            for name in datasets] for s in range(len(settings))]
    return {
        "settings": settings, "seeds": list(SEEDS),
        "mean_score": [float(np.mean(list(row.values()))) for row in scores],
        "scores": scores,
        "mean_cpu": [float(np.mean(row)) for row in cpu],
        "worst_cpu": [float(np.max(row)) for row in cpu],
        "chosen_on_all": min(candidates, key=lambda s: np.mean(list(scores[s].values()))),
        **({"budget": limits} if limits else {}),
        "held_out": held_out, "n_not_worse_by_seed": not_worse,
        "n_not_worse_by_count_by_seed": not_worse_by_count,
        "fraction_not_worse": float(np.mean(not_worse)) / len(held_out),
        "folds": {f"{s}/{name}/{seed}": folds[s, name, seed] for s, name, seed in folds},
    }


def cases(args):
    return [Case("euclidean", protocol=lambda: {name: euclidean_errors(name)
                                                for name in DATASETS}),
            *(Case(learner, protocol=choose, params={"learner": learner}, into="learners")
              for learner in args.learners)]


def add_arguments(parser):
    parser.add_argument("--learners", nargs="+", choices=list(GRIDS), default=list(GRIDS))


if __name__ == "__main__":
    sys.exit(main("defaults", cases, add_arguments=add_arguments,
                  setup=lambda args: {"datasets": list(DATASETS), "epsilon": EPSILON,
                                      **({} if args.only else {"learners": {}})}))
